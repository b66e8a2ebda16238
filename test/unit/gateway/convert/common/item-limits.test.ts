// Every per-item limit crossed once, in both wire formats: the protobuf and
// the OTLP/JSON converter of each signal truncate, drop and reject the same
// way (same rows, same partial-success message), and the message names the
// limit and its value.
import { expect } from 'chai';
import { minRowBudgetBytes, RequestLimits, utf8Cut } from '../../../../../gateway/convert/common/item-limits.ts';
import type { ItemLimits } from '../../../../../gateway/convert/common/item-limits.ts';
import { hasTruncations } from '../../../../../gateway/convert/common/item-tally.ts';
import { LogIdGenerator } from '../../../../../gateway/convert/logs/log-id.ts';
import { rowConverters } from '../../../../../gateway/convert/row-converters.ts';
import { TenantResolver } from '../../../../../gateway/convert/common/tenant-resolver.ts';
import type { RowBatch } from '../../../../../gateway/rowbinary/row-batch.ts';
import type { SignalName } from '../../../../../gateway/wire/otlp-messages.ts';
import { mapObject, readRows, rowDifference } from '../../support/row-binary-reader.ts';
import type { Row } from '../../support/row-binary-reader.ts';
import { encoders, nouns, principal } from '../../support/otlp-arbitraries.ts';
import { jsonBody } from '../json-body.ts';

const nowMs = 1_700_000_000_000;
const ns = (ms: number): string => (BigInt(ms) * 1_000_000n).toString();
const limits: ItemLimits = {
  maxAttributes: 2,
  maxAttributeKeyBytes: 10,
  maxAttributeValueBytes: 5,
  maxLogBodyBytes: 6,
  maxSpanNameBytes: 3,
  maxSpanEvents: 1,
  maxSpanLinks: 1,
  maxValueDepth: 2,
  maxFutureSkewMs: 60_000,
  maxRequestExpansion: 16,
  retention: { logsDays: 1, tracesDays: 1, metricsDays: 2 },
};
const str = (s: string): object => ({ stringValue: s });
/** An AnyValue nesting `levels` levels of arrays. */
const nested = (levels: number): object => (levels === 0 ? str('x') : { arrayValue: { values: [nested(levels - 1)] } });
const kv = (key: string, value: object): object => ({ key, value });

/** Converts `request` in both formats under `limits`, checks they agree, and returns the protobuf batch. */
function convertBoth(signal: SignalName, request: object, under: ItemLimits = limits): RowBatch {
  const converters = (): ReturnType<typeof rowConverters> => rowConverters(new LogIdGenerator('0000000000'), () => nowMs, under);
  const fromProtobuf = converters()[signal].protobuf.convert(Buffer.from(encoders[signal](request)), new TenantResolver(principal));
  const fromJson = converters()[signal].json.convert(jsonBody(request), new TenantResolver(principal));
  if (!fromProtobuf.ok) expect.fail(fromProtobuf.error);
  if (!fromJson.ok) expect.fail(fromJson.error);
  const [p, j] = [fromProtobuf.value, fromJson.value];
  expect(p.rows.equals(j.rows), rowDifference(p.table, j.rows, p.rows)).to.equal(true);
  expect(p.rejected.message(nouns[signal])).to.equal(j.rejected.message(nouns[signal]));
  return p;
}

const truncations = (batch: RowBatch): Record<string, number> => (hasTruncations(batch.rejected) ? Object.fromEntries(batch.rejected.truncated) : {});

