// The conversion pool (gateway/convert/worker/) against inline conversion:
// for random OTLP requests of every signal in both wire formats, with a
// tenant the limiter refuses and per-tenant retention from tenant settings,
// a worker writes the same RowBinary rows, row count, rejections (counts,
// reasons, message, truncations) and tenants as the main thread's
// converters; undecodable bodies fail with the same message. A worker that
// dies mid-job answers its job unavailable and is replaced; a stopped pool
// answers unavailable.
import { expect } from 'chai';
import fc from 'fast-check';
import { defaultItemLimits } from '../../../../../gateway/convert/common/item-limits.ts';
import { hasTruncations } from '../../../../../gateway/convert/common/item-tally.ts';
import { TenantResolver } from '../../../../../gateway/convert/common/tenant-resolver.ts';
import { LogIdGenerator } from '../../../../../gateway/convert/logs/log-id.ts';
import { rowConverters } from '../../../../../gateway/convert/row-converters.ts';
import { ConvertPool } from '../../../../../gateway/convert/worker/convert-pool.ts';
import type { SignalName, WireFormat } from '../../../../../gateway/wire/otlp-messages.ts';
import { builtInDefaults, resolveEffective } from '../../../../../src/tenant/settings/tenant-settings.ts';
import type { TenantSettingsView } from '../../../../../src/tenant/settings/tenant-settings.ts';
import { encoders, nouns, otlpJson, principal, requests } from '../../support/otlp-arbitraries.ts';
import { rowDifference } from '../../support/row-binary-reader.ts';

const nowMs = 1_700_000_000_000;
const bodyOf = (signal: SignalName, format: WireFormat, request: object): Buffer =>
  format === 'protobuf' ? Buffer.from(encoders[signal](request)) : Buffer.from(otlpJson(request));

/** t1 keeps everything 2 days, everyone else the defaults: the retention a worker must ask the main thread for. */
function settingsView(asked: string[]): TenantSettingsView {
  return {
    effective: (tenant) => {
      asked.push(tenant);
      const days = tenant === 't1' ? 2 : undefined;
      return resolveEffective(days === undefined ? {} : { api: { retention: { logsDays: days, tracesDays: days, metricsDays: days } } }, builtInDefaults);
    },
    generation: 1,
  };
}

/** A resolver whose limiter refuses t2 and records each question. */
function resolver(asked: string[]): TenantResolver {
  return new TenantResolver(principal, {
    admits: (tenant) => {
      asked.push(tenant);
      return tenant !== 't2';
    },
  });
}

