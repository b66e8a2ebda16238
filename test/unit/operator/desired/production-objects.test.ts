// The production options of a stack's serving pods: HorizontalPodAutoscalers,
// topology spread constraints and the NetworkPolicy set, as desired objects.
import { expect } from 'chai';
import { desiredObjects, objectKey } from '../../../../operator/desired/desired-state.ts';
import type {
  Deployment,
  HorizontalPodAutoscaler,
  Manifest,
  NetworkPolicy,
  PodDisruptionBudget,
  StatefulSet,
} from '../../../../operator/desired/manifest-types.ts';
import { inputs, stackOf } from './stack-fixtures.ts';

const byKey = (objects: Manifest[], key: string): Manifest | undefined => objects.find((o) => objectKey(o) === key);
const keysOf = (objects: Manifest[], kind: string): string[] => objects.filter((o) => o.kind === kind).map(objectKey);

describe('operator production options', () => {
  describe('HorizontalPodAutoscaler', () => {
    it('none by default; the StatefulSet and the Deployment carry the spec replicas', () => {
      const objects = desiredObjects(stackOf('demo', { gateway: { replicas: 3 } }), inputs);
      expect(keysOf(objects, 'HorizontalPodAutoscaler')).to.deep.equal([]);
      expect((byKey(objects, 'StatefulSet/demo-gateway') as StatefulSet).spec?.replicas).to.equal(3);
    });

    it("enabled: an autoscaling/v2 HPA on CPU per component (the gateway's scaling its StatefulSet), and the workloads leave replicas to it", () => {
      const spec = {
        gateway: { replicas: 3, autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 12, targetCPUUtilizationPercentage: 60 } },
        api: { autoscaling: { enabled: true } },
      };
      const objects = desiredObjects(stackOf('demo', spec), inputs);
      expect(keysOf(objects, 'HorizontalPodAutoscaler')).to.deep.equal(['HorizontalPodAutoscaler/demo-gateway', 'HorizontalPodAutoscaler/demo-api']);
      const hpa = byKey(objects, 'HorizontalPodAutoscaler/demo-gateway') as HorizontalPodAutoscaler;
      expect(hpa.apiVersion).to.equal('autoscaling/v2');
      expect(hpa.spec).to.deep.equal({
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'demo-gateway' },
        minReplicas: 3,
        maxReplicas: 12,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }],
      });
      expect((byKey(objects, 'HorizontalPodAutoscaler/demo-api') as HorizontalPodAutoscaler).spec).to.include({ minReplicas: 2, maxReplicas: 10 });
      // Server-side apply would reset a field the operator stops sending to its default only if it still owned it; it never sends it.
      for (const key of ['StatefulSet/demo-gateway', 'Deployment/demo-api']) expect((byKey(objects, key) as Deployment).spec).to.not.have.property('replicas');
      expect(hpa.metadata?.ownerReferences?.[0]?.kind).to.equal('ObservabilityStack');
    });

    it('the disruption budget follows the HPA minimum, not the ignored replicas', () => {
      const scaled = desiredObjects(stackOf('demo', { api: { replicas: 1, autoscaling: { enabled: true, minReplicas: 2 } } }), inputs);
      expect((byKey(scaled, 'PodDisruptionBudget/demo-api') as PodDisruptionBudget).spec?.maxUnavailable).to.equal(1);
      const single = desiredObjects(stackOf('demo', { api: { replicas: 3, autoscaling: { enabled: true, minReplicas: 1 } } }), inputs);
      expect(byKey(single, 'PodDisruptionBudget/demo-api')).to.equal(undefined);
    });
  });

  describe('topology spread', () => {
    const kindOf = (name: string): string => (name === 'demo-gateway' ? 'StatefulSet' : 'Deployment');
    const constraints = (spec: unknown, name = 'demo-gateway'): unknown =>
      (byKey(desiredObjects(stackOf('demo', spec), inputs), `${kindOf(name)}/${name}`) as Deployment).spec?.template.spec?.topologySpreadConstraints;

    it('by default spreads gateway and API pods over zones and nodes without ever blocking scheduling', () => {
      for (const name of ['demo-gateway', 'demo-api']) {
        const component = name.slice('demo-'.length);
        expect(constraints({}, name)).to.deep.equal(
          ['topology.kubernetes.io/zone', 'kubernetes.io/hostname'].map((topologyKey) => ({
            maxSkew: 1,
            topologyKey,
            whenUnsatisfiable: 'ScheduleAnyway',
            labelSelector: {
              matchLabels: { 'app.kubernetes.io/name': 'tenantry', 'app.kubernetes.io/instance': 'demo', 'app.kubernetes.io/component': component },
            },
            // A StatefulSet's pods carry their revision, a Deployment's their ReplicaSet's hash.
            matchLabelKeys: [component === 'gateway' ? 'controller-revision-hash' : 'pod-template-hash'],
          })),
        );
      }
    });

    it('is configurable per key, and Off removes a key or all of them', () => {
      const c = constraints({ topologySpread: { zone: 'DoNotSchedule', hostname: 'Off', maxSkew: 2 } }) as Array<Record<string, unknown>>;
      expect(c.map((x) => [x['topologyKey'], x['whenUnsatisfiable'], x['maxSkew']])).to.deep.equal([['topology.kubernetes.io/zone', 'DoNotSchedule', 2]]);
      expect(constraints({ topologySpread: { zone: 'Off', hostname: 'Off' } })).to.equal(undefined);
    });
  });

  describe('NetworkPolicy', () => {
    const policies = (spec: unknown): NetworkPolicy[] =>
      desiredObjects(stackOf('demo', spec), inputs).filter((o): o is NetworkPolicy => o.kind === 'NetworkPolicy');
    const stackPods = [{ from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/managed-by': 'tenantry-operator', 'tenantry.dev/stack': 'demo' } } }] }];

    it('none unless enabled', () => {
      expect(policies({})).to.deep.equal([]);
    });

    it('enabled, single ClickHouse: OTLP ports and the API port open, ClickHouse only from the stack, migrate closed; applied before anything else', () => {
      const spec = { networkPolicy: { enabled: true }, gateway: { ports: { otlpHttp: 14318, otlpGrpc: 14317 } } };
      const all = desiredObjects(stackOf('demo', spec), inputs);
      const p = policies(spec);
      expect(
        all.slice(0, p.length).map((o) => o.kind),
        'policies first',
      ).to.deep.equal(p.map(() => 'NetworkPolicy'));
      expect(p.map(objectKey)).to.deep.equal([
        'NetworkPolicy/demo-gateway',
        'NetworkPolicy/demo-api',
        'NetworkPolicy/demo-migrate',
        'NetworkPolicy/demo-clickhouse',
      ]);
      const of = (name: string): NetworkPolicy['spec'] => (p.find((x) => x.metadata.name === name) as NetworkPolicy).spec;
      expect(of('demo-gateway')).to.deep.equal({
        podSelector: { matchLabels: { 'app.kubernetes.io/name': 'tenantry', 'app.kubernetes.io/instance': 'demo', 'app.kubernetes.io/component': 'gateway' } },
        policyTypes: ['Ingress'],
        ingress: [
          {
            ports: [
              { protocol: 'TCP', port: 14318 },
              { protocol: 'TCP', port: 14317 },
            ],
          },
        ],
      });
      expect(of('demo-api').ingress).to.deep.equal([{ ports: [{ protocol: 'TCP', port: 8080 }] }]);
      expect(of('demo-migrate').ingress).to.deep.equal([]);
      expect(of('demo-clickhouse')).to.deep.equal({
        podSelector: {
          matchLabels: { 'app.kubernetes.io/name': 'clickhouse', 'app.kubernetes.io/instance': 'demo', 'app.kubernetes.io/component': 'clickhouse' },
        },
        policyTypes: ['Ingress'],
        ingress: stackPods,
      });
    });

    it('the peers allowed into ClickHouse select every pod of the stack and none of another stack', () => {
      const objects = desiredObjects(stackOf('demo', { networkPolicy: { enabled: true }, clickhouse: { managed: { shards: 2, replicas: 2 } } }), inputs);
      const peer = stackPods[0]?.from[0]?.podSelector.matchLabels ?? {};
      const podLabels = objects.flatMap((o) => {
        const template = (o as Deployment).spec?.template;
        return template === undefined ? [] : [[objectKey(o), template.metadata?.labels ?? {}] as const];
      });
      expect(podLabels.map(([k]) => k)).to.include.members([
        'StatefulSet/demo-gateway',
        'Deployment/demo-api',
        'StatefulSet/demo-clickhouse-s0',
        'StatefulSet/demo-clickhouse-keeper',
      ]);
      for (const [key, labels] of podLabels) expect(labels, key).to.include(peer);
      const other = desiredObjects(stackOf('other', {}), inputs).find((o) => o.kind === 'Deployment') as Deployment;
      expect(other.spec?.template.metadata?.labels).to.not.include(peer);
    });

    it('a replicated ClickHouse also gets a Keeper policy; an external one gets neither', () => {
      expect(policies({ networkPolicy: { enabled: true }, clickhouse: { managed: { shards: 2 } } }).map(objectKey)).to.include.members([
        'NetworkPolicy/demo-clickhouse',
        'NetworkPolicy/demo-clickhouse-keeper',
      ]);
      const external = policies({
        networkPolicy: { enabled: true },
        clickhouse: { mode: 'external', external: { url: 'https://ch:8443', secretRef: { name: 'ch' } } },
      });
      expect(external.map(objectKey)).to.deep.equal(['NetworkPolicy/demo-gateway', 'NetworkPolicy/demo-api', 'NetworkPolicy/demo-migrate']);
    });
  });
});
