// The Loki API's conformance (issues 17 and 32): OTLP logs sent by the
// official http/protobuf exporter to a Tenantry `all` process (tenant in
// tenant.id), then a table of LogQL queries, each row with the answer Loki's
// public documentation gives for the fixture's records (support/loki-model.ts
// derives it from support/log-fixture.ts, never from Tenantry) and the rule
// it checks. Rows marked `difference` hold Tenantry's documented deliberate
// differences (docs/loki.md, "Conformance"). Isolation, parse errors,
// refusals and limits are checked on their own below.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';
import { canonical, summary } from './support/answer-shape.ts';
import type { LokiAnswer } from './support/answer-shape.ts';
import { exportLogs, fixtureRecords, tenantLogs } from './support/log-fixture.ts';
import type { Entry, Labels, RangeFunction, Series } from './support/loki-model.ts';
import {
  aggregate,
  drop,
  entryOf,
  json,
  labelsOf,
  logfmt,
  matrixBody,
  rangeAggregation,
  seconds,
  steps,
  streamsBody,
  topk,
  vectorBody,
} from './support/loki-model.ts';

const tenantA = 'loki-a';
const tenantB = 'loki-b';
const keys = {
  admin: 'loki-admin-key-0123456789',
  ingest: 'loki-ingest-key-0123456789',
  readA: 'loki-read-a-key-0123456789',
  readAB: 'loki-read-ab-key-0123456789',
};
const perService = 120;
const services = 3;

/** Data starts on a minute boundary 40 minutes back and spans 20 minutes; queries cover [start, start + 25 min]. */
const startMs = Math.floor((Date.now() - 40 * 60_000) / 60_000) * 60_000;
const startNs = BigInt(startMs) * 1_000_000n;
const endNs = startNs + 25n * 60_000_000_000n;
const minuteNs = 60_000_000_000n;
const s = (ns: bigint): string => ns.toString();

/** Tenant A's lines as the Loki API documents them, and the lines of one service. */
const all: readonly Entry[] = fixtureRecords(tenantA, 'alpha', startMs, perService).flat().map(entryOf);
const service = (name: string): Entry[] => all.filter((e) => e.stream['service_name'] === name);
const num = (e: Entry, label: string): number => Number(labelsOf(e)[label] ?? Number.NaN);
const label = (e: Entry, name: string): string => labelsOf(e)[name] ?? '';
/** A selector's or label filter's regex: fully anchored (query/log_queries#log-stream-selector). */
const anchored = (re: string): RegExp => new RegExp(`^(?:${re})$`);

/** The evaluation times of the default range (step 60 s) and a range aggregation over them. */
const grid = steps(startNs, endNs, 60);
const over = (fn: RangeFunction, entries: readonly Entry[], rangeSeconds: number, times: readonly bigint[] = grid): Series[] =>
  rangeAggregation(fn, entries, rangeSeconds, times);
const instantAt = startNs + 15n * minuteNs;
const by = (...names: string[]): { by: string[] } => ({ by: names });

/** The expected answer of a row: a success body, or an error status and a pattern its text matches. */
type Expected = { readonly status: 200; readonly body: unknown } | { readonly status: number; readonly error: RegExp };
const success = (body: unknown): Expected => ({ status: 200, body });

interface Case {
  readonly name: string;
  /** The documented rule the row checks (grafana.com/docs/loki/latest/<page>#<section>). */
  readonly rule: string;
  readonly query: string;
  readonly path?: 'query_range' | 'query';
  readonly params?: Record<string, string>;
  readonly direction?: 'forward' | 'backward';
  readonly headers?: Record<string, string>;
  readonly expected: () => Expected;
  /** A deliberate difference from the documented behaviour: the row holds Tenantry's answer, docs/loki.md says why. */
  readonly difference?: string;
}

const traced = (1 * 7919 + 0 + 1).toString(16).padStart(32, '0');
const categorize = { 'X-Loki-Response-Encoding-Flags': 'categorize-labels' };