describe('conversion pool', function () {
  this.timeout(120_000);
  const askedSettings: string[] = [];
  const settings = settingsView(askedSettings);
  // One worker and one inline id generator of the same prefix, both used in order: log ids match.
  const pool = new ConvertPool({ limits: defaultItemLimits, settings, size: 1, now: () => nowMs, logIdProcess: '0000000000' });
  const inline = rowConverters(new LogIdGenerator('0000000000'), () => nowMs, defaultItemLimits, settings);
  after(() => pool.stop());

  for (const signal of ['traces', 'logs', 'metrics'] as const) {
    for (const format of ['protobuf', 'json'] as const) {
      it(`converts ${signal} from ${format} exactly as inline conversion does`, async () => {
        await fc.assert(
          fc.asyncProperty(requests[signal], async (request) => {
            const body = bodyOf(signal, format, request);
            const inlineAsked: string[] = [];
            const inlineTenants = resolver(inlineAsked);
            const settingsFrom = askedSettings.length;
            const expected = inline[signal][format].convert(body, inlineTenants);
            const inlineSettings = askedSettings.splice(settingsFrom);
            const pooledAsked: string[] = [];
            const pooledTenants = resolver(pooledAsked);
            const got = await pool.convert(signal, format, body, pooledTenants, 'flow');
            expect(askedSettings.splice(settingsFrom), 'settings asked').to.deep.equal(inlineSettings);
            expect(pooledAsked, 'admission asked').to.deep.equal(inlineAsked);
            expect([...pooledTenants.tenants]).to.deep.equal([...inlineTenants.tenants]);
            if (!expected.ok) {
              expect(got.ok).to.equal(false);
              if (!got.ok) expect(got.error).to.deep.equal({ kind: 'invalid', message: expected.error });
              return;
            }
            if (!got.ok) return expect.fail(got.error.message);
            const [e, g] = [expected.value, got.value];
            expect(g.table).to.equal(e.table);
            expect(g.rowCount).to.equal(e.rowCount);
            expect(g.rows.equals(e.rows), rowDifference(e.table, e.rows, g.rows)).to.equal(true);
            expect(g.rejected.count).to.equal(e.rejected.count);
            expect([...g.rejected.byReason]).to.deep.equal([...e.rejected.byReason]);
            expect(g.rejected.message(nouns[signal])).to.equal(e.rejected.message(nouns[signal]));
            expect(hasTruncations(g.rejected) && hasTruncations(e.rejected)).to.equal(true);
            if (hasTruncations(g.rejected) && hasTruncations(e.rejected)) expect([...g.rejected.truncated]).to.deep.equal([...e.rejected.truncated]);
          }),
          { numRuns: 150 },
        );
      });
    }
  }

  it('answers an undecodable body with the inline message, and keeps the tenants found before the error', async () => {
    const valid = Buffer.from(encoders.traces({ resourceSpans: [{ resource: { attributes: [{ key: 'tenant.id', value: { stringValue: 't1' } }] } }] }));
    const cut = Buffer.concat([valid, Buffer.from([0x0a, 0x7f])]);
    for (const body of [cut, Buffer.from([0, 0, 0, 0])]) {
      const inlineTenants = resolver([]);
      const expected = inline.traces.protobuf.convert(body, inlineTenants);
      expect(expected.ok).to.equal(false);
      const tenants = resolver([]);
      const got = await pool.convert('traces', 'protobuf', body, tenants, 'flow');
      expect([...tenants.tenants]).to.deep.equal([...inlineTenants.tenants]);
      expect(got).to.deep.equal({ ok: false, error: { kind: 'invalid', message: expected.ok ? '' : expected.error } });
    }
  });

  it('converts owned chunks (moved whole buffers, copied slices) as the joined body, and detaches only the whole buffers', async () => {
    const spans = Array.from({ length: 400 }, (_, i) => ({ name: `span-${i}`, startTimeUnixNano: String(BigInt(nowMs) * 1_000_000n) }));
    const body = Buffer.from(
      encoders.traces({ resourceSpans: [{ resource: { attributes: [{ key: 'tenant.id', value: { stringValue: 't1' } }] }, scopeSpans: [{ spans }] }] }),
    );
    const expected = inline.traces.protobuf.convert(body, resolver([]));
    if (!expected.ok) return expect.fail(expected.error);
    // A whole buffer, a slice of a larger one, and the rest as another whole buffer.
    const whole = new Uint8Array(new ArrayBuffer(1000));
    whole.set(body.subarray(0, 1000));
    const shared = Buffer.from(body.subarray(0, 3000));
    const slice = shared.subarray(1000, 3000);
    const rest = new Uint8Array(body.length - 3000);
    rest.set(body.subarray(3000));
    const got = await pool.convert('traces', 'protobuf', { chunks: [whole, slice, rest], length: body.length }, resolver([]), 'flow');
    if (!got.ok) return expect.fail(got.error.message);
    expect(got.value.rows.equals(expected.value.rows)).to.equal(true);
    expect(got.value.rowCount).to.equal(400);
    expect([whole.byteLength, rest.byteLength, slice.byteLength]).to.deep.equal([0, 0, 2000]);
  });

  it('answers a job whose worker died unavailable, replaces the worker, and converts the next job', async () => {
    const crashing = new ConvertPool({ limits: defaultItemLimits, size: 1, workerFile: new URL('./crashing-worker.ts', import.meta.url) });
    try {
      const died = await crashing.convert('traces', 'protobuf', Buffer.from('crash'), resolver([]), 'flow');
      expect(died.ok).to.equal(false);
      if (!died.ok) {
        expect(died.error.kind).to.equal('unavailable');
        expect(died.error.message).to.match(/conversion worker stopped \(exit code 3\)/);
      }
      expect(crashing.lostJobs).to.equal(1);
      expect(crashing.workers).to.equal(1);
      const body = Buffer.from(
        encoders.traces({
          resourceSpans: [
            {
              resource: { attributes: [{ key: 'tenant.id', value: { stringValue: 't1' } }] },
              scopeSpans: [{ spans: [{ name: 's', startTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n) }] }],
            },
          ],
        }),
      );
      const next = await crashing.convert('traces', 'protobuf', body, resolver([]), 'flow');
      expect(next.ok && next.value.rowCount).to.equal(1);
    } finally {
      await crashing.stop();
    }
  });

  it('ends a worker whose job runs past jobTimeoutMs, answers the job unavailable, and converts the next job on a new worker', async () => {
    const exits: string[] = [];
    const hanging = new ConvertPool({
      limits: defaultItemLimits,
      size: 1,
      jobTimeoutMs: 300,
      workerFile: new URL('./crashing-worker.ts', import.meta.url),
      onWorkerExit: (code, error) => {
        exits.push(`${code}: ${error?.message ?? ''}`);
      },
    });
    try {
      const hung = await hanging.convert('traces', 'protobuf', Buffer.from('hang'), resolver([]), 'flow');
      expect(hung.ok).to.equal(false);
      if (!hung.ok) expect(hung.error.kind).to.equal('unavailable');
      expect(exits).to.deep.equal(['1: a conversion ran longer than 300 ms']);
      const next = await hanging.convert('traces', 'protobuf', Buffer.from(encoders.traces({ resourceSpans: [] })), resolver([]), 'flow');
      expect(next.ok && next.value.rowCount).to.equal(0);
    } finally {
      await hanging.stop();
    }
  });

  it('answers jobs queued or converting when it stops unavailable, and every later job too', async () => {
    const stopping = new ConvertPool({ limits: defaultItemLimits, size: 1 });
    const body = Buffer.from(encoders.traces({ resourceSpans: [{ resource: { attributes: [{ key: 'tenant.id', value: { stringValue: 't1' } }] } }] }));
    const jobs = [1, 2, 3].map(() => stopping.convert('traces', 'protobuf', body, resolver([]), 'flow'));
    await stopping.stop();
    for (const job of await Promise.all(jobs)) expect(job).to.deep.equal({ ok: false, error: { kind: 'unavailable', message: 'the gateway is stopping' } });
    expect(stopping.workers).to.equal(0);
    expect(await stopping.convert('traces', 'protobuf', body, resolver([]), 'flow')).to.deep.equal({
      ok: false,
      error: { kind: 'unavailable', message: 'the gateway is stopping' },
    });
  });
});
