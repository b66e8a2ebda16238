// Suite (1): Tenantry's own image (built from the Dockerfile by
// testcontainers) as `migrate`, `gateway` and `api`, configured exactly as the
// operator configures a stack on an external ClickHouse, in front of one
// ClickHouse server from the official image. Runs where a Docker engine is
// reachable (`npm run test:containers`, and `npm test`); elsewhere it skips,
// saying why.
import { ClickHouseContainer } from '@testcontainers/clickhouse';
import type { StartedClickHouseContainer } from '@testcontainers/clickhouse';
import { skipBecause } from '../support/skip-unless-found.ts';
import type { FlowTarget } from './acceptance-flows.ts';
import { acceptanceFlows } from './acceptance-flows.ts';
import type { RunningStack } from './docker-stack.ts';
import { buildTenantryImage, dockerEngine, randomText, runningStack } from './docker-stack.ts';
import type { ContainerDefinition } from './pod-containers.ts';
import { clickhouseServerImage, externalSecret, keysSecret, ofComponent, serverStack, stackContainers, suiteKeys } from './stack-definitions.ts';

const serverAlias = 'clickhouse-server';

describe("containers: Tenantry's image on one ClickHouse server", function () {
  this.timeout(1_200_000);
  let stack: RunningStack | undefined;
  let server: StartedClickHouseContainer | undefined;
  let defs: ContainerDefinition[] = [];
  const keys = suiteKeys(randomText);
  let target: FlowTarget | undefined;

  before(async function () {
    const engine = await dockerEngine();
    if (!engine.ok) {
      skipBecause(this, 'no Docker engine', engine.reason);
      return;
    }
    const image = await buildTenantryImage();
    const running = await runningStack();
    stack = running;
    const password = randomText();
    server = await new ClickHouseContainer(clickhouseServerImage)
      .withNetwork(running.network)
      .withNetworkAliases(serverAlias)
      .withUsername('tenantry')
      .withPassword(password)
      .start();
    const credentials = {
      adminKey: randomText(),
      clickhousePassword: randomText(),
      clickhouseDdlPassword: randomText(),
      interserverPassword: randomText(),
      clusterSecret: randomText(),
      keeperPassword: randomText(),
    };
    defs = stackContainers(serverStack(`http://${serverAlias}:8123`), credentials, [keysSecret(keys), externalSecret('tenantry', password)], image);
    const [migrate] = ofComponent(defs, 'migrate');
    if (migrate === undefined) throw new Error('bug: the operator rendered no migrate Job');
    await running.runToCompletion(migrate);
    await running.start([...ofComponent(defs, 'gateway'), ...ofComponent(defs, 'api')]);
    const [gateway] = ofComponent(defs, 'gateway');
    const [api] = ofComponent(defs, 'api');
    if (gateway === undefined || api === undefined) throw new Error('bug: no gateway or API');
    const clickhouse = server;
    target = {
      keys,
      gatewayHttpUrl: () => running.url(gateway.name, 4318),
      gatewayGrpcUrl: () => running.url(gateway.name, 4317),
      apiUrl: () => running.url(api.name, 8080),
      restartAll: async () => {
        await clickhouse.restart();
        for (const name of [gateway.name, api.name]) await running.containers.get(name)?.restart();
      },
      killOneServer: async () => {
        // docker stop -t 0: SIGKILL at once, the container kept for the revival.
        await clickhouse.stop({ timeout: 0, remove: false });
        return async () => {
          await clickhouse.restart();
        };
      },
      rerunMigrate: () => running.runToCompletion(migrate),
    };
  });

  after(async () => {
    await stack?.stop();
    await server?.stop();
  });

  acceptanceFlows(() => {
    if (target === undefined) throw new Error('bug: the stack did not start');
    return target;
  });
});
