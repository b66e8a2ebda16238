import { expect } from 'chai';
import type { Principal } from '../../../../../src/auth/api-keys.ts';
import { tracesFromJson as tracesConverter } from '../../../../../gateway/convert/traces/json.ts';
import { TenantResolver } from '../../../../../gateway/convert/common/tenant-resolver.ts';
import { anyTime, jsonRows, testNow } from '../json-body.ts';
import { mapObject, readRows } from '../../support/row-binary-reader.ts';

const tracesFromJson = tracesConverter(anyTime, testNow);
const principal: Principal = { name: 'p', scopes: new Set(['ingest']), tenants: new Set(['t1', '42']) };
const str = (s: string): { stringValue: string } => ({ stringValue: s });

describe('span-rows', () => {
  it('writes every column of a span in RowBinary, the resource and scope shared by its spans', () => {
    const request = {
      resourceSpans: [
        {
          resource: {
            attributes: [
              { key: 'tenant.id', value: str('t1') },
              { key: 'service.name', value: str('checkout') },
            ],
          },
          schemaUrl: 'https://schema/r',
          scopeSpans: [
            {
              scope: { name: 'lib', version: '1.2', attributes: [{ key: 's', value: { boolValue: true } }] },
              spans: [
                {
                  traceId: Buffer.from('0102030405060708090a0b0c0d0e0fff', 'hex'),
                  spanId: Buffer.from('a1a2a3a4a5a6a7a8', 'hex'),
                  parentSpanId: Buffer.alloc(0),
                  traceState: 'k=v',
                  flags: 0x301,
                  name: 'GET /\ud800',
                  kind: 3,
                  startTimeUnixNano: '1700000000000000001',
                  endTimeUnixNano: '1700000001500000002',
                  attributes: [
                    { key: 'http.status', value: { intValue: '200' } },
                    { key: 'nested', value: { arrayValue: { values: [str('a'), { doubleValue: 2.5 }] } } },
                  ],
                  droppedAttributesCount: 1,
                  droppedEventsCount: 2,
                  droppedLinksCount: 4294967295,
                  events: [{ timeUnixNano: '18446744073709551615', name: 'boom', attributes: [{ key: 'e', value: str('x') }] }, { name: 'bare' }],
                  links: [
                    {
                      traceId: Buffer.from('ff', 'hex'),
                      spanId: Buffer.from('00ee', 'hex'),
                      traceState: 'l=1',
                      attributes: [{ key: 'l', value: { doubleValue: Number.NaN } }],
                    },
                  ],
                  status: { code: 2, message: 'failed' },
                },
                {
                  kind: 5,
                  status: { code: -4 },
                  startTimeUnixNano: '20',
                  endTimeUnixNano: '10',
                },
              ],
            },
          ],
        },
      ],
    };
    const batch = jsonRows(tracesFromJson, request, principal);
    expect(batch.table).to.equal('spans');
    expect(batch.rowCount).to.equal(2);
    const [full, sparse] = readRows('spans', batch.rows);
    expect(full).to.deep.equal({
      tenant_id: 't1',
      timestamp: 1700000000000000001n,
      trace_id: '0102030405060708090a0b0c0d0e0fff',
      span_id: 'a1a2a3a4a5a6a7a8',
      parent_span_id: '',
      trace_state: 'k=v',
      flags: 0x301,
      span_name: 'GET /\ufffd',
      span_kind: 'CLIENT',
      duration_ns: 1500000001n,
      status_code: 'ERROR',
      status_message: 'failed',
      service_name: 'checkout',
      resource_schema_url: 'https://schema/r',
      resource_attributes: [
        ['tenant.id', 't1'],
        ['service.name', 'checkout'],
      ],
      scope_name: 'lib',
      scope_version: '1.2',
      scope_attributes: [['s', 'true']],
      span_attributes: [
        ['http.status', '200'],
        ['nested', '["a",2.5]'],
      ],
      event_timestamps: [(1n << 63n) - 1n, 0n],
      event_names: ['boom', 'bare'],
      event_attributes: [[['e', 'x']], []],
      link_trace_ids: ['ff'],
      link_span_ids: ['00ee'],
      link_trace_states: ['l=1'],
      link_attributes: [[['l', 'NaN']]],
      dropped_attributes_count: 1,
      dropped_events_count: 2,
      dropped_links_count: 4294967295,
    });
    expect(sparse).to.include({
      tenant_id: 't1',
      timestamp: 20n,
      span_kind: 'CONSUMER',
      status_code: 'UNSET',
      duration_ns: 0n,
      span_name: '',
      trace_id: '',
      service_name: 'checkout',
    });
    expect(sparse?.['event_names']).to.deep.equal([]);
    expect(mapObject(sparse?.['resource_attributes'])).to.deep.equal({ 'tenant.id': 't1', 'service.name': 'checkout' });
  });

  it('takes the tenant from the span when the resource has none, and tallies rejections', () => {
    const request = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                { name: 'a', attributes: [{ key: 'tenant.id', value: { intValue: '42' } }] },
                { name: 'b', attributes: [{ key: 'tenant.id', value: str('t2') }] },
                { name: 'c' },
              ],
            },
          ],
        },
      ],
    };
    const batch = jsonRows(tracesFromJson, request, principal);
    expect(batch.rowCount).to.equal(1);
    expect(readRows('spans', batch.rows).map((r) => [r['tenant_id'], r['span_name']])).to.deep.equal([['42', 'a']]);
    expect(batch.rejected.count).to.equal(2);
    expect(Object.fromEntries(batch.rejected.byReason)).to.deep.equal({ tenant_not_allowed: 1, missing_tenant: 1 });
  });

  it('reads OTLP/JSON as sent: hex ids lower-cased, enum names, int64 as numbers, unknown and snake_case fields ignored', () => {
    const body = JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'tenant.id', value: { stringValue: 't1' } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: '0102030405060708090A0B0C0D0E0FFF',
                  span_id: 'ab',
                  kind: 'SPAN_KIND_SERVER',
                  startTimeUnixNano: 10,
                  endTimeUnixNano: '25',
                  extra: { x: 1 },
                },
              ],
            },
          ],
        },
      ],
    });
    const result = tracesFromJson.convert(Buffer.from(body), new TenantResolver(principal));
    if (!result.ok) expect.fail(result.error);
    expect(readRows('spans', result.value.rows)[0]).to.include({
      trace_id: '0102030405060708090a0b0c0d0e0fff',
      span_id: '',
      span_kind: 'SERVER',
      timestamp: 10n,
      duration_ns: 15n,
    });
    const invalid = tracesFromJson.convert(Buffer.from(body.replace('0FFF', '0FF')), new TenantResolver(principal));
    expect(invalid).to.deep.equal({ ok: false, error: 'invalid OTLP/JSON: traceId is not a hex string: "0102030405060708090A0B0C0D0E0FF"' });
  });

  it('writes nothing for a request without spans', () => {
    const batch = jsonRows(tracesFromJson, { resourceSpans: [] }, principal);
    expect(batch.rows.length).to.equal(0);
    expect(batch.rowCount).to.equal(0);
  });
});
