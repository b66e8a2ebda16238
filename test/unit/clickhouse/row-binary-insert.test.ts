import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { insertRowBinary, rowBinaryTarget } from '../../../src/clickhouse/row-binary-insert.ts';
import { logsTable, metricsTable, spansTable } from '../../../src/clickhouse/schema/tables.ts';
import { openStore } from '../../../src/clickhouse/store.ts';

describe('RowBinary inserts', () => {
  it("name the columns in row order with the table's types, codecs left out, LowCardinality(String) read as String", () => {
    const target = rowBinaryTarget(spansTable({ logsDays: 1, tracesDays: 1, metricsDays: 1 }), [
      'span_kind',
      'timestamp',
      'service_name',
      'resource_attributes',
    ]);
    expect(target).to.deep.equal({
      table: 'spans',
      columns: ['span_kind', 'timestamp', 'service_name', 'resource_attributes'],
      structure:
        "span_kind Enum8('UNSPECIFIED' = 0, 'INTERNAL' = 1, 'SERVER' = 2, 'CLIENT' = 3, 'PRODUCER' = 4, 'CONSUMER' = 5), timestamp DateTime64(9), service_name String, resource_attributes Map(String, String)",
      retentionFrom: undefined,
    });
  });

  it("give rows of a signal table with their tenant the retention of the signal (tenant_retention's column)", () => {
    const retention = { logsDays: 1, tracesDays: 1, metricsDays: 1 };
    expect(rowBinaryTarget(spansTable(retention), ['tenant_id', 'timestamp']).retentionFrom).to.equal('traces_days');
    expect(rowBinaryTarget(logsTable(retention), ['tenant_id', 'timestamp']).retentionFrom).to.equal('logs_days');
    expect(rowBinaryTarget(metricsTable(retention), ['tenant_id', 'timestamp']).retentionFrom).to.equal('metrics_days');
  });

  it('refuse a column the table does not have', () => {
    expect(() => rowBinaryTarget(spansTable({ logsDays: 1, tracesDays: 1, metricsDays: 1 }), ['tenant_id', 'nope'])).to.throw('table spans has no column nope');
  });

  it("send a server the rows as the binary body of INSERT … FORMAT RowBinary, with the block's deduplication token", async () => {
    const seen: { query: string | null; body: Buffer }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
        seen.push({ query: new URL(req.url ?? '/', 'http://x').searchParams.get('query'), body });
        res.setHeader('X-ClickHouse-Summary', '{}');
        res.end();
      });
    });
    await new Promise<void>((resolve) => {
      server.listen(0, '127.0.0.1', resolve);
    });
    const opened = await openStore({
      kind: 'server',
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      user: 'default',
      password: '',
      database: 'tenantry',
      cluster: undefined,
    });
    if (!opened.ok) throw new Error(opened.error);
    try {
      const rows = [Buffer.from([0x00, 0xff, 0x0a]), Buffer.from([0x01, 0x02])];
      const target = { table: 'spans', columns: ['a', 'b'], structure: 'a String, b String', retentionFrom: undefined };
      await insertRowBinary(opened.value, target, rows, 'spans-0123456789abcdef-000000000042');
      expect(seen).to.have.length(1);
      expect(seen[0]?.query).to.equal(
        "INSERT INTO tenantry.spans (a, b) SETTINGS max_partitions_per_insert_block = 0, materialize_skip_indexes_on_insert = 0, insert_deduplication_token = 'spans-0123456789abcdef-000000000042', deduplicate_blocks_in_dependent_materialized_views = 1 FORMAT RowBinary",
      );
      expect(seen[0]?.body.equals(Buffer.concat(rows))).to.equal(true);
      let refused: unknown;
      await insertRowBinary(opened.value, target, rows, "x', readonly = '0").catch((error: unknown) => {
        refused = error;
      });
      expect(String(refused)).to.contain('is not a plain name');
      expect(seen).to.have.length(1);
      // A signal table's rows are read through input() so the INSERT can add their retention.
      await insertRowBinary(opened.value, { ...target, columns: ['tenant_id', 'b'], retentionFrom: 'traces_days' }, rows, 'spans-1');
      expect(seen[1]?.query).to.match(
        /^INSERT INTO tenantry\.spans \(tenant_id, b, retention_days\) WITH \(SELECT .* FROM tenantry\.tenant_retention\) AS retention_lookup SELECT \*, transform\(tenant_id, .*\) FROM input\(\{structure:String\}\) SETTINGS .* FORMAT RowBinary$/,
      );
      expect(seen[1]?.body.equals(Buffer.concat(rows))).to.equal(true);
    } finally {
      await opened.value.close();
      server.close();
    }
  });
});
