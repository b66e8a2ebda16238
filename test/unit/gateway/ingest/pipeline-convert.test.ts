// Where the ingest pipeline converts a body (issue 35): below its offload
// threshold inline, at or above it in the conversion pool, with the same
// outcome either way — a tenant over its limit has its items refused
// (the worker asks the main thread's limiter), an undecodable body is
// charged to its sender. A body whose worker died is unavailable (503 /
// UNAVAILABLE) and charged to nobody: the client sends it again.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import type { Principal } from '../../../../src/auth/api-keys.ts';
import { ok } from '../../../../src/result.ts';
import { builtInDefaults, resolveEffective } from '../../../../src/tenant/settings/tenant-settings.ts';
import type { TenantSettingsView } from '../../../../src/tenant/settings/tenant-settings.ts';
import { defaultItemLimits } from '../../../../gateway/convert/common/item-limits.ts';
import { ConvertPool } from '../../../../gateway/convert/worker/convert-pool.ts';
import { gatewayMetrics } from '../../../../gateway/gateway-metrics.ts';
import { defaultDecodeGate, IngestPipeline } from '../../../../gateway/ingest/ingest-pipeline.ts';
import { IngestLimiter } from '../../../../gateway/limits/ingest-limiter.ts';
import { RejectedUsage } from '../../../../gateway/limits/rejected-usage.ts';
import type { DurableWriter } from '../../../../gateway/writer/logged-writer.ts';
import { ExportTraceServiceRequest } from '../../../../gateway/wire/otlp-messages.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const rate = 1024;
const burst = 64 * 1024;
const limits = resolveEffective({ api: { limits: { ingestBytesPerSecond: rate, ingestBurstBytes: burst } } }, builtInDefaults);
const settings: TenantSettingsView = { effective: () => limits, generation: 0 };
const onlyA: Principal = { name: 'only-a', scopes: new Set(['ingest']), tenants: new Set(['a']) };
const everyTenant: Principal = { name: 'all', scopes: new Set(['ingest']), tenants: '*' };

/** A protobuf request of `count` spans under resource tenant.id `tenant`. */
function spans(tenant: string, count: number): Buffer {
  const now = String(BigInt(Date.now()) * 1_000_000n);
  const request = ExportTraceServiceRequest.fromObject({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'tenant.id', value: { stringValue: tenant } }] },
        scopeSpans: [{ spans: Array.from({ length: count }, (_, i) => ({ name: `s${i}`, startTimeUnixNano: now })) }],
      },
    ],
  });
  return Buffer.from(ExportTraceServiceRequest.encode(request).finish());
}

function setup(pool: ConvertPool, minBytes: number): { pipeline: IngestPipeline; limiter: IngestLimiter } {
  const clock = new ManualClock();
  const limiter = new IngestLimiter(settings, { count: 1 }, clock);
  const usage = new RejectedUsage({ write: () => Promise.resolve(ok(undefined)) }, { flushMs: 60_000 }, clock);
  const writer: DurableWriter = { submit: () => Promise.resolve(ok(undefined)) };
  const metrics = gatewayMetrics(new Registry(), () => undefined);
  const pipeline = new IngestPipeline({
    writer,
    metrics,
    items: defaultItemLimits,
    limits: { limiter, rejected: usage },
    settings,
    gate: defaultDecodeGate(),
    pool,
    offloadMinBytes: minBytes,
  });
  return { pipeline, limiter };
}

describe('ingest pipeline: where conversion runs', function () {
  this.timeout(60_000);
  const pools: ConvertPool[] = [];
  const pool = (workerFile?: URL): ConvertPool => {
    const p = new ConvertPool({ limits: defaultItemLimits, settings, size: 1, workerFile });
    pools.push(p);
    return p;
  };
  after(() => Promise.all(pools.map((p) => p.stop())));

  it('converts a body below the threshold inline (no worker starts) and one at it in the pool, refusing a tenant over its limit either way', async () => {
    const body = spans('a', 50);
    for (const [minBytes, workers] of [
      [body.length + 1, 0],
      [body.length, 1],
    ] as const) {
      const p = pool();
      const { pipeline, limiter } = setup(p, minBytes);
      limiter.charge('a', burst + 10 * rate);
      const tenants = pipeline.resolver(everyTenant);
      const converted = await pipeline.convert('traces', 'protobuf', body, tenants);
      if (!converted.ok) return expect.fail(converted.error.message);
      expect(converted.value.rowCount).to.equal(0);
      expect([...converted.value.rejected.byReason]).to.deep.equal([['rate_limited', 50]]);
      expect(tenants.tenants.get('a')?.refused?.error.reason).to.equal('rate_limited');
      expect(p.workers).to.equal(workers);
    }
  });

  it('charges an undecodable body converted in the pool to its sender, as inline', async () => {
    const { pipeline, limiter } = setup(pool(), 0);
    const converted = await pipeline.convert('traces', 'protobuf', Buffer.alloc(burst * 2), pipeline.resolver(onlyA));
    expect(converted.ok).to.equal(false);
    if (!converted.ok) expect(converted.error.kind).to.equal('invalid');
    expect(limiter.admits('a')).to.equal(false);
  });

  it('answers a body whose worker died unavailable, and charges nobody', async () => {
    const { pipeline, limiter } = setup(pool(new URL('../convert/worker/crashing-worker.ts', import.meta.url)), 0);
    const converted = await pipeline.convert('traces', 'protobuf', Buffer.from('crash'), pipeline.resolver(onlyA));
    expect(converted.ok).to.equal(false);
    if (!converted.ok) {
      expect(converted.error.kind).to.equal('unavailable');
      expect(converted.error.message).to.match(/conversion worker stopped/);
    }
    expect(limiter.admits('a')).to.equal(true);
  });
});
