// Issue 35's compressible flood: 16 MB bodies of identical spans that gzip
// to ~60 KB. The decode gate makes one flow's requests take turns (under the
// default limits): a flood of concurrent bodies waits behind one slot,
// another tenant's request is served meanwhile, and a request of the flood
// that would wait more than 5 s for its turn is refused 429 unread. And the
// sender is charged the decoded bytes, not the wire's: one body puts a
// tenant with a small limit in debt, and its next body is refused 429 before
// it is read.
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { builtInDefaults, resolveEffective } from '../../../src/tenant/settings/tenant-settings.ts';
import { defaultSettingsView } from '../../../support/fixed-settings.ts';
import type { TenantSettingsView } from '../../../src/tenant/settings/tenant-settings.ts';
import { keys, startTestGateway } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { post, protobufHeaders, statusOf, tracesJson, tracesProtobuf } from './support/payloads.ts';

const MiB = 1024 * 1024;
const smallLimits = ((): TenantSettingsView => {
  const effective = resolveEffective({ api: { limits: { ingestBytesPerSecond: MiB, ingestBurstBytes: 4 * MiB } } }, builtInDefaults);
  return { effective: () => effective, generation: 0 };
})();
const gzipHeaders = (key: string): Record<string, string> => ({ ...protobufHeaders(key), 'content-encoding': 'gzip' });

/** About `bytes` of identical spans of `tenant` (one request repeated: protobuf concatenation appends its resourceSpans). */
function identicalSpans(tenant: string, bytes: number): Buffer {
  const one = tracesProtobuf(tracesJson({ 'tenant.id': tenant, 'service.name': 'flood' }, [{ name: 'identical', attrs: { 'http.route': '/same' } }]));
  return Buffer.concat(Array.from({ length: Math.floor(bytes / one.length) }, () => one));
}

describe('gateway: a compressible flood under the default limits', function () {
  this.timeout(180_000);
  let gw: TestGateway;
  const decoded = identicalSpans('tenant-a', 16 * 1000 * 1000);
  const gz = gzipSync(decoded);

  before(async () => {
    gw = await startTestGateway('compressible_flood', { settings: defaultSettingsView(), maxRequestBytes: 16 * MiB });
  });
  after(async () => {
    await gw.close();
  });

  it("takes turns: another tenant is answered while one flow's bodies wait, and a body that would wait over 5 s is refused 429 unread", async () => {
    // 16 bodies of a key of every tenant (one flow: its key) at once; tenant-c's bucket runs dry after two, the rest still cost their decoding.
    const flood = identicalSpans('tenant-c', 16 * 1000 * 1000);
    const floodGz = gzipSync(flood);
    const answers: { who: string; status: number; message: string; at: number }[] = [];
    const started = performance.now();
    const send = async (who: string, body: Buffer, headers: Record<string, string>): Promise<void> => {
      const reply = await post(`${gw.httpUrl}/v1/traces`, body, headers);
      answers.push({ who, status: reply.status, message: reply.status === 200 ? '' : statusOf(reply.body).message, at: performance.now() - started });
    };
    const sends = Array.from({ length: 16 }, () => send('flood', floodGz, gzipHeaders(keys.admin)));
    // Another tenant (its own key, its own flow) while the flood's bodies wait: a small request, polled for until the flood is under way.
    const small = tracesProtobuf(tracesJson({ 'tenant.id': 'tenant-a' }, [{ name: 'beside-the-flood' }]));
    for (let i = 0; i < 5 && !answers.some((a) => a.who === 'flood'); i++) await send('other', small, protobufHeaders(keys.tenantA));
    await Promise.all(sends);

    const others = answers.filter((a) => a.who === 'other');
    const floods = answers.filter((a) => a.who === 'flood');
    expect(others.length, 'the other tenant was served while the flood waited').to.be.greaterThan(0);
    expect(
      others.every((a) => a.status === 200),
      JSON.stringify(others),
    ).to.equal(true);
    // Answered before the flood's first answer: the other tenant did not wait behind the flood's bodies.
    const firstFlood = Math.min(...floods.map((a) => a.at));
    expect(others.filter((a) => a.at < firstFlood).length).to.be.at.least(3);
    const gated = floods.filter((a) => a.status === 429 && a.message.includes('waited 5000 ms for its turn'));
    expect(gated.length, JSON.stringify(floods.map((a) => [a.status, a.message.slice(0, 60)]))).to.be.greaterThan(0);
    expect(floods.every((a) => a.status === 200 || a.status === 429)).to.equal(true);
  });

  it('charges the decoded bytes: after one 60 KB body the tenant is in debt and refused 429 before its body is read', async () => {
    expect(gz.length).to.be.below(200 * 1024);
    const small = await startTestGateway('compressible_flood_charged', { settings: smallLimits, maxRequestBytes: 16 * MiB });
    try {
      await chargedFlood(small);
    } finally {
      await small.close();
    }
  });

  /** With 1 MiB/s and a 4 MiB burst, one 16 MB body (60 KB on the wire) is ~12 s of debt: the next is refused unread. */
  async function chargedFlood(gw: TestGateway): Promise<void> {
    const started = performance.now();
    let accepted = 0;
    let refusal: { status: number; retryAfter: number; message: string } | undefined;
    for (let i = 0; i < 4 && refusal === undefined; i++) {
      const reply = await post(`${gw.httpUrl}/v1/traces`, gz, gzipHeaders(keys.tenantA));
      if (reply.status === 200) accepted++;
      else refusal = { status: reply.status, retryAfter: Number(reply.headers.get('retry-after')), message: statusOf(reply.body).message };
    }
    const seconds = (performance.now() - started) / 1000;
    expect(refusal?.status, `accepted ${accepted} bodies in ${seconds.toFixed(1)} s`).to.equal(429);
    expect(refusal?.message).to.match(/^tenant "tenant-a" is over its ingest limit \(limits.ingestBytesPerSecond 1048576 bytes\/s/);
    // Charged per decoded byte: the burst plus the rate over the time taken, plus the one body that went into debt.
    expect(accepted * decoded.length).to.be.at.most(4 * MiB + MiB * seconds + decoded.length);
    // At the wire's size (~60 KB each) the 4 MiB burst would take 60 bodies: charging decoded bytes is what refused it.
    expect(accepted).to.be.at.least(1);
    // The debt is what is left of 16 MB at 1 MiB/s.
    expect(refusal?.retryAfter).to.be.at.least(Math.floor((accepted * decoded.length - 4 * MiB) / MiB - seconds));

    // In debt, the key bound to tenant-a is refused before its body: a body announced and never sent is answered at once.
    const unread = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${gw.httpUrl}/v1/traces`,
        { method: 'POST', headers: { ...gzipHeaders(keys.tenantA), 'content-length': String(gz.length) } },
        (res) => {
          resolve(res.statusCode ?? 0);
          res.resume();
          req.destroy();
        },
      );
      req.on('error', (error) => {
        if (!req.destroyed) reject(error);
      });
      req.write(gz.subarray(0, 100));
    });
    expect(unread).to.equal(429);
  }
});
