// RowSink over @clickhouse/client, for the embedded (chdb) and server
// connections alike. The rows are already JSONEachRow text, so they are sent
// through `exec` as the INSERT body (client.insert would re-serialize
// objects). Binary formats are out: chdb's connection turns the body into a
// UTF-8 string (docs/gateway.md).
import { Readable } from 'node:stream';
import { classifyStoreError } from '../../src/clickhouse/clickhouse-error.ts';
import { queryTable } from '../../src/clickhouse/schema/ddl.ts';
import type { Store } from '../../src/clickhouse/store.ts';
import type { TableName } from '../ingest/row-batch.ts';
import type { RowSink, SinkResult } from './row-sink.ts';

/**
 * Settings that keep an insert exact (no skipping of unknown fields), and a
 * second guard against one odd string failing a whole batch: a bad \u escape
 * is stored as is rather than refused (the converters should never write one).
 */
const insertSettings = { input_format_skip_unknown_fields: 0, date_time_input_format: 'basic', input_format_json_throw_on_bad_escape_sequence: 0 } as const;

export function clickHouseRowSink(store: Store): RowSink {
  return {
    async insert(table: TableName, chunks: readonly (string | Buffer)[]): Promise<SinkResult> {
      if (chunks.length === 0) return { ok: true };
      try {
        const result = await store.client.exec({
          query: `INSERT INTO ${queryTable(store, table)} FORMAT JSONEachRow`,
          // chdb appends the chunks to the SQL text; over HTTP they are the request body.
          values: Readable.from(chunks),
          clickhouse_settings: insertSettings,
        });
        // The response body of an INSERT is empty; drain it so the socket is reused.
        result.stream.resume();
        return { ok: true };
      } catch (error) {
        const failure = classifyStoreError(error);
        return { ok: false, kind: failure.kind, message: failure.message };
      }
    },
  };
}