const cases: readonly Case[] = [
  {
    name: 'selector =',
    rule: 'stream selector = : exactly equal (docs: query/log_queries#log-stream-selector)',
    query: '{service_name="checkout"}',
    expected: () => success(streamsBody(service('checkout'))),
  },
  {
    name: 'selector != and =',
    rule: 'stream selector != and =, all matchers must hold (docs: query/log_queries#log-stream-selector)',
    query: '{service_name!="checkout", deployment_environment="prod"}',
    expected: () => success(streamsBody(all.filter((e) => e.stream['service_name'] !== 'checkout' && e.stream['deployment_environment'] === 'prod'))),
  },
  {
    name: 'selector =~',
    rule: 'stream selector =~ : regex, fully anchored (docs: query/log_queries#log-stream-selector)',
    query: '{service_name=~"check.*|pay.*"}',
    expected: () => success(streamsBody(all.filter((e) => anchored('check.*|pay.*').test(e.stream['service_name'] ?? '')))),
  },
  {
    name: 'selector !~ and =',
    rule: 'stream selector !~ : regex does not match; a missing label is "" (docs: query/log_queries#log-stream-selector)',
    query: '{service_name!~"front.*", service_namespace="shop"}',
    expected: () =>
      success(streamsBody(all.filter((e) => !anchored('front.*').test(e.stream['service_name'] ?? '') && e.stream['service_namespace'] === 'shop'))),
  },
  {
    name: 'k8s label, |=',
    rule: 'k8s.namespace.name is a stream label k8s_namespace_name (docs: send-data/otel); |= : case-sensitive substring (docs: query/log_queries#line-filter-expression)',
    query: '{k8s_namespace_name="shop"} |= "POST"',
    expected: () => success(streamsBody(all.filter((e) => e.stream['k8s_namespace_name'] === 'shop' && e.line.includes('POST')))),
  },
  {
    name: 'line !=',
    rule: 'line filter != : line does not contain the string (docs: query/log_queries#line-filter-expression)',
    query: '{service_name="frontend"} != "ERROR"',
    expected: () => success(streamsBody(service('frontend').filter((e) => !e.line.includes('ERROR')))),
  },
  {
    name: 'line |~',
    rule: 'line filter |~ : RE2 regex matching anywhere in the line (docs: query/log_queries#line-filter-expression)',
    query: '{service_name="frontend"} |~ "render(ed)? page"',
    expected: () => success(streamsBody(service('frontend').filter((e) => /render(ed)? page/.test(e.line)))),
  },
  {
    name: 'line !~',
    rule: 'line filter !~ : regex matches nowhere in the line (docs: query/log_queries#line-filter-expression)',
    query: '{service_name="frontend"} !~ "static|ERROR"',
    expected: () => success(streamsBody(service('frontend').filter((e) => !/static|ERROR/.test(e.line)))),
  },
  {
    name: 'chained line filters',
    rule: 'chained line filters all apply, in order; "\\\\d" in a LogQL string is the regex \\d (docs: query/log_queries#line-filter-expression)',
    query: '{service_name="checkout"} |= "GET" != "/health" |~ "status=5\\\\d\\\\d"',
    expected: () =>
      success(streamsBody(service('checkout').filter((e) => e.line.includes('GET') && !e.line.includes('/health') && /status=5\d\d/.test(e.line)))),
  },
  {
    name: 'line filter or',
    rule: 'line filter |= "a" or "b": either string (docs: query/log_queries#line-filter-expression)',
    query: '{service_name="frontend"} |= "ERROR" or "static"',
    expected: () => success(streamsBody(service('frontend').filter((e) => e.line.includes('ERROR') || e.line.includes('static')))),
  },
  {
    name: 'logfmt numeric filter',
    rule: '| logfmt extracts key=value pairs; >= compares numbers (docs: query/log_queries#logfmt, #label-filter-expression)',
    query: '{service_name="checkout"} | logfmt | status >= 500',
    expected: () =>
      success(
        streamsBody(
          service('checkout')
            .map(logfmt)
            .filter((e) => num(e, 'status') >= 500),
        ),
      ),
  },
  {
    name: 'logfmt string filters',
    rule: 'label filters joined by "," all hold; =~ on a label is fully anchored (docs: query/log_queries#label-filter-expression)',
    query: '{service_name="checkout"} | logfmt | method="POST", path=~"/api/.*"',
    expected: () =>
      success(
        streamsBody(
          service('checkout')
            .map(logfmt)
            .filter((e) => label(e, 'method') === 'POST' && anchored('/api/.*').test(label(e, 'path'))),
        ),
      ),
  },
  {
    name: 'json ==',
    rule: '| json extracts every field; == compares numbers (docs: query/log_queries#json, #label-filter-expression)',
    query: '{service_name="payments"} | json | status == 502',
    expected: () =>
      success(
        streamsBody(
          service('payments')
            .map(json)
            .filter((e) => num(e, 'status') === 502),
        ),
      ),
  },
  {
    name: 'json and',
    rule: 'label filters joined by "and" (docs: query/log_queries#label-filter-expression)',
    query: '{service_name="payments"} | json | currency!="EUR" and amount > 100',
    expected: () =>
      success(
        streamsBody(
          service('payments')
            .map(json)
            .filter((e) => label(e, 'currency') !== 'EUR' && num(e, 'amount') > 100),
        ),
      ),
  },
  {
    name: 'json nested or',
    rule: '| json joins nested keys with "_"; "or" (docs: query/log_queries#json, #label-filter-expression)',
    query: '{service_name="payments"} | json | user_tier="gold" or user_id="u1"',
    expected: () =>
      success(
        streamsBody(
          service('payments')
            .map(json)
            .filter((e) => label(e, 'user_tier') === 'gold' || label(e, 'user_id') === 'u1'),
        ),
      ),
  },
  {
    name: 'metadata detected_level',
    rule: 'detected_level is structured metadata from the OTLP severity (docs: send-data/otel); label filters apply to structured metadata (docs: get-started/labels/structured-metadata#querying-structured-metadata)',
    query: '{service_name="checkout"} | detected_level="error"',
    expected: () => success(streamsBody(service('checkout').filter((e) => e.metadata['detected_level'] === 'error'))),
  },
  {
    name: 'metadata attributes',
    rule: 'log attributes are structured metadata with "." → "_" (docs: send-data/otel); > compares numbers (docs: query/log_queries#label-filter-expression)',
    query: '{service_name="checkout"} | http_method="POST" | user_id > 2',
    expected: () => success(streamsBody(service('checkout').filter((e) => e.metadata['http_method'] === 'POST' && num(e, 'user_id') > 2))),
  },
  {
    name: 'metadata trace_id',
    rule: 'trace_id is structured metadata, lower-case hex (docs: send-data/otel)',
    query: `{service_name=~".+"} | trace_id="${traced}"`,
    expected: () => success(streamsBody(all.filter((e) => e.metadata['trace_id'] === traced))),
  },
  {
    name: 'sanitised attribute names',
    rule: 'attribute names sanitised into label names: other characters → "_", a leading digit gets "key_" (docs: send-data/otel)',
    query: '{service_name="checkout"} | http_request_id=~"r-1.*" | odd_key="x" | key_9lives="1"',
    expected: () =>
      success(
        streamsBody(
          service('checkout').filter(
            (e) => anchored('r-1.*').test(e.metadata['http_request_id'] ?? '') && e.metadata['odd_key'] === 'x' && e.metadata['key_9lives'] === '1',
          ),
        ),
      ),
  },
  {
    name: 'metadata regex',
    rule: '=~ on structured metadata, fully anchored (docs: query/log_queries#label-filter-expression)',
    query: '{service_name="payments"} | payment_provider=~"str.*"',
    expected: () => success(streamsBody(service('payments').filter((e) => anchored('str.*').test(e.metadata['payment_provider'] ?? '')))),
  },
  {
    name: 'metadata severity_text',
    rule: 'severity_text is structured metadata (docs: send-data/otel)',
    query: '{service_name="frontend"} | severity_text="WARN"',
    expected: () => success(streamsBody(service('frontend').filter((e) => e.metadata['severity_text'] === 'WARN'))),
  },
  {
    name: 'forward, limit 7',
    rule: 'direction=forward returns the oldest `limit` lines first (docs: reference/loki-http-api#query-logs-within-a-range-of-time)',
    query: '{service_name="frontend"}',
    params: { direction: 'forward', limit: '7' },
    direction: 'forward',
    expected: () => success(streamsBody(service('frontend'), { direction: 'forward', limit: 7 })),
  },
  {
    name: 'backward, limit 5',
    rule: 'direction defaults to backward: the newest `limit` lines (docs: reference/loki-http-api#query-logs-within-a-range-of-time)',
    query: '{deployment_environment="prod"}',
    params: { limit: '5' },
    expected: () =>
      success(
        streamsBody(
          all.filter((e) => e.stream['deployment_environment'] === 'prod'),
          { limit: 5 },
        ),
      ),
  },
  {
    name: 'count_over_time',
    rule: 'count_over_time: lines per label set in (t - range, t] at each step (docs: query/metric_queries#log-range-aggregations)',
    query: 'count_over_time({service_name="frontend"}[1m])',
    expected: () => success(matrixBody(over('count_over_time', service('frontend'), 60))),
  },
  {
    name: 'sum count_over_time',
    rule: 'sum without grouping: one series with no labels (docs: query/metric_queries#built-in-aggregation-operators)',
    query: 'sum(count_over_time({service_name="frontend"}[1m]))',
    expected: () => success(matrixBody(aggregate('sum', over('count_over_time', service('frontend'), 60)))),
  },
  {
    name: 'sum by, range 2m step 1m',
    rule: 'sum by (label); a range longer than the step counts a line at several steps (docs: query/metric_queries)',
    query: 'sum by (detected_level) (count_over_time({service_name=~".+"}[2m]))',
    expected: () => success(matrixBody(aggregate('sum', over('count_over_time', all, 120), by('detected_level')))),
  },
  {
    name: 'Explore log volume',
    rule: 'by () a label no line has groups it as absent; drop of a missing label changes nothing (docs: query/metric_queries, query/log_queries#drop-labels-expression)',
    query: 'sum by (level, detected_level) (count_over_time({service_name="checkout"} | drop __error__[1m]))',
    expected: () =>
      success(
        matrixBody(
          aggregate(
            'sum',
            over(
              'count_over_time',
              service('checkout').map((e) => drop(e, ['__error__'])),
              60,
            ),
            by('level', 'detected_level'),
          ),
        ),
      ),
  },
  {
    name: 'sum rate with filter',
    rule: 'rate: lines per second over the range (docs: query/metric_queries#log-range-aggregations)',
    query: 'sum(rate({service_name="checkout"} |= "POST" [5m]))',
    expected: () =>
      success(
        matrixBody(
          aggregate(
            'sum',
            over(
              'rate',
              service('checkout').filter((e) => e.line.includes('POST')),
              300,
            ),
          ),
        ),
      ),
  },
  {
    name: 'bytes_over_time by',
    rule: 'bytes_over_time: bytes of the lines in the range (docs: query/metric_queries#log-range-aggregations)',
    query: 'sum by (service_name) (bytes_over_time({deployment_environment="prod"}[1m]))',
    expected: () =>
      success(
        matrixBody(
          aggregate(
            'sum',
            over(
              'bytes_over_time',
              all.filter((e) => e.stream['deployment_environment'] === 'prod'),
              60,
            ),
            by('service_name'),
          ),
        ),
      ),
  },
  {
    name: 'bytes_rate without',
    rule: 'bytes_rate: bytes per second; without (…) keeps every other label (docs: query/metric_queries)',
    query:
      'sum without (observed_timestamp, trace_id, span_id, flags, user_id, retry, http_method, http_request_id, key_9lives, severity_number, severity_text, detected_level) (bytes_rate({service_name="checkout"}[2m]))',
    expected: () =>
      success(
        matrixBody(
          aggregate('sum', over('bytes_rate', service('checkout'), 120), {
            without: [
              'observed_timestamp',
              'trace_id',
              'span_id',
              'flags',
              'user_id',
              'retry',
              'http_method',
              'http_request_id',
              'key_9lives',
              'severity_number',
              'severity_text',
              'detected_level',
            ],
          }),
        ),
      ),
  },
  {
    name: 'avg by',
    rule: "avg by: mean over the group's series (docs: query/metric_queries#built-in-aggregation-operators)",
    query: 'avg by (service_name) (count_over_time({service_namespace="shop"}[1m]))',
    expected: () =>
      success(
        matrixBody(
          aggregate(
            'avg',
            over(
              'count_over_time',
              all.filter((e) => e.stream['service_namespace'] === 'shop'),
              60,
            ),
            by('service_name'),
          ),
        ),
      ),
  },
  {
    name: 'max by',
    rule: "max by: largest of the group's series (docs: query/metric_queries#built-in-aggregation-operators)",
    query: 'max by (service_name) (count_over_time({service_name=~".+"} |= "alpha" [5m]))',
    expected: () =>
      success(
        matrixBody(
          aggregate(
            'max',
            over(
              'count_over_time',
              all.filter((e) => e.line.includes('alpha')),
              300,
            ),
            by('service_name'),
          ),
        ),
      ),
  },
  {
    name: 'min of sum',
    rule: 'aggregations nest (docs: query/metric_queries#built-in-aggregation-operators)',
    query: 'min by (deployment_environment) (sum by (deployment_environment, service_name) (count_over_time({service_name=~".+"}[3m])))',
    expected: () =>
      success(
        matrixBody(
          aggregate('min', aggregate('sum', over('count_over_time', all, 180), by('deployment_environment', 'service_name')), by('deployment_environment')),
        ),
      ),
  },
  {
    name: 'count by',
    rule: 'count by: number of series in the group (docs: query/metric_queries#built-in-aggregation-operators)',
    query: 'count by (service_name) (count_over_time({service_name=~".+"}[1m]))',
    expected: () => success(matrixBody(aggregate('count', over('count_over_time', all, 60), by('service_name')))),
  },
  // Counts tie (30 lines per 5 min in every service) and the docs give no order among ties: bytes do not tie.
  {
    name: 'topk',
    rule: 'topk: the k largest series at each step, labels kept (docs: query/metric_queries#built-in-aggregation-operators)',
    query: 'topk(2, sum by (service_name) (bytes_over_time({service_name=~".+"}[5m])))',
    expected: () => success(matrixBody(topk(2, aggregate('sum', over('bytes_over_time', all, 300), by('service_name'))))),
  },
  {
    name: 'logfmt in metric',
    rule: 'parsed labels group a metric query (docs: query/metric_queries#log-range-aggregations)',
    query: 'sum by (status) (count_over_time({service_name="checkout"} | logfmt | status >= 500 [5m]))',
    expected: () =>
      success(
        matrixBody(
          aggregate(
            'sum',
            over(
              'count_over_time',
              service('checkout')
                .map(logfmt)
                .filter((e) => num(e, 'status') >= 500),
              300,
            ),
            by('status'),
          ),
        ),
      ),
  },
  {
    name: 'json in metric',
    rule: 'parsed labels group a metric query (docs: query/metric_queries#log-range-aggregations)',
    query: 'sum by (currency) (count_over_time({service_name="payments"} | json [5m]))',
    expected: () => success(matrixBody(aggregate('sum', over('count_over_time', service('payments').map(json), 300), by('currency')))),
  },
  {
    name: 'instant sum by',
    rule: 'instant query: a vector at `time`, value time in seconds (docs: reference/loki-http-api#query-logs-at-a-single-point-in-time)',
    query: 'sum by (service_name) (count_over_time({service_name=~".+"}[10m]))',
    path: 'query',
    params: { time: s(instantAt) },
    expected: () => success(vectorBody(aggregate('sum', over('count_over_time', all, 600, [instantAt]), by('service_name')), instantAt)),
  },
  {
    name: 'instant topk',
    rule: 'topk in an instant query (docs: query/metric_queries#built-in-aggregation-operators)',
    query: 'topk(1, sum by (service_name) (bytes_over_time({service_name=~".+"}[10m])))',
    path: 'query',
    params: { time: s(instantAt) },
    expected: () => success(vectorBody(topk(1, aggregate('sum', over('bytes_over_time', all, 600, [instantAt]), by('service_name'))), instantAt)),
  },
  {
    name: 'label filter before parser',
    rule: 'pipeline stages apply in order: a metadata filter, then a parser (docs: query/log_queries#log-pipeline)',
    query: '{service_name="checkout"} | detected_level="info" | logfmt | status=500',
    expected: () =>
      success(
        streamsBody(
          service('checkout')
            .filter((e) => e.metadata['detected_level'] === 'info')
            .map(logfmt)
            .filter((e) => num(e, 'status') === 500),
        ),
      ),
  },
  {
    name: 'logfmt key colliding (_extracted)',
    rule: 'a parsed key that is already a label gets the suffix _extracted (docs: query/log_queries#logfmt)',
    query: '{service_name="checkout"} | logfmt | service_version_extracted="2.1"',
    expected: () =>
      success(
        streamsBody(
          service('checkout')
            .map(logfmt)
            .filter((e) => e.parsed['service_version_extracted'] === '2.1'),
        ),
      ),
  },
  {
    name: 'json then drop',
    rule: '| drop removes the named labels (docs: query/log_queries#drop-labels-expression)',
    query: '{service_name="payments"} | json | drop user_tier, amount, tag',
    expected: () =>
      success(
        streamsBody(
          service('payments')
            .map(json)
            .map((e) => drop(e, ['user_tier', 'amount', 'tag'])),
        ),
      ),
  },
  {
    name: 'since',
    rule: 'without start, start = end - since (docs: reference/loki-http-api#query-logs-within-a-range-of-time)',
    query: 'sum(count_over_time({service_name="frontend"}[1m]))',
    params: { start: '', since: '30m', step: '300' },
    expected: () => success(matrixBody(aggregate('sum', over('count_over_time', service('frontend'), 60, steps(endNs - 30n * minuteNs, endNs, 300))))),
  },
  {
    name: 'Grafana health check',
    rule: 'vector(s) and binary arithmetic between vectors without labels (docs: query/metric_queries#vector-function, query/#binary-operators)',
    query: 'vector(1)+vector(1)',
    path: 'query',
    params: { time: s(endNs) },
    expected: () => success({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [seconds(endNs), '2'] }] } }),
  },
  {
    name: 'scalar arithmetic',
    rule: 'arithmetic between numbers is a scalar, written as in the Prometheus API (docs: reference/loki-http-api "Prometheus API-compatible")',
    query: '2 * 3',
    path: 'query',
    params: { time: s(endNs) },
    expected: () => success({ status: 'success', data: { resultType: 'scalar', result: [seconds(endNs), '6'] } }),
  },
  {
    name: 'vector() over a range',
    rule: 'vector(s) is s at every step (docs: query/metric_queries#vector-function)',
    query: 'vector(2)',
    params: { step: '300' },
    expected: () =>
      success({
        status: 'success',
        data: { resultType: 'matrix', result: [{ metric: {}, values: steps(startNs, endNs, 300).map((t) => [seconds(t), '2']) }] },
      }),
  },
  {
    name: 'categorize-labels',
    rule: 'categorize-labels: stream labels in the stream, metadata and parsed labels per entry (docs: reference/loki-http-api#query-logs-within-a-range-of-time)',
    query: '{service_name="checkout"} | logfmt | status=500',
    headers: categorize,
    expected: () =>
      success(
        streamsBody(
          service('checkout')
            .map(logfmt)
            .filter((e) => num(e, 'status') === 500),
          { categorize: true },
        ),
      ),
  },
  {
    name: 'categorize-labels, json',
    rule: 'categorize-labels with | json and a limit (docs: reference/loki-http-api#query-logs-within-a-range-of-time)',
    query: '{service_name="payments"} | json',
    headers: categorize,
    params: { limit: '20' },
    expected: () => success(streamsBody(service('payments').map(json), { categorize: true, limit: 20 })),
  },
  {
    name: 'json on non-JSON lines',
    rule: '| json on a line that is not JSON adds __error__="JSONParserErr" (docs: query/log_queries#json)',
    query: '{service_name="frontend"} | json',
    difference: 'no __error__ labels: the same lines, labels unchanged',
    expected: () => success(streamsBody(service('frontend'))),
  },
  {
    name: 'numeric filter on a non-number',
    rule: 'a numeric filter on a value that is not a number keeps the line with __error__="LabelFilterErr" (docs: query/log_queries#label-filter-expression)',
    query: '{service_name="checkout"} | logfmt | path > 3',
    difference: 'the line is dropped',
    expected: () => success(streamsBody([])),
  },
  {
    name: 'metric over parse errors',
    rule: 'a metric query over lines with __error__ fails unless they are filtered or dropped (docs: query/#pipeline-errors)',
    query: 'count_over_time({service_name="frontend"} | json [5m])',
    difference: 'no __error__, so the lines are counted',
    expected: () => success(matrixBody(over('count_over_time', service('frontend'), 300))),
  },
  {
    name: 'empty-compatible selector',
    rule: 'a selector needs one matcher that does not match the empty string (docs: query/log_queries#log-stream-selector)',
    query: '{service_name=~".*"}',
    expected: () => ({
      status: 400,
      error: /^parse error : queries require at least one regexp or equality matcher that does not have an empty-compatible value/,
    }),
  },
  {
    name: 'log query as instant',
    rule: 'an instant log query reads lines up to `time` (docs: reference/loki-http-api#query-logs-at-a-single-point-in-time)',
    query: '{service_name="checkout"}',
    path: 'query',
    params: { time: s(endNs) },
    difference: 'refused with 400, asking for a range query: the docs do not say which window an instant log query reads',
    expected: () => ({ status: 400, error: /^log queries are not supported as an instant query type/ }),
  },
];

