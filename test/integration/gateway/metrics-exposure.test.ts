// What the ingest port's /metrics tells whoever reaches it. A key that may
// write only tenant-a sends items for 30 tenants it may not write: none of
// those names appears in /metrics, whether per-tenant labels are on or off;
// with them off (the default) no tenant id appears at all; with them on,
// only tenants whose items were accepted have a label. And with
// TENANTRY_METRICS_KEY set, /metrics asks for that key (probes do not).
import { expect } from 'chai';
import { defaultListenerLimits } from '../../../src/ops/listener-limits.ts';
import { keys, startTestGateway } from './support/gateway-harness.ts';
import type { HarnessOptions, TestGateway } from './support/gateway-harness.ts';
import { post, protobufHeaders, tracesJson, tracesProtobuf } from './support/payloads.ts';

const forged = Array.from({ length: 30 }, (_, i) => `planted-${i}`);

/** Sends one accepted span of tenant-a and, per forged tenant, one span the key may not write; answers /metrics. */
async function plantAndScrape(gw: TestGateway): Promise<string> {
  for (const tenant of ['tenant-a', ...forged]) {
    const reply = await post(`${gw.httpUrl}/v1/traces`, tracesProtobuf(tracesJson({ 'tenant.id': tenant }, [{ name: 'op' }])), protobufHeaders(keys.tenantA));
    expect(reply.status, tenant).to.equal(200);
  }
  return (await fetch(`${gw.httpUrl}/metrics`)).text();
}

const tenantLines = (metrics: string): string[] => metrics.split('\n').filter((l) => l.startsWith('tenantry_gateway_tenant_'));

describe('gateway: /metrics exposure', function () {
  this.timeout(60_000);

  async function withGateway(prefix: string, options: HarnessOptions, run: (gw: TestGateway) => Promise<void>): Promise<void> {
    const gw = await startTestGateway(prefix, options);
    try {
      await run(gw);
    } finally {
      await gw.close();
    }
  }

  it('names no tenant by default (TENANTRY_METRICS_TENANT_LABELS off): every tenant counts under __all__', async () => {
    await withGateway('metrics_exposure_off', {}, async (gw) => {
      const metrics = await plantAndScrape(gw);
      for (const name of ['tenant-a', ...forged]) expect(metrics, name).not.to.contain(name);
      expect(metrics).to.match(/tenantry_gateway_tenant_accepted_items_total\{tenant="__all__",signal="traces"\} 1\n/);
      expect(metrics).to.match(/tenantry_gateway_tenant_rejected_items_total\{tenant="__all__",signal="traces",reason="tenant_not_allowed"\} 30\n/);
    });
  });

  it('with per-tenant labels on, labels only tenants with accepted items: names sent for tenants the key may not write are not planted', async () => {
    await withGateway('metrics_exposure_on', { metricsTenantLabels: true }, async (gw) => {
      const metrics = await plantAndScrape(gw);
      for (const name of forged) expect(metrics, name).not.to.contain(name);
      expect(metrics).to.match(/tenantry_gateway_tenant_accepted_items_total\{tenant="tenant-a",signal="traces"\} 1\n/);
      expect(metrics).to.match(/tenantry_gateway_tenant_rejected_items_total\{tenant="__none__",signal="traces",reason="tenant_not_allowed"\} 30\n/);
      expect(
        tenantLines(metrics).every((l) => /tenant="(tenant-a|__none__)"/.test(l)),
        tenantLines(metrics).join('\n'),
      ).to.equal(true);
    });
  });

  it('with TENANTRY_METRICS_KEY set, answers /metrics 401 without the key and 200 with it; probes stay open', async () => {
    const metricsKey = 'metrics-scrape-key-0123456789';
    await withGateway('metrics_exposure_key', { listener: { ...defaultListenerLimits, metricsKey } }, async (gw) => {
      const bare = await fetch(`${gw.httpUrl}/metrics`);
      expect(bare.status).to.equal(401);
      expect(bare.headers.get('www-authenticate')).to.equal('Bearer');
      expect(await bare.text()).not.to.contain('tenantry_');
      expect(
        (await fetch(`${gw.httpUrl}/metrics`, { headers: { authorization: `Bearer ${keys.admin}` } })).status,
        'an API key is not the metrics key',
      ).to.equal(401);
      const keyed = await fetch(`${gw.httpUrl}/metrics`, { headers: { authorization: `Bearer ${metricsKey}` } });
      expect(keyed.status).to.equal(200);
      expect(await keyed.text()).to.contain('tenantry_gateway_requests_total');
      expect((await fetch(`${gw.httpUrl}/healthz`)).status).to.equal(200);
      expect((await fetch(`${gw.httpUrl}/readyz`)).status).to.equal(200);
    });
  });
});