describe('item limits', () => {
  it('truncates names, keys and values at UTF-8 boundaries and drops attributes, events and links beyond their counts', () => {
    const batch = convertBoth('traces', {
      resourceSpans: [
        {
          resource: { attributes: [kv('tenant.id', str('t1')), kv('service.name', str('checkout')), kv('third', str('dropped'))] },
          scopeSpans: [
            {
              spans: [
                {
                  name: 'GET /cart',
                  startTimeUnixNano: ns(nowMs),
                  endTimeUnixNano: ns(nowMs + 1),
                  droppedAttributesCount: 1,
                  droppedEventsCount: 1,
                  attributes: [kv('longkeylong', str('ééé')), kv('n', { intValue: '1234567' }), kv('dropped', str('x'))],
                  events: [{ name: 'kept', attributes: [kv('a', { bytesValue: Buffer.from('abcdefgh') })] }, { name: 'dropped' }],
                  links: [{ traceState: 'kept' }, { traceState: 'dropped' }],
                },
              ],
            },
          ],
        },
      ],
    });
    expect(batch.rowCount).to.equal(1);
    const [span] = readRows('spans', batch.rows);
    if (span === undefined) expect.fail('no row');
    expect(span).to.include({ span_name: 'GET', service_name: 'check', dropped_attributes_count: 2, dropped_events_count: 2, dropped_links_count: 1 });
    expect(mapObject(span['resource_attributes'])).to.deep.equal({ 'tenant.id': 't1', 'service.na': 'check' });
    expect(mapObject(span['span_attributes'])).to.deep.equal({ longkeylon: 'éé', n: '12345' });
    expect(span['event_names']).to.deep.equal(['kept']);
    expect(span['event_attributes']).to.deep.equal([[['a', 'YWJjZ']]]);
    expect(span['link_trace_states']).to.deep.equal(['kept']);
    // Values: service_name and its map entry, ééé, 1234567 and the event's bytes.
    expect(truncations(batch)).to.deep.equal({
      attribute_count: 2,
      attribute_key_bytes: 2,
      attribute_value_bytes: 5,
      span_name_bytes: 1,
      span_events: 1,
      span_links: 1,
    });
    expect(batch.rejected.message('spans')).to.equal(
      'truncated: 2 attributes beyond 2 per list dropped (TENANTRY_MAX_ATTRIBUTES), ' +
        '2 attribute keys to 10 bytes (TENANTRY_MAX_ATTRIBUTE_KEY_BYTES), 5 attribute values to 5 bytes (TENANTRY_MAX_ATTRIBUTE_VALUE_BYTES), ' +
        '1 span names to 3 bytes (TENANTRY_MAX_SPAN_NAME_BYTES), 1 events beyond 1 per span dropped (TENANTRY_MAX_SPAN_EVENTS), ' +
        '1 links beyond 1 per span dropped (TENANTRY_MAX_SPAN_LINKS)',
    );
  });

  it('rejects items older than the retention or beyond the future skew, and values nested too deep, naming each limit', () => {
    const span = (name: string, atMs: number, attributes: object[] = []): object => ({ name, startTimeUnixNano: ns(atMs), attributes });
    const batch = convertBoth('traces', {
      resourceSpans: [
        {
          resource: { attributes: [kv('tenant.id', str('t1'))] },
          scopeSpans: [
            {
              spans: [
                span('now', nowMs),
                span('old', nowMs - 86_400_001),
                span('soon', nowMs + 59_000),
                span('late', nowMs + 61_000),
                span('two', nowMs, [kv('v', nested(2))]),
                span('three', nowMs, [kv('v', nested(3))]),
                { name: 'unset' },
              ],
            },
          ],
        },
        {
          resource: { attributes: [kv('tenant.id', str('t1')), kv('deep', nested(3))] },
          scopeSpans: [{ spans: [span('under a deep resource', nowMs)] }],
        },
      ],
    });
    expect(readRows('spans', batch.rows).map((r) => r['span_name'])).to.deep.equal(['now', 'soo', 'two']);
    expect(batch.rejected.count).to.equal(5);
    expect(batch.rejected.message('spans')).to.equal(
      '5 spans rejected: ' +
        '2 timestamp older than the traces retention of 1 days (TENANTRY_TRACES_RETENTION_DAYS), e.g. 2023-11-13T22:13:19.999Z; ' +
        '1 timestamp more than 60 s in the future (TENANTRY_MAX_FUTURE_SKEW_SECONDS), e.g. 2023-11-14T22:14:21.000Z; ' +
        '2 attribute value or body nested deeper than 2 levels (TENANTRY_MAX_VALUE_DEPTH); ' +
        // Only kept rows count: "soon" and the JSON text of the value of "two".
        'truncated: 1 attribute values to 5 bytes (TENANTRY_MAX_ATTRIBUTE_VALUE_BYTES), 1 span names to 3 bytes (TENANTRY_MAX_SPAN_NAME_BYTES)',
    );
  });

  it('truncates log bodies and rejects records by their time, or their observed time when unset', () => {
    const batch = convertBoth('logs', {
      resourceLogs: [
        {
          resource: { attributes: [kv('tenant.id', str('t1'))] },
          scopeLogs: [
            {
              logRecords: [
                { timeUnixNano: ns(nowMs), body: str('hello world') },
                { observedTimeUnixNano: ns(nowMs), body: { kvlistValue: { values: [kv('k', str('v'))] } } },
                { observedTimeUnixNano: ns(nowMs - 2 * 86_400_000), body: str('old') },
                { timeUnixNano: ns(nowMs), body: nested(3) },
              ],
            },
          ],
        },
      ],
    });
    expect(readRows('logs', batch.rows).map((r: Row) => r['body'])).to.deep.equal(['hello ', '{"k":"']);
    expect(batch.rejected.message('log records')).to.match(
      /^2 log records rejected: 1 timestamp older than the logs retention of 1 days .*; 1 attribute value or body nested deeper than 2 levels .*; truncated: 2 log bodies to 6 bytes \(TENANTRY_MAX_LOG_BODY_BYTES\)$/,
    );
  });

  it('rejects metric points by the retention of metrics', () => {
    const point = (atMs: number): object => ({ timeUnixNano: ns(atMs), asDouble: 1 });
    const batch = convertBoth('metrics', {
      resourceMetrics: [
        {
          resource: { attributes: [kv('tenant.id', str('t1'))] },
          scopeMetrics: [{ metrics: [{ name: 'g', gauge: { dataPoints: [point(nowMs - 86_400_000 * 1.5), point(nowMs - 86_400_000 * 2.5)] } }] }],
        },
      ],
    });
    expect(batch.rowCount).to.equal(1);
    expect(batch.rejected.message('data points')).to.match(
      /^1 data points rejected: 1 timestamp older than the metrics retention of 2 days \(TENANTRY_METRICS_RETENTION_DAYS\)/,
    );
  });

  it('gives a request a row budget of its size times the expansion, at least 32 MiB, and rejects items beyond it', () => {
    expect(new RequestLimits(limits, 'traces', nowMs, 1000).rowBudget).to.equal(minRowBudgetBytes);
    const large = new RequestLimits(limits, 'traces', nowMs, 4 * 1024 * 1024);
    expect(large.rowBudget).to.equal(64 * 1024 * 1024);
    const [lo, hi] = [Number(BigInt(ns(nowMs)) & 0xffffffffn), Number(BigInt(ns(nowMs)) >> 32n)];
    expect(large.rejectionBefore('acme', lo, hi, large.rowBudget, false)).to.equal(undefined);
    expect(large.rejectionBefore('acme', lo, hi, large.rowBudget + 1, false)).to.deep.equal({ reason: 'request_too_expansive' });
  });

  it('cuts UTF-8 text without splitting a character', () => {
    const text = Buffer.from('aé€😀');
    expect([1, 2, 3, 4, 5, 6, 7, 10].map((max) => text.toString('utf8', 0, utf8Cut(text, 0, text.length, max)))).to.deep.equal([
      'a',
      'a',
      'aé',
      'aé',
      'aé',
      'aé€',
      'aé€',
      'aé€😀',
    ]);
  });
});
