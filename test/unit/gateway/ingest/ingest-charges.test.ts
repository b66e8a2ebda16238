// What the ingest pipeline charges, stored or not (DESIGN.md section 10):
// the bytes of rate-limited items deepen their tenant's debt; items of no
// tenant the key may write, and undecodable bodies, are charged to the
// sender (the key's only tenant, or the key's own bucket, which refuses the
// key before its next body); a failed write is refunded.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import type { Principal } from '../../../../src/auth/api-keys.ts';
import { fail, ok } from '../../../../src/result.ts';
import type { Result } from '../../../../src/result.ts';
import { builtInDefaults, resolveEffective } from '../../../../src/tenant/settings/tenant-settings.ts';
import type { TenantSettingsView } from '../../../../src/tenant/settings/tenant-settings.ts';
import { gatewayMetrics } from '../../../../gateway/gateway-metrics.ts';
import { defaultDecodeGate, defaultOffloadMinBytes, IngestPipeline } from '../../../../gateway/ingest/ingest-pipeline.ts';
import { defaultItemLimits } from '../../../../gateway/convert/common/item-limits.ts';
import { ConvertPool } from '../../../../gateway/convert/worker/convert-pool.ts';
import { IngestLimiter, keyBucket } from '../../../../gateway/limits/ingest-limiter.ts';
import { RejectedUsage } from '../../../../gateway/limits/rejected-usage.ts';
import type { RejectedRow } from '../../../../gateway/limits/rejected-usage.ts';
import type { DurableWriter, SubmitFailure } from '../../../../gateway/writer/logged-writer.ts';
import { ExportTraceServiceRequest } from '../../../../gateway/wire/otlp-messages.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const rate = 1024;
const burst = 64 * 1024;
const limits = resolveEffective({ api: { limits: { ingestBytesPerSecond: rate, ingestBurstBytes: burst } } }, builtInDefaults);
const settings: TenantSettingsView = { effective: () => limits, generation: 0 };
const everyTenant: Principal = { name: 'all', scopes: new Set(['ingest']), tenants: '*' };
const onlyA: Principal = { name: 'only-a', scopes: new Set(['ingest']), tenants: new Set(['a']) };

/** A protobuf request of `count` spans with padded names, under resource tenant.id `tenant` (none when undefined). */
function spans(tenant: string | undefined, count: number): Buffer {
  const attributes = tenant === undefined ? [] : [{ key: 'tenant.id', value: { stringValue: tenant } }];
  const now = String(BigInt(Date.now()) * 1_000_000n);
  const request = ExportTraceServiceRequest.fromObject({
    resourceSpans: [
      {
        resource: { attributes },
        scopeSpans: [{ spans: Array.from({ length: count }, (_, i) => ({ name: `s${i}-${'x'.repeat(100)}`, startTimeUnixNano: now })) }],
      },
    ],
  });
  return Buffer.from(ExportTraceServiceRequest.encode(request).finish());
}

function setup(written: Result<void, SubmitFailure> = ok(undefined)): {
  pipeline: IngestPipeline;
  limiter: IngestLimiter;
  rows: RejectedRow[];
  usage: RejectedUsage;
} {
  const clock = new ManualClock();
  const limiter = new IngestLimiter(settings, { count: 1 }, clock);
  const rows: RejectedRow[] = [];
  const usage = new RejectedUsage(
    {
      write: (r) => {
        rows.push(...r);
        return Promise.resolve(ok(undefined));
      },
    },
    { flushMs: 60_000 },
    clock,
  );
  const writer: DurableWriter = { submit: () => Promise.resolve(written) };
  const pipeline = new IngestPipeline({
    writer,
    metrics: gatewayMetrics(new Registry(), () => undefined),
    items: defaultItemLimits,
    limits: { limiter, rejected: usage },
    settings,
    gate: defaultDecodeGate(),
    pool: new ConvertPool({ limits: defaultItemLimits, settings }),
    offloadMinBytes: defaultOffloadMinBytes,
  });
  return { pipeline, limiter, rows, usage };
}

/** Converts and ingests `body` as protobuf traces for `principal`. */
async function send(pipeline: IngestPipeline, principal: Principal, body: Buffer): Promise<string> {
  const tenants = pipeline.resolver(principal);
  const converted = pipeline.converters.traces.protobuf.convert(body, tenants);
  if (!converted.ok) return 'invalid';
  return (await pipeline.ingest('traces', converted.value, { tenants, bytes: body.length, protocol: 'http' })).kind;
}

describe('ingest pipeline: charges', () => {
  it('charges a rate-limited tenant the bytes of its refused items, deepening its debt', async () => {
    const { pipeline, limiter } = setup();
    limiter.charge('a', burst + 10 * rate);
    const before = limiter.retryAfterSeconds('a');
    const body = spans('a', 100);
    expect(await send(pipeline, everyTenant, body)).to.equal('rate_limited');
    // Whole seconds each way: the debt grows by the body's bytes, give or take the rounding of both answers.
    expect(limiter.retryAfterSeconds('a')).to.be.within(before + Math.floor(body.length / rate), before + Math.ceil(body.length / rate));
    expect(body.length).to.be.greaterThan(10 * rate);
  });

  it("charges items of no tenant to the key's own bucket, which then refuses the key before its body", async () => {
    const { pipeline } = setup();
    expect(pipeline.refuseUnread(everyTenant, 'http', 'traces')).to.equal(undefined);
    expect(await send(pipeline, everyTenant, spans(undefined, 1000))).to.equal('accepted');
    const refusal = pipeline.refuseUnread(everyTenant, 'http', 'traces');
    expect(refusal?.kind).to.equal('rate_limited');
    expect(refusal?.message).to.match(/^API key "all" is over the ingest limit of the bytes it sent for no tenant/);
    // Another key is not affected.
    expect(pipeline.refuseUnread({ ...everyTenant, name: 'other' }, 'http', 'traces')).to.equal(undefined);
  });

  it("charges items of a tenant the key may not write to the key's only tenant", async () => {
    const { pipeline, limiter } = setup();
    expect(await send(pipeline, onlyA, spans('b', 1000))).to.equal('accepted');
    expect(limiter.admits('b')).to.equal(true);
    expect(limiter.admits('a')).to.equal(false);
    expect(pipeline.refuseUnread(onlyA, 'http', 'traces')?.message).to.match(/^tenant "a" is over its ingest limit/);
  });

  it("charges an undecodable body through the converters, and records it as the tenant's rejected usage", async () => {
    const { pipeline, limiter, rows, usage } = setup();
    expect(await send(pipeline, onlyA, Buffer.alloc(burst * 2))).to.equal('invalid');
    expect(limiter.admits('a')).to.equal(false);
    await usage.flush();
    expect(rows.map((r) => ({ tenant: r.tenant_id, signal: r.signal, reason: r.reason, items: r.items, bytes: r.bytes }))).to.deep.equal([
      { tenant: 'a', signal: 'traces', reason: 'invalid_body', items: 0, bytes: burst * 2 },
    ]);
    expect(await send(pipeline, everyTenant, Buffer.alloc(burst * 2))).to.equal('invalid');
    expect(limiter.admits(keyBucket('all'))).to.equal(false);
  });

  it('refunds the stored items of a failed write', async () => {
    const { pipeline, limiter } = setup(fail({ kind: 'unavailable', message: 'down' }));
    expect(await send(pipeline, everyTenant, spans('a', 1000))).to.equal('unavailable');
    expect(limiter.admits('a')).to.equal(true);
  });
});
