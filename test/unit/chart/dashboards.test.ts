// The chart's Grafana dashboards: valid JSON with unique ids, every PromQL
// expression accepted by PromQL's grammar and naming only metrics that a
// Tenantry component exports (read from the code's registrations and the
// process registry), and the checker itself catching an unknown name.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { dashboardExprs, exportedSeriesNames, metricNamesIn, registeredMetrics } from '../../chart/exported-metrics.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const folder = join(root, 'charts', 'tenantry', 'dashboards');
const files = readdirSync(folder)
  .filter((f) => f.endsWith('.json'))
  .map((f) => join(folder, f));

describe('chart dashboards and the metrics the code exports', () => {
  let exported: Set<string>;
  before(async () => {
    exported = await exportedSeriesNames(root);
  });

  it('finds the metrics of every component in the code (gateway, API, listeners, operator, process)', () => {
    const registered = registeredMetrics(root);
    expect(registered.get('tenantry_gateway_requests_total')).to.equal('counter');
    expect(registered.get('tenantry_gateway_insert_duration_seconds')).to.equal('histogram');
    expect(registered.get('tenantry_api_requests_total')).to.equal('counter');
    expect(registered.get('tenantry_listener_connections')).to.equal('gauge');
    expect(registered.get('tenantry_operator_reconciles_total')).to.equal('counter');
    expect(registered.get('tenantry_operator_leader')).to.equal('gauge');
    expect(registered.get('tenantry_operator_stack_condition'), 'a name held in a const').to.equal('gauge');
    expect(exported).to.include.members([
      'tenantry_process_cpu_seconds_total',
      'tenantry_gateway_insert_duration_seconds_count',
      'tenantry_gateway_admission_wait_seconds_bucket',
    ]);
    expect(exported).to.not.include('tenantry_gateway_requests_total_bucket');
  });

  it('reads metric names out of PromQL, and rejects what is not PromQL', () => {
    expect(metricNamesIn('histogram_quantile(0.99, sum by (le) (rate(a_bucket{x=~"$namespace"}[$__rate_interval]))) / b > on(pod) c')).to.deep.equal([
      'a_bucket',
      'b',
      'c',
    ]);
    expect(() => metricNamesIn('sum(rate(a[5m])')).to.throw('not valid PromQL');
  });

  it('the check fails for a metric nothing exports', () => {
    const unknown = metricNamesIn('rate(tenantry_gateway_made_up_total[5m])').filter((n) => !exported.has(n));
    expect(unknown).to.deep.equal(['tenantry_gateway_made_up_total']);
  });

  it('ships a platform overview and a per-tenant dashboard with unique uids', () => {
    const dashboards = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as { uid: string; title: string; panels: unknown[] });
    expect(dashboards.map((d) => d.title).sort()).to.deep.equal(['Tenantry / Platform overview', 'Tenantry / Tenants']);
    expect(new Set(dashboards.map((d) => d.uid)).size).to.equal(dashboards.length);
    for (const d of dashboards) expect(d.panels.length, d.title).to.be.greaterThan(5);
  });

  for (const file of files) {
    it(`every expression of ${file.slice(folder.length + 1)} is PromQL naming exported metrics only`, () => {
      const exprs = dashboardExprs(file);
      expect(exprs.length).to.be.greaterThan(5);
      const unknown = exprs.flatMap((e) =>
        metricNamesIn(e.expr)
          .filter((n) => !exported.has(n))
          .map((n) => `${e.panel}: ${n}`),
      );
      expect(unknown, 'metrics no component exports').to.deep.equal([]);
    });
  }

  it('lays panels out as Grafana needs: unique ids, within 24 columns, no overlap, every query on the datasource variable', () => {
    type Panel = {
      id: number;
      type: string;
      gridPos: { x: number; y: number; w: number; h: number };
      datasource?: { uid: string };
      targets?: Array<{ datasource?: { uid: string } }>;
    };
    for (const file of files) {
      const d = JSON.parse(readFileSync(file, 'utf8')) as { panels: Panel[]; templating: { list: Array<{ name: string; type: string }> } };
      expect(d.templating.list.find((v) => v.name === 'datasource')?.type, file).to.equal('datasource');
      expect(new Set(d.panels.map((p) => p.id)).size, `${file}: ids`).to.equal(d.panels.length);
      const cells = new Set<string>();
      for (const p of d.panels) {
        const { x, y, w, h } = p.gridPos;
        expect(x + w, `${file}: panel ${p.id} width`).to.be.at.most(24);
        for (let i = x; i < x + w; i++) {
          for (let j = y; j < y + h; j++) {
            expect(cells.has(`${i},${j}`), `${file}: panel ${p.id} overlaps`).to.equal(false);
            cells.add(`${i},${j}`);
          }
        }
        if (p.type === 'row') continue;
        expect(p.datasource?.uid, `${file}: panel ${p.id}`).to.equal('${datasource}');
        for (const t of p.targets ?? []) expect(t.datasource?.uid).to.equal('${datasource}');
      }
    }
  });

  it('the per-tenant dashboard covers ingest, rejections, throttling and usage per tenant', () => {
    const names = new Set(dashboardExprs(join(folder, 'tenants.json')).flatMap((e) => metricNamesIn(e.expr)));
    expect([...names]).to.include.members([
      'tenantry_gateway_tenant_accepted_items_total',
      'tenantry_gateway_tenant_accepted_bytes_total',
      'tenantry_gateway_tenant_rejected_items_total',
      'tenantry_gateway_tenant_rejected_bytes_total',
      'tenantry_gateway_throttled_requests_total',
    ]);
  });
});