type Streams = { stream: Labels; values: [string, string][] }[];
const streamsOf = (a: LokiAnswer): Streams => (a.body as { data?: { result?: Streams } } | undefined)?.data?.result ?? [];
const linesOf = (a: LokiAnswer): string[] =>
  streamsOf(a)
    .flatMap((r) => r.values.map(([ts, line]) => `${ts} ${line}`))
    .sort();

interface Target {
  readonly url: string;
  readonly headers: Record<string, string>;
}

async function ask(target: Target, c: Pick<Case, 'query' | 'path' | 'params' | 'headers'>): Promise<LokiAnswer> {
  const params = new URLSearchParams({
    query: c.query,
    ...(c.path === 'query' ? {} : { start: s(startNs), end: s(endNs), step: '60', limit: '1000' }),
    ...(c.params ?? {}),
  });
  const response = await fetch(`${target.url}/loki/api/v1/${c.path ?? 'query_range'}?${params.toString()}`, {
    headers: { ...target.headers, ...(c.headers ?? {}) },
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

/** Why an answer is not the expected one, or undefined when it is. */
function mismatch(c: Case, answer: LokiAnswer): string | undefined {
  const expected = c.expected();
  if (expected.status !== 200) {
    const error = 'error' in expected ? expected.error : /^/;
    return answer.status === expected.status && error.test(answer.text)
      ? undefined
      : `expected ${expected.status} matching ${String(error)}, got ${answer.status} ${answer.text.slice(0, 300)}`;
  }
  const want = canonical({ status: 200, body: 'body' in expected ? expected.body : undefined, text: '' }, c.direction);
  const got = canonical(answer, c.direction);
  if (JSON.stringify(want) === JSON.stringify(got)) return undefined;
  return `\n  expected: ${JSON.stringify(want).slice(0, 1500)}\n  tenantry: ${JSON.stringify(got).slice(0, 1500)}`;
}

/** Lines Tenantry holds for a tenant in the data window. */
async function lineCount(target: Target): Promise<{ count: number; answer: string }> {
  const answer = await ask(target, { query: 'sum(count_over_time({service_name=~".+"}[40m]))', path: 'query', params: { time: s(startNs + 30n * minuteNs) } });
  const result = (answer.body as { data?: { result?: { value: [number, string] }[] } } | undefined)?.data?.result ?? [];
  return { count: Number(result[0]?.value[1] ?? 0), answer: answer.text.slice(0, 500) };
}

/** Tenantry reports no event when an accepted line becomes queryable, so this polls, bounded. */
async function waitForLines(target: Target, expected: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  let seen = { count: 0, answer: '' };
  while (Date.now() < deadline) {
    seen = await lineCount(target);
    if (seen.count >= expected) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`Tenantry holds ${seen.count} of ${expected} lines after 60 s; last answer: ${seen.answer}`);
}

const sortedUnique = (values: readonly string[]): string[] => [...new Set(values)].sort();

describe('Loki API: conformance to the documented API, isolation, errors', function () {
  this.timeout(240_000);
  let dir: string;
  let tenantry: TenantryProcess;
  let tenantryApi: string;
  let otlpLogsUrl: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tenantry-loki-conformance-'));
    tenantry = startTenantry(
      ['all'],
      testEnvironment(join(dir, 'tenantry'), {
        TENANTRY_API_KEYS: JSON.stringify([
          { key: keys.admin, scopes: ['read', 'admin'], tenants: ['*'] },
          { key: keys.ingest, scopes: ['ingest'], tenants: ['*'] },
          { key: keys.readA, scopes: ['read'], tenants: [tenantA] },
          { key: keys.readAB, scopes: ['read'], tenants: [tenantA, tenantB] },
        ]),
      }),
    );
    const ports = await tenantry.started(120_000);
    tenantryApi = `http://127.0.0.1:${ports['api'] ?? 0}`;
    otlpLogsUrl = `http://127.0.0.1:${ports['otlpHttp'] ?? 0}/v1/logs`;
    for (const [tenant, tag] of [
      [tenantA, 'alpha'],
      [tenantB, 'bravo'],
    ] as const) {
      for (const records of tenantLogs(tenant, tag, startMs, perService)) {
        const sent = await exportLogs(otlpLogsUrl, { authorization: `Bearer ${keys.ingest}` }, records);
        expect(sent.code, `Tenantry accepted ${tenant}'s logs`).to.equal(0);
      }
    }
    await waitForLines({ url: tenantryApi, headers: { authorization: `Bearer ${keys.readA}` } }, perService * services);
  });

  after(async () => {
    await tenantry.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const tenantryA = (): Target => ({ url: tenantryApi, headers: { authorization: `Bearer ${keys.readA}`, 'X-Scope-OrgID': tenantA } });

  it(`answers the ${cases.length} LogQL queries as the documentation says`, async () => {
    expect(all, 'the model holds every line sent').to.have.length(perService * services);
    const rows: string[][] = [];
    const mismatches: string[] = [];
    for (const c of cases) {
      const answer = await ask(tenantryA(), c);
      const problem = mismatch(c, answer);
      rows.push([
        c.name,
        summary(answer),
        problem === undefined ? (c.difference === undefined ? 'as documented' : `deliberate difference: ${c.difference}`) : 'DIFFERENT',
      ]);
      if (problem !== undefined) mismatches.push(`${c.name}: ${c.query}\n  rule: ${c.rule}${problem}`);
    }
    const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => (r[i] ?? '').length), 8));
    console.log(rows.map((r) => `    ${r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')}`).join('\n'));
    expect(mismatches, mismatches.join('\n')).to.deep.equal([]);
  });

  it('lists the documented labels, label values and series', async () => {
    const stream = (e: Entry): Labels => e.stream;
    const shop = all.filter((e) => e.stream['service_namespace'] === 'shop');
    // Label endpoints list stream labels only (COMPAT-APIS.md; docs: reference/loki-http-api#query-labels).
    const asks: readonly [string, Record<string, string>, unknown[]][] = [
      ['labels', {}, sortedUnique(all.flatMap((e) => Object.keys(e.stream)))],
      ['labels', { query: '{service_name="payments"}' }, sortedUnique(service('payments').flatMap((e) => Object.keys(e.stream)))],
      ['label/service_name/values', {}, sortedUnique(all.map((e) => e.stream['service_name'] ?? ''))],
      ['label/deployment_environment/values', {}, sortedUnique(all.map((e) => e.stream['deployment_environment'] ?? ''))],
      ['label/k8s_pod_name/values', { query: '{service_namespace="shop"}' }, sortedUnique(shop.flatMap((e) => e.stream['k8s_pod_name'] ?? []))],
      // host.name is structured metadata, not a stream label: no values (docs: send-data/otel).
      ['label/host_name/values', {}, []],
      // Series: the distinct stream label sets matching the selector (docs: reference/loki-http-api#query-streams).
      ['series', { 'match[]': '{deployment_environment="prod"}' }, all.filter((e) => e.stream['deployment_environment'] === 'prod').map(stream)],
      ['series', { 'match[]': '{service_name=~"pay.*"}' }, all.filter((e) => anchored('pay.*').test(e.stream['service_name'] ?? '')).map(stream)],
    ];
    // Series label sets are objects whose key order the API does not fix.
    const normal = (d: unknown): string =>
      JSON.stringify(typeof d === 'object' && d !== null ? Object.fromEntries(Object.entries(d).sort(([a], [b]) => a.localeCompare(b))) : d);
    const sorted = (data: readonly unknown[] | undefined): string[] => sortedUnique((data ?? []).map(normal));
    for (const [path, params, expected] of asks) {
      const query = new URLSearchParams({ start: s(startNs), end: s(endNs), ...params }).toString();
      const response = await fetch(`${tenantryApi}/loki/api/v1/${path}?${query}`, { headers: tenantryA().headers });
      const body = (await response.json()) as { status?: string; data?: unknown[] };
      expect(response.status, path).to.equal(200);
      expect(body.status, path).to.equal('success');
      expect(sorted(body.data), `${path} ${JSON.stringify(params)}`).to.deep.equal(sorted(expected));
    }
    // detected_labels: each stream label with its number of distinct values (docs: reference/loki-http-api#query-detected-labels).
    const detectedQuery = new URLSearchParams({ start: s(startNs), end: s(endNs), query: '{service_namespace="shop"}' }).toString();
    const detected = (await (await fetch(`${tenantryApi}/loki/api/v1/detected_labels?${detectedQuery}`, { headers: tenantryA().headers })).json()) as {
      detectedLabels?: { label: string; cardinality: number }[];
    };
    const names = sortedUnique(shop.flatMap((e) => Object.keys(e.stream)));
    const expectedDetected = names.map((n) => `${n}=${sortedUnique(shop.flatMap((e) => e.stream[n] ?? [])).length}`);
    expect((detected.detectedLabels ?? []).map((d) => `${d.label}=${d.cardinality}`).sort()).to.deep.equal(expectedDetected.sort());
  });

  const get = async (path: string, headers: Record<string, string>, params: Record<string, string> = {}): Promise<LokiAnswer> => {
    const query = new URLSearchParams({ start: s(startNs), end: s(endNs), ...params });
    const response = await fetch(`${tenantryApi}/loki/api/v1/${path}?${query.toString()}`, { headers });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, body, text };
  };

  const endpoints: readonly [string, Record<string, string>][] = [
    ['query_range', { query: '{service_name="checkout"}' }],
    ['query', { query: 'sum(count_over_time({service_name="checkout"}[5m]))', time: s(endNs) }],
    ['labels', {}],
    ['label/service_name/values', {}],
    ['series', { 'match[]': '{service_name="checkout"}' }],
    ['index/stats', { query: '{service_name="checkout"}' }],
    ['index/volume', { query: '{service_name="checkout"}' }],
    ['detected_labels', { query: '{service_name="checkout"}' }],
  ];

  it('answers 404 on every endpoint when the key asks for a tenant it does not have, with no byte of it', async () => {
    for (const [path, params] of endpoints) {
      const answer = await get(path, { authorization: `Bearer ${keys.readA}`, 'X-Scope-OrgID': tenantB }, params);
      expect(answer.status, path).to.equal(404);
      expect(answer.text, path).to.not.match(/bravo|checkout/);
      expect(answer.text.length, path).to.be.below(200);
    }
    const unknownKey = await get('labels', { authorization: 'Bearer not-a-key-0123456789' });
    expect(unknownKey.status).to.equal(401);
    const needsTenant = await get('labels', { authorization: `Bearer ${keys.readAB}` });
    expect(needsTenant.status).to.equal(400);
  });

  it('shows a tenant only its own lines, label values and series', async () => {
    const a = { authorization: `Bearer ${keys.readAB}`, 'X-Scope-OrgID': tenantA };
    const b = { authorization: `Bearer ${keys.readAB}`, 'X-Scope-OrgID': tenantB };
    for (const [path, params] of endpoints) {
      const answer = await get(path, a, params);
      expect(answer.status, path).to.equal(200);
      expect(answer.text, path).to.not.include('bravo');
      expect(answer.text, path).to.not.include(tenantB);
    }
    expect((await get('label/k8s_pod_name/values', a)).body).to.deep.equal({ status: 'success', data: ['checkout-alpha'] });
    expect((await get('label/k8s_pod_name/values', b)).body).to.deep.equal({ status: 'success', data: ['checkout-bravo'] });
    const lines = await get('query_range', b, { query: '{service_name=~".+"}', limit: '5000' });
    const bodies = (lines.body as { data: { result: { values: [string, string][] }[] } }).data.result.flatMap((r) => r.values.map((v) => v[1]));
    expect(bodies).to.have.length(perService * services);
    expect(bodies.filter((line) => line.includes('alpha'))).to.deep.equal([]);
  });

  it('answers unparsable LogQL with 400 and the parser position', async () => {
    const headers = tenantryA().headers;
    const cases: readonly [string, RegExp][] = [
      ['{service_name="checkout"', /^parse error at line 1, col 25: syntax error/],
      ['{service_name="checkout"} |= ', /^parse error at line 1, col \d+: syntax error/],
      ['sum(count_over_time({a="b"}[5m]', /^parse error at line 1, col \d+: syntax error/],
      ['{a="b"}\n| json |', /^parse error at line 2, col \d+: syntax error/],
      ['', /^parse error/],
    ];
    for (const [query, pattern] of cases) {
      const answer = await get('query_range', headers, { query });
      expect(answer.status, query).to.equal(400);
      expect(answer.text, query).to.match(pattern);
    }
  });

  it('refuses what it does not run with 400 naming the construct', async () => {
    const headers = tenantryA().headers;
    const refused: readonly [string, string][] = [
      ['{service_name="checkout"} | line_format "{{.x}}"', 'line_format'],
      ['{service_name="checkout"} | label_format a=b', 'label_format'],
      ['{service_name="checkout"} | pattern "<a> <b>"', 'pattern'],
      ['{service_name="checkout"} | regexp "(?P<a>.)"', 'regexp'],
      ['sum(sum_over_time({service_name="checkout"} | logfmt | unwrap status [1m]))', 'sum_over_time'],
      ['{service_name="checkout"} | decolorize', 'decolorize'],
      ['{service_name="checkout"} | keep service_name', 'keep'],
      ['sum(rate({service_name="checkout"}[1m])) + 1', 'binary operations'],
      ['absent_over_time({service_name="checkout"}[1m])', 'absent_over_time'],
      ['{service_name="checkout"} | json a="b"', 'json with arguments'],
      ['count_over_time({service_name="checkout"}[1m] offset 5m)', 'offset'],
      ['stddev(count_over_time({service_name="checkout"}[1m]))', 'stddev'],
    ];
    for (const [query, name] of refused) {
      const answer = await get('query_range', headers, { query });
      expect(answer.status, query).to.equal(400);
      expect(answer.text, query).to.include(name);
      expect(answer.text, query).to.include('not supported');
    }
  });

  it("applies the limits: entries per query, points per series, the tenant's maxQueryDays", async () => {
    const headers = tenantryA().headers;
    const tooMany = await get('query_range', headers, { query: '{service_name="checkout"}', limit: '5001' });
    expect(tooMany.status).to.equal(400);
    expect(tooMany.text).to.include('max entries limit per query exceeded');
    const atLimit = await get('query_range', headers, { query: '{service_name="checkout"}', limit: '5000' });
    expect(atLimit.status).to.equal(200);
    const points = await get('query_range', headers, { query: 'count_over_time({service_name="checkout"}[1m])', step: '0.1' });
    expect(points.status).to.equal(400);
    expect(points.text).to.include('exceeded maximum resolution of 11,000 points');
    const put = await fetch(`${tenantryApi}/v1/tenants/${tenantA}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${keys.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ limits: { maxQueryDays: 1 } }),
    });
    expect(put.status).to.equal(200);
    const twoDays = { query: '{service_name="checkout"}', start: s(endNs - 2n * 86_400_000_000_000n) };
    // The settings cache reports no event when it picks up a write: poll, bounded.
    let answer = await get('query_range', headers, twoDays);
    for (let i = 0; i < 80 && answer.status === 200; i++) {
      await new Promise((r) => setTimeout(r, 250));
      answer = await get('query_range', headers, twoDays);
    }
    expect(answer.status).to.equal(400);
    expect(answer.text).to.include('maxQueryDays');
    expect((await get('query_range', headers, { query: '{service_name="checkout"}' })).status).to.equal(200);
    const reset = await fetch(`${tenantryApi}/v1/tenants/${tenantA}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${keys.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ limits: { maxQueryDays: null } }),
    });
    expect(reset.status).to.equal(200);
  });

  it("never shows lines past the tenant's log retention, in queries or label values", async () => {
    const headers = tenantryA().headers;
    const threeDaysAgoMs = Date.now() - 3 * 86_400_000;
    const old = tenantLogs(tenantA, 'archived', threeDaysAgoMs, 1)[0] ?? [];
    expect((await exportLogs(otlpLogsUrl, { authorization: `Bearer ${keys.ingest}` }, old)).code).to.equal(0);
    const window = { start: s(BigInt(threeDaysAgoMs - 3_600_000) * 1_000_000n), end: s(BigInt(Date.now()) * 1_000_000n) };
    const archived = async (): Promise<{ lines: number; pods: unknown }> => {
      const lines = await get('query_range', headers, { query: '{service_name="checkout"} |= "archived"', ...window });
      const pods = await get('label/k8s_pod_name/values', headers, window);
      return { lines: linesOf(lines).length, pods: (pods.body as { data?: unknown }).data };
    };
    // The line becomes queryable after the gateway's write; no event says when: poll, bounded.
    let seen = await archived();
    for (let i = 0; i < 80 && seen.lines === 0; i++) {
      await new Promise((r) => setTimeout(r, 250));
      seen = await archived();
    }
    expect(seen).to.deep.equal({ lines: 1, pods: ['checkout-alpha', 'checkout-archived'] });
    const put = await fetch(`${tenantryApi}/v1/tenants/${tenantA}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${keys.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ retention: { logsDays: 1 } }),
    });
    expect(put.status).to.equal(200);
    // The settings cache reports no event when it picks up a write: poll, bounded.
    for (let i = 0; i < 80 && seen.lines > 0; i++) {
      await new Promise((r) => setTimeout(r, 250));
      seen = await archived();
    }
    expect(seen).to.deep.equal({ lines: 0, pods: ['checkout-alpha'] });
    const reset = await fetch(`${tenantryApi}/v1/tenants/${tenantA}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${keys.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ retention: { logsDays: null } }),
    });
    expect(reset.status).to.equal(200);
  });

  it("accepts POSTed forms, as Grafana sends them, and Loki's time formats", async () => {
    const form = new URLSearchParams({ query: '{service_name="frontend"}', start: s(startNs), end: s(endNs), limit: '3', direction: 'forward' });
    const response = await fetch(`${tenantryApi}/loki/api/v1/query_range`, {
      method: 'POST',
      headers: { ...tenantryA().headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const posted = (await response.json()) as { data: { result: { values: [string, string][] }[] } };
    const first = posted.data.result
      .flatMap((r) => r.values)
      .map((v) => v[0])
      .sort();
    expect(first).to.have.length(3);
    const asSeconds = await get('query_range', tenantryA().headers, {
      query: '{service_name="frontend"}',
      start: String(startMs / 1000),
      end: Number(endNs / 1_000_000_000n).toFixed(1),
      limit: '3',
      direction: 'forward',
    });
    const asRfc3339 = await get('query_range', tenantryA().headers, {
      query: '{service_name="frontend"}',
      start: new Date(startMs).toISOString(),
      end: new Date(Number(endNs / 1_000_000n)).toISOString(),
      limit: '3',
      direction: 'forward',
    });
    for (const answer of [asSeconds, asRfc3339]) {
      const ts = (answer.body as { data: { result: { values: [string, string][] }[] } }).data.result
        .flatMap((r) => r.values)
        .map((v) => v[0])
        .sort();
      expect(ts).to.deep.equal(first);
    }
  });
});
