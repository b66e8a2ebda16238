// Suite (2): a replicated ClickHouse exactly as the operator runs it (2 shards
// × 2 replicas and 3 Keepers, the images, commands, environment, DNS names and
// ClickHouse/Keeper configuration files of its StatefulSets, rendered by the
// operator's own desiredObjects), with Tenantry's image as migrate, gateway
// and api (TENANTRY_CLICKHOUSE_CLUSTER set, as the operator sets it). The
// shared acceptance flows, then the operator's 2×2 → 3×2 change: the servers
// restarted on the new configuration, shard s2 added, migrate re-run, and
// every item old and new queryable. Skips, saying why, without a Docker engine.
import { expect } from 'chai';
import { skipBecause } from '../support/skip-unless-found.ts';
import type { FlowTarget } from './acceptance-flows.ts';
import { acceptanceFlows, api } from './acceptance-flows.ts';
import type { RunningStack } from './docker-stack.ts';
import { buildTenantryImage, dockerEngine, randomText, runningStack } from './docker-stack.ts';
import type { ContainerDefinition } from './pod-containers.ts';
import { clusterStack, keysSecret, ofComponent, stackContainers, suiteKeys } from './stack-definitions.ts';
import { makeSpans, sendSpans } from '../integration/gateway/support/otel-clients.ts';

describe("containers: Tenantry's image on a 2×2 ClickHouse cluster with 3 Keepers, as the operator configures it", function () {
  this.timeout(1_800_000);
  let stack: RunningStack | undefined;
  let image = '';
  const keys = suiteKeys(randomText);
  const credentials = {
    adminKey: randomText(),
    clickhousePassword: randomText(),
    clickhouseDdlPassword: randomText(),
    interserverPassword: randomText(),
    clusterSecret: randomText(),
    keeperPassword: randomText(),
  };
  const render = (shards: number): ContainerDefinition[] => stackContainers(clusterStack(shards, 2), credentials, [keysSecret(keys)], image);
  let target: FlowTarget | undefined;

  /** The one definition of a component, or a bug. */
  const single = (defs: readonly ContainerDefinition[], component: string): ContainerDefinition => {
    const [d] = ofComponent(defs, component);
    if (d === undefined) throw new Error(`bug: the operator rendered no ${component}`);
    return d;
  };

  before(async function () {
    const engine = await dockerEngine();
    if (!engine.ok) {
      skipBecause(this, 'no Docker engine', engine.reason);
      return;
    }
    image = await buildTenantryImage();
    const running = await runningStack();
    stack = running;
    const defs = render(2);
    await running.start(ofComponent(defs, 'clickhouse-keeper'));
    await running.start(ofComponent(defs, 'clickhouse'));
    await running.runToCompletion(single(defs, 'migrate'));
    const gateway = single(defs, 'gateway');
    const apiDef = single(defs, 'api');
    await running.start([gateway, apiDef]);
    const servers = ofComponent(defs, 'clickhouse');
    target = {
      keys,
      gatewayHttpUrl: () => running.url(gateway.name, 4318),
      gatewayGrpcUrl: () => running.url(gateway.name, 4317),
      apiUrl: () => running.url(apiDef.name, 8080),
      restartAll: async () => {
        for (const s of servers) await running.containers.get(s.name)?.restart();
        for (const name of [gateway.name, apiDef.name]) await running.containers.get(name)?.restart();
      },
      killOneServer: async () => {
        const victim = running.containers.get('tt-clickhouse-s1-1');
        if (victim === undefined) throw new Error('bug: no replica s1-1');
        // docker stop -t 0: SIGKILL at once; the container is kept for the revival.
        await victim.stop({ timeout: 0, remove: false });
        return async () => {
          await victim.restart();
        };
      },
      rerunMigrate: () => running.runToCompletion(single(render(2), 'migrate')),
    };
  });

  after(async () => {
    await stack?.stop();
  });

  acceptanceFlows(() => {
    if (target === undefined) throw new Error('bug: the stack did not start');
    return target;
  });

  it("follows the operator's 2×2 → 3×2 change: new configuration, shard s2, migrate, every item queryable", async () => {
    const running = stack;
    const t = target;
    if (running === undefined || t === undefined) throw new Error('bug: the stack did not start');
    const window = { startTime: Math.floor(Date.now() / 1000) - 3600, endTime: Math.floor(Date.now() / 1000) + 60 };
    const count = async (): Promise<number> => {
      const reply = await api(t.apiUrl(), t.keys.readA, 'POST', '/v1/tenants/tenant-a/traces', { ...window, pagination: { limit: 1000 } });
      return reply.status === 200 ? (reply.json as { data: unknown[] }).data.length : -1;
    };
    const before = await count();
    const after = render(3);
    // The operator's checksum annotation rolls every server onto the new configuration; the new shard's pods start.
    for (const def of ofComponent(after, 'clickhouse')) {
      const existing = running.containers.get(def.name);
      if (existing === undefined) continue;
      await existing.copyContentToContainer(def.files.map((f) => ({ content: f.content, target: f.path, mode: 0o644 })));
      await existing.restart();
    }
    await running.start(ofComponent(after, 'clickhouse').filter((d) => !running.containers.has(d.name)));
    const log = await running.runToCompletion(single(after, 'migrate'));
    expect(log).to.contain('schema is current');
    const tables = async (name: string): Promise<string> => {
      const c = running.containers.get(name);
      if (c === undefined) throw new Error(`no ${name}`);
      const query = "SELECT groupArray(name) FROM (SELECT name FROM system.tables WHERE database = 'tenantry' ORDER BY name)";
      return (await c.exec(['sh', '-c', `clickhouse-client --user tenantry_ddl --password "$CLICKHOUSE_DDL_PASSWORD" -q "${query}"`])).output.trim();
    };
    expect(await tables('tt-clickhouse-s2-0')).to.equal(await tables('tt-clickhouse-s0-0'));
    const spans = makeSpans(
      { 'tenant.id': 'tenant-a', 'service.name': 'after-resharding' },
      Array.from({ length: 30 }, (_, i) => ({ n: i })),
    );
    const sent = await sendSpans('http/protobuf', { httpUrl: t.gatewayHttpUrl(), grpcUrl: t.gatewayGrpcUrl(), key: t.keys.ingest }, spans);
    expect(sent.code).to.equal(0);
    // Bounded poll: the rows become queryable after the gateway's INSERT, in another container that reports nothing.
    const deadline = Date.now() + 120_000;
    while ((await count()) < before + spans.length) {
      if (Date.now() > deadline) throw new Error(`not all ${before + spans.length} spans queryable after the change`);
      await new Promise((r) => setTimeout(r, 500));
    }
  });
});
