import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { defaultResources, normaliseStackSpec } from '../../../../operator/stack/stack-spec.ts';

const crd = join(import.meta.dirname, '..', '..', '..', '..', 'crds', 'tenantry.dev_observabilitystacks.yaml');

type Schema = { default?: unknown; properties?: Record<string, Schema> };

/** Collects every default of the CRD schema as path → value. */
function crdDefaults(schema: Schema, path: string[] = []): Array<[string, unknown]> {
  const own: Array<[string, unknown]> = schema.default !== undefined && typeof schema.default !== 'object' ? [[path.join('.'), schema.default]] : [];
  return [...own, ...Object.entries(schema.properties ?? {}).flatMap(([k, s]) => crdDefaults(s, [...path, k]))];
}

describe('operator stack spec', () => {
  it('an empty spec gets the documented defaults', () => {
    const s = normaliseStackSpec({});
    expect(s.gateway).to.deep.equal({
      replicas: 2,
      resources: defaultResources.gateway,
      ports: { otlpHttp: 4318, otlpGrpc: 4317 },
      serviceType: 'ClusterIP',
      maxRequestBytes: 16777216,
      autoscaling: { enabled: false, minReplicas: 2, maxReplicas: 10, targetCPUUtilizationPercentage: 70 },
      wal: { volume: 'PersistentVolumeClaim', size: '2Gi', storageClassName: undefined },
    });
    expect(s.topologySpread).to.deep.equal({ zone: 'ScheduleAnyway', hostname: 'ScheduleAnyway', maxSkew: 1 });
    expect(s.networkPolicy).to.deep.equal({ enabled: false });
    expect(s.clickhouse.mode).to.equal('managed');
    expect(s.retention).to.deep.equal({ logsDays: 30, tracesDays: 30, metricsDays: 90 });
    expect(s.tenantSync).to.deep.equal({ enabled: true, intervalSeconds: 60, apiUrl: undefined });
    expect(s.tenantDefaults).to.deep.equal({ limits: {}, retention: {} });
    expect(s.metrics).to.deep.equal({ tenantLabels: false, keySecretRef: undefined });
  });

  it('metrics: the key is a Secret reference (key defaulted), per-tenant labels only when asked for', () => {
    expect(normaliseStackSpec({ metrics: { tenantLabels: true, keySecretRef: { name: 'scrape' } } }).metrics).to.deep.equal({
      tenantLabels: true,
      keySecretRef: { name: 'scrape', key: 'metrics-key' },
    });
    expect(normaliseStackSpec({ metrics: { keySecretRef: { name: 'scrape', key: 'k' } } }).metrics.keySecretRef).to.deep.equal({ name: 'scrape', key: 'k' });
  });

  it('tenantDefaults keeps the known fields the stack sets, nothing else', () => {
    const s = normaliseStackSpec({ tenantDefaults: { limits: { maxQueryDays: 30, ingestBytesPerSecond: 1048576 }, retention: { logsDays: 7 } } });
    expect(s.tenantDefaults).to.deep.equal({ limits: { maxQueryDays: 30, ingestBytesPerSecond: 1048576 }, retention: { logsDays: 7 } });
  });

  it('every scalar default in the CRD schema equals the operator default', () => {
    const doc = parse(readFileSync(crd, 'utf8'), { merge: true }) as { spec: { versions: Array<{ schema: { openAPIV3Schema: Schema } }> } };
    const specSchema = doc.spec.versions[0]?.schema.openAPIV3Schema.properties?.['spec'];
    if (specSchema === undefined) throw new Error('no spec schema');
    const normalised = normaliseStackSpec({
      clickhouse: { managed: {}, external: { secretRef: {} } },
      metrics: { keySecretRef: { name: 'any' } },
    }) as unknown as Record<string, unknown>;
    const at = (path: string): unknown => path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], normalised);
    const defaults = crdDefaults(specSchema).filter(([p]) => !p.startsWith('clickhouse.external'));
    expect(defaults.length).to.be.greaterThan(15);
    for (const [path, value] of defaults) expect(at(path), path).to.equal(value);
  });
});
