import { expect } from 'chai';
import type { Principal } from '../../../../../src/auth/api-keys.ts';
import { LogIdGenerator } from '../../../../../gateway/convert/logs/log-id.ts';
import { logsFromJson } from '../../../../../gateway/convert/logs/json.ts';
import { anyTime, jsonRows } from '../json-body.ts';
import { readRows } from '../../support/row-binary-reader.ts';

const principal: Principal = { name: 'p', scopes: new Set(['ingest']), tenants: '*' };
const str = (s: string): { stringValue: string } => ({ stringValue: s });
const nowMs = 1_700_000_000_000;

describe('log-rows', () => {
  it('writes every column of a log record in RowBinary', () => {
    const request = {
      resourceLogs: [
        {
          resource: {
            attributes: [
              { key: 'service.name', value: str('api') },
              { key: 'tenant.id', value: str('t1') },
            ],
          },
          schemaUrl: 'https://schema/r',
          scopeLogs: [
            {
              scope: { name: 'logger', version: '3', attributes: [] },
              schemaUrl: 'https://schema/s',
              logRecords: [
                {
                  timeUnixNano: '1700000000000000005',
                  observedTimeUnixNano: '1700000000000000009',
                  severityNumber: 0,
                  severityText: 'Warning',
                  body: {
                    kvlistValue: {
                      values: [
                        { key: 'msg', value: str('hi') },
                        { key: 'n', value: { intValue: '-3' } },
                      ],
                    },
                  },
                  attributes: [
                    { key: 'log.record.uid', value: str('uid-1') },
                    { key: 'a', value: { bytesValue: Buffer.from([1, 2]) } },
                  ],
                  droppedAttributesCount: 3,
                  flags: 0x1ff,
                  traceId: Buffer.from('00112233445566778899aabbccddeeff', 'hex'),
                  spanId: Buffer.from('0011223344556677', 'hex'),
                  eventName: 'app.start',
                },
              ],
            },
          ],
        },
      ],
    };
    const batch = jsonRows(
      logsFromJson(new LogIdGenerator('abcdef0123'), () => nowMs, anyTime),
      request,
      principal,
    );
    expect(batch.table).to.equal('logs');
    expect(batch.rowCount).to.equal(1);
    expect(readRows('logs', batch.rows)).to.deep.equal([
      {
        tenant_id: 't1',
        timestamp: 1700000000000000005n,
        observed_timestamp: 1700000000000000009n,
        log_id: 'uid-1',
        trace_id: '00112233445566778899aabbccddeeff',
        span_id: '0011223344556677',
        trace_flags: 0xff,
        severity_number: 13,
        severity_text: 'Warning',
        event_name: 'app.start',
        body: '{"msg":"hi","n":"-3"}',
        service_name: 'api',
        resource_schema_url: 'https://schema/r',
        resource_attributes: [
          ['service.name', 'api'],
          ['tenant.id', 't1'],
        ],
        scope_name: 'logger',
        scope_version: '3',
        scope_schema_url: 'https://schema/s',
        scope_attributes: [],
        log_attributes: [
          ['log.record.uid', 'uid-1'],
          ['a', 'AQI='],
        ],
        dropped_attributes_count: 3,
      },
    ]);
  });

  it('falls back to the observed timestamp and that to the time received, generates log ids, keeps the highest severity', () => {
    const request = {
      resourceLogs: [
        {
          scopeLogs: [
            {
              logRecords: [
                { observedTimeUnixNano: '77', severityNumber: 24, body: str('x'), attributes: [{ key: 'tenant.id', value: str('t2') }] },
                { timeUnixNano: '5', severityText: 'bogus', attributes: [{ key: 'tenant.id', value: str('t2') }] },
                { body: str('no time at all'), attributes: [{ key: 'tenant.id', value: str('t2') }] },
                { body: str('no tenant') },
              ],
            },
          ],
        },
      ],
    };
    const batch = jsonRows(
      logsFromJson(new LogIdGenerator('abcdef0123'), () => nowMs, anyTime),
      request,
      principal,
    );
    expect(batch.rowCount).to.equal(3);
    expect(batch.rejected.message('log records')).to.equal('1 log records rejected: 1 no tenant.id attribute on the resource or the item');
    const rows = readRows('logs', batch.rows);
    expect(rows.map((r) => [r['timestamp'], r['observed_timestamp'], r['severity_number'], r['log_id'], r['body'], r['service_name']])).to.deep.equal([
      [77n, 77n, 24, '018bcfe56800abcdef012300000001', 'x', ''],
      [5n, 1_700_000_000_000_000_000n, 0, '018bcfe56800abcdef012300000002', '', ''],
      [1_700_000_000_000_000_000n, 1_700_000_000_000_000_000n, 0, '018bcfe56800abcdef012300000003', 'no time at all', ''],
    ]);
  });
});
