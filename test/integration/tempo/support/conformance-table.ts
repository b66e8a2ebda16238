// The Tempo conformance table: every request the former differential test
// asked of both systems, each with the answer the public Tempo HTTP API and
// TraceQL documentation (and COMPAT-APIS.md "How Tempo's API answers") give
// for the trace corpus, and the documented rule it checks. Expected answers
// come from the corpus model (corpus-model.ts), never from Tenantry. Where
// the documentation leaves a choice open, docs/tempo.md ("Conformance: how
// answers are checked") records the decision and the row says so.
import type { ModelSpan, ModelTrace, Scalar } from './corpus-model.ts';
import { allSpans, anchored, asBool, asFloat, asInt, asString, ms, typedTag } from './corpus-model.ts';

/** Where the rules are written. */
const traceQlDocs = 'TraceQL docs (grafana.com/docs/tempo/latest/traceql/construct-traceql-queries)';
const apiDocs = 'Tempo HTTP API docs (grafana.com/docs/tempo/latest/api_docs)';
const compat = 'COMPAT-APIS.md "How Tempo\'s API answers"';
const decision = 'docs/tempo.md "Conformance: how answers are checked"';

/** The spans of a trace that a query selects, or undefined when the trace does not match. */
export type Selects = (t: ModelTrace) => ModelSpan[] | undefined;

export type Expectation =
  | { readonly kind: 'search'; readonly selects: Selects; readonly shows?: readonly string[] }
  | { readonly kind: 'limit'; readonly selects: Selects; readonly limit: number }
  | { readonly kind: 'traces'; readonly matches: (t: ModelTrace) => boolean }
  | { readonly kind: 'values'; readonly values: (traces: readonly ModelTrace[]) => string[] }
  | { readonly kind: 'tagNames'; readonly names: (traces: readonly ModelTrace[]) => string[] };

export interface ConformanceRow {
  readonly name: string;
  /** The documented rule the row checks, and where it is written. */
  readonly rule: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly expect: Expectation;
}

/** Spans per spanset asked for: more than any trace has, so every selected span is shown. */
export const spss = '50';

const span = (s: ModelSpan, key: string): Scalar | undefined => s.attributes[key];
const resource = (s: ModelSpan, key: string): Scalar | undefined => s.resource[key];
/** An unscoped `.key`: the span's attribute or the resource's (TraceQL docs: "unscoped attributes"). */
const either = (s: ModelSpan, key: string): Scalar[] => [span(s, key), resource(s, key)].filter((v): v is Scalar => v !== undefined);

/** One spanset filter: the trace matches when some span passes. */
const filter =
  (p: (s: ModelSpan) => boolean): Selects =>
  (t) => {
    const spans = t.spans.filter(p);
    return spans.length > 0 ? spans : undefined;
  };
const union = (a: ModelSpan[], b: ModelSpan[]): ModelSpan[] => [...new Set([...a, ...b])];
/** `A && B` between spansets: both match; the answer holds the spans of both. */
const and =
  (a: Selects, b: Selects): Selects =>
  (t) => {
    const x = a(t);
    const y = b(t);
    return x !== undefined && y !== undefined ? union(x, y) : undefined;
  };
/** `A || B` between spansets: either matches; the answer holds the spans of each that does. */
const or =
  (a: Selects, b: Selects): Selects =>
  (t) => {
    const x = a(t);
    const y = b(t);
    return x === undefined && y === undefined ? undefined : union(x ?? [], y ?? []);
  };

const traceQl = (q: string, rule: string, selects: Selects, shows?: readonly string[]): ConformanceRow => ({
  name: q,
  rule,
  path: '/api/search',
  params: { q, limit: '100', spss },
  expect: { kind: 'search', selects, ...(shows === undefined ? {} : { shows }) },
});
const tagSearch = (params: Record<string, string>, rule: string, matches: (t: ModelTrace) => boolean): ConformanceRow => ({
  name: `tags: ${new URLSearchParams(params).toString()}`,
  rule,
  path: '/api/search',
  params: { limit: '100', ...params },
  expect: { kind: 'traces', matches },
});
const values = (path: string, rule: string, of: (traces: readonly ModelTrace[]) => string[], params: Record<string, string> = {}): ConformanceRow => ({
  name: `${path}${params['q'] === undefined ? '' : ` q=${params['q']}`}`,
  rule,
  path,
  params,
  expect: { kind: 'values', values: of },
});

const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();
/** Distinct typed values (v2) of what `pick` reads from each span. */
const typed =
  (pick: (s: ModelSpan) => Scalar[]) =>
  (traces: readonly ModelTrace[]): string[] =>
    sorted(allSpans(traces).flatMap(pick).map(typedTag));
/** Distinct values as text (v1). */
const texts =
  (pick: (s: ModelSpan) => Scalar[]) =>
  (traces: readonly ModelTrace[]): string[] =>
    sorted(allSpans(traces).flatMap(pick).map(String));
const has = <T>(v: T | undefined): T[] => (v === undefined ? [] : [v]);

/** A trace-level legacy tag: some span carries key=value (span or resource attribute, `name` the span name). */
const carries = (t: ModelTrace, key: string, value: string, substring = false): boolean =>
  t.spans.some((s) => {
    const candidates = key === 'name' ? [s.name] : either(s, key).map(String);
    return candidates.some((c) => (substring ? c.includes(value) : c === value));
  });

export const conformanceTable: readonly ConformanceRow[] = [
  // Intrinsics
  traceQl(
    '{ }',
    `${traceQlDocs}: an empty spanset filter selects every span`,
    filter(() => true),
  ),
  traceQl(
    '{ true }',
    `${traceQlDocs}: a static true filter selects every span`,
    filter(() => true),
  ),
  traceQl(
    '{ name = "render" }',
    `${traceQlDocs}: intrinsic name, = compares the span name exactly`,
    filter((s) => s.name === 'render'),
    ['name'],
  ),
  traceQl(
    '{ name != "render" && kind = server }',
    `${traceQlDocs}: && inside a filter, both conditions on the same span`,
    filter((s) => s.name !== 'render' && s.kind === 'server'),
  ),
  traceQl(
    '{ name =~ "SELECT.*" }',
    `${traceQlDocs}: =~ is a regular expression match, anchored at both ends`,
    filter((s) => anchored('SELECT.*').test(s.name)),
  ),
  traceQl(
    '{ name !~ "SELECT.*|render" }',
    `${traceQlDocs}: !~ negates the anchored match`,
    filter((s) => !anchored('SELECT.*|render').test(s.name)),
  ),
  traceQl(
    '{ status = error }',
    `${traceQlDocs}: intrinsic status, keywords error/ok/unset`,
    filter((s) => s.status === 'error'),
    ['status'],
  ),
  traceQl(
    '{ status = ok }',
    `${traceQlDocs}: status = ok`,
    filter((s) => s.status === 'ok'),
    ['status'],
  ),
  traceQl(
    '{ status = unset && kind = client }',
    `${traceQlDocs}: status = unset (no status set) and kind`,
    filter((s) => s.status === 'unset' && s.kind === 'client'),
    ['status', 'kind'],
  ),
  traceQl(
    '{ kind = producer }',
    `${traceQlDocs}: intrinsic kind, keywords server/client/producer/consumer/internal/unspecified`,
    filter((s) => s.kind === 'producer'),
    ['kind'],
  ),
  traceQl(
    '{ span:kind = internal }',
    `${traceQlDocs}: span:kind is the scoped name of kind`,
    filter((s) => s.kind === 'internal'),
    ['kind'],
  ),
  traceQl(
    '{ duration > 100ms }',
    `${traceQlDocs}: duration is the span's end minus start, compared with a duration literal`,
    filter((s) => s.durationNs > ms(100)),
  ),
  traceQl(
    '{ duration >= 40ms && duration <= 250ms }',
    `${traceQlDocs}: >= and <= on durations`,
    filter((s) => s.durationNs >= ms(40) && s.durationNs <= ms(250)),
  ),
  traceQl(
    '{ duration < 2ms }',
    `${traceQlDocs}: < on durations`,
    filter((s) => s.durationNs < ms(2)),
  ),
  traceQl(
    '{ statusMessage = "connection reset" }',
    `${traceQlDocs}: intrinsic statusMessage is the status's message`,
    filter((s) => s.statusMessage === 'connection reset'),
    ['statusMessage'],
  ),
  traceQl(
    '{ rootName = "GET /api/checkout" }',
    `${traceQlDocs}: trace-level rootName is the root span's name; every span of such a trace passes`,
    filter((s) => s.trace.root?.name === 'GET /api/checkout'),
  ),
  traceQl(
    '{ rootServiceName = "shop-cart" }',
    `${traceQlDocs}: trace-level rootServiceName is the root span's service.name`,
    filter((s) => s.trace.root?.resource['service.name'] === 'shop-cart'),
  ),
  traceQl(
    '{ trace:rootService = "shop-payment" && kind = server }',
    `${traceQlDocs}: trace:rootService is the scoped name of rootServiceName`,
    filter((s) => s.trace.root?.resource['service.name'] === 'shop-payment' && s.kind === 'server'),
  ),
  traceQl(
    '{ traceDuration > 1s }',
    `${traceQlDocs}: traceDuration is the last span end minus the first span start`,
    filter((s) => s.trace.durationNs > ms(1000)),
  ),
  // Attributes in each scope, each operator and type
  traceQl(
    '{ span.http.method = "GET" }',
    `${traceQlDocs}: span-scoped attribute, string equality`,
    filter((s) => asString(span(s, 'http.method')) === 'GET'),
    ['http.method'],
  ),
  traceQl(
    '{ span.http.status_code >= 500 }',
    `${traceQlDocs}: integer attribute compared with an integer`,
    filter((s) => (asInt(span(s, 'http.status_code')) ?? -Infinity) >= 500),
    ['http.status_code'],
  ),
  traceQl(
    '{ span.http.status_code = 200 || span.http.status_code = 503 }',
    `${traceQlDocs}: || inside a filter`,
    filter((s) => [200, 503].includes(asInt(span(s, 'http.status_code')) ?? NaN)),
    ['http.status_code'],
  ),
  traceQl(
    '{ span.http.status_code != 200 }',
    `${traceQlDocs}: != holds on spans that have the attribute with another value (${decision}: absent is not "different")`,
    filter((s) => {
      const v = asInt(span(s, 'http.status_code'));
      return v !== undefined && v !== 200;
    }),
    ['http.status_code'],
  ),
  traceQl(
    '{ span.http.status_code < 203 }',
    `${traceQlDocs}: < on integers`,
    filter((s) => (asInt(span(s, 'http.status_code')) ?? Infinity) < 203),
  ),
  traceQl(
    '{ span.http.status_code > 204 && span.http.status_code <= 206 }',
    `${traceQlDocs}: a range with && on one span`,
    filter((s) => {
      const v = asInt(span(s, 'http.status_code'));
      return v !== undefined && v > 204 && v <= 206;
    }),
  ),
  traceQl(
    '{ span.sample.ratio > 1.0 }',
    `${traceQlDocs}: a float literal compares float attributes (${decision}: no int/float conversion; the SDK sends 1 and 2 as ints)`,
    filter((s) => (asFloat(span(s, 'sample.ratio')) ?? -Infinity) > 1.0),
    ['sample.ratio'],
  ),
  traceQl(
    '{ span.sample.ratio >= 2 }',
    `${traceQlDocs}: an integer literal compares integer attributes (${decision}: no int/float conversion)`,
    filter((s) => (asInt(span(s, 'sample.ratio')) ?? -Infinity) >= 2),
    ['sample.ratio'],
  ),
  traceQl(
    '{ span.cached = true }',
    `${traceQlDocs}: boolean attribute compared with true`,
    filter((s) => asBool(span(s, 'cached')) === true),
    ['cached'],
  ),
  traceQl(
    '{ .cached = false }',
    `${traceQlDocs}: an unscoped attribute matches a span or a resource attribute`,
    filter((s) => either(s, 'cached').some((v) => asBool(v) === false)),
    ['cached'],
  ),
  traceQl(
    '{ span.http.status_code = "200" }',
    `${traceQlDocs}: a string literal does not match an integer attribute (no type conversion, ${decision})`,
    filter((s) => asString(span(s, 'http.status_code')) === '200'),
  ),
  traceQl(
    '{ span.nope != "x" }',
    `${traceQlDocs}: a comparison with a value needs the attribute (absent is nil; ${decision})`,
    filter((s) => {
      const v = asString(span(s, 'nope'));
      return v !== undefined && v !== 'x';
    }),
  ),
  traceQl(
    '{ resource.service.name = "shop-cart" && span.http.method = "POST" }',
    `${traceQlDocs}: resource and span scopes in one filter`,
    filter((s) => asString(resource(s, 'service.name')) === 'shop-cart' && asString(span(s, 'http.method')) === 'POST'),
    ['service.name', 'http.method'],
  ),
  traceQl(
    '{ resource.deployment.region = "us-east" }',
    `${traceQlDocs}: resource-scoped attribute`,
    filter((s) => asString(resource(s, 'deployment.region')) === 'us-east'),
    ['deployment.region'],
  ),
  traceQl(
    '{ resource.host.cores > 2 }',
    `${traceQlDocs}: integer resource attribute`,
    filter((s) => (asInt(resource(s, 'host.cores')) ?? -Infinity) > 2),
    ['host.cores'],
  ),
  traceQl(
    '{ .service.name =~ "shop-(cart|payment)" }',
    `${traceQlDocs}: unscoped attribute with an anchored regular expression`,
    filter((s) => either(s, 'service.name').some((v) => anchored('shop-(cart|payment)').test(asString(v) ?? ''))),
    ['service.name'],
  ),
  traceQl(
    '{ span.http.route =~ "/api/cart/.*" && span.http.method != "GET" }',
    `${traceQlDocs}: =~ and != on one span`,
    filter((s) => anchored('/api/cart/.*').test(asString(span(s, 'http.route')) ?? '\n') && ![undefined, 'GET'].includes(asString(span(s, 'http.method')))),
  ),
  traceQl(
    '{ span.http.route !~ "/api/cart/.*" && kind = server }',
    `${traceQlDocs}: !~ holds on spans that have the attribute (${decision})`,
    filter((s) => {
      const v = asString(span(s, 'http.route'));
      return v !== undefined && !anchored('/api/cart/.*').test(v) && s.kind === 'server';
    }),
  ),
  traceQl(
    '{ span.template.name = "page-1" || span.db.system = "redis" }',
    `${traceQlDocs}: || of two attributes`,
    filter((s) => asString(span(s, 'template.name')) === 'page-1' || asString(span(s, 'db.system')) === 'redis'),
  ),
  traceQl(
    '{ (span.db.rows > 10 || span.db.system = "postgresql") && kind = client }',
    `${traceQlDocs}: parentheses group conditions`,
    filter((s) => ((asInt(span(s, 'db.rows')) ?? -Infinity) > 10 || asString(span(s, 'db.system')) === 'postgresql') && s.kind === 'client'),
  ),
  // Between spansets
  traceQl(
    '{ span.db.system = "redis" } && { status = error }',
    `${traceQlDocs}: spanset && spanset: the trace holds a span of each`,
    and(
      filter((s) => asString(span(s, 'db.system')) === 'redis'),
      filter((s) => s.status === 'error'),
    ),
  ),
  traceQl(
    '{ span.messaging.system = "kafka" } || { name = "render" }',
    `${traceQlDocs}: spanset || spanset: the trace holds a span of either`,
    or(
      filter((s) => asString(span(s, 'messaging.system')) === 'kafka'),
      filter((s) => s.name === 'render'),
    ),
  ),
  traceQl(
    '{ kind = producer } && { span.template.name = "page-0" } && { resource.deployment.region = "eu-west" }',
    `${traceQlDocs}: three spansets joined by &&`,
    and(
      and(
        filter((s) => s.kind === 'producer'),
        filter((s) => asString(span(s, 'template.name')) === 'page-0'),
      ),
      filter((s) => asString(resource(s, 'deployment.region')) === 'eu-west'),
    ),
  ),
  // select
  traceQl(
    '{ span.http.method = "GET" } | select(span.http.route, resource.deployment.region)',
    `${traceQlDocs}: select() adds the named fields to each span shown (${compat})`,
    filter((s) => asString(span(s, 'http.method')) === 'GET'),
    ['http.method', 'http.route', 'deployment.region'],
  ),
  traceQl(
    '{ kind = client } | select(span.db.rows, name, status)',
    `${traceQlDocs}: select() of an attribute and intrinsics`,
    filter((s) => s.kind === 'client'),
    ['kind', 'db.rows', 'name', 'status'],
  ),
  // limit: how many traces (which ones: the newest, ${decision})
  {
    name: '{ span.http.method = "GET" } limit=2',
    rule: `${apiDocs}: limit bounds the traces returned`,
    path: '/api/search',
    params: { q: '{ span.http.method = "GET" }', limit: '2', spss },
    expect: { kind: 'limit', selects: filter((s) => asString(span(s, 'http.method')) === 'GET'), limit: 2 },
  },
  {
    name: '{ } limit=5',
    rule: `${apiDocs}: limit bounds the traces returned`,
    path: '/api/search',
    params: { q: '{ }', limit: '5', spss },
    expect: { kind: 'limit', selects: filter(() => true), limit: 5 },
  },
  // The legacy tag search: logfmt tags ANDed, minDuration/maxDuration bound the trace's duration
  tagSearch({ tags: 'http.method=GET' }, `${apiDocs}: tags (logfmt) filters on span or resource attributes`, (t) => carries(t, 'http.method', 'GET')),
  tagSearch(
    { tags: 'http.method=GET', minDuration: '1s' },
    `${apiDocs}: minDuration, traces at least this long`,
    (t) => carries(t, 'http.method', 'GET') && t.durationNs >= ms(1000),
  ),
  tagSearch(
    { tags: 'service.name=shop-cart', maxDuration: '100ms' },
    `${apiDocs}: maxDuration, traces at most this long`,
    (t) => carries(t, 'service.name', 'shop-cart', true) && t.durationNs <= ms(100),
  ),
  tagSearch({ tags: 'name=render' }, `${apiDocs}: the tag name is the span name`, (t) => carries(t, 'name', 'render', true)),
  tagSearch({ tags: 'http.status_code=500' }, `${apiDocs}: a tag's value is matched as text`, (t) => carries(t, 'http.status_code', '500')),
  tagSearch({ minDuration: '1500ms' }, `${apiDocs}: minDuration alone`, (t) => t.durationNs >= ms(1500)),
  tagSearch({ tags: 'service.name=cart' }, `${apiDocs}: service.name is matched as a substring (${decision})`, (t) => carries(t, 'service.name', 'cart', true)),
  tagSearch(
    { tags: 'http.method=POST db.system=redis' },
    `${apiDocs}: several tags are ANDed, each on any span of the trace`,
    (t) => carries(t, 'http.method', 'POST') && carries(t, 'db.system', 'redis'),
  ),
  // Go durations are exact: 1.1999999999s is 1,199,999,999 ns, so a trace of exactly 1.2 s is longer (issue 33).
  tagSearch(
    { maxDuration: '1.1999999999s' },
    `${apiDocs}: maxDuration is a Go duration (time.ParseDuration: decimal fractions, exact to the ns)`,
    (t) => t.durationNs <= 1_199_999_999n,
  ),
  tagSearch({ minDuration: '1.1999999999s' }, `${apiDocs}: minDuration is a Go duration, exact to the ns`, (t) => t.durationNs >= 1_199_999_999n),
  traceQl(
    '{ traceDuration <= 1.1999999999s }',
    `${traceQlDocs}: a duration literal is exact to the ns, as the legacy parameters`,
    filter((s) => s.trace.durationNs <= 1_199_999_999n),
  ),
  // Tag names and values
  {
    name: '/api/search/tags',
    rule: `${apiDocs}: tag names are the span and resource attribute names`,
    path: '/api/search/tags',
    params: {},
    expect: { kind: 'tagNames', names: (traces) => sorted(allSpans(traces).flatMap((s) => [...Object.keys(s.attributes), ...Object.keys(s.resource)])) },
  },
  values(
    '/api/search/tag/http.method/values',
    `${apiDocs}: v1 values are strings`,
    texts((s) => either(s, 'http.method')),
  ),
  values(
    '/api/search/tag/service.name/values',
    `${apiDocs}: v1 values of a resource attribute`,
    texts((s) => either(s, 'service.name')),
  ),
  values(
    '/api/search/tag/http.status_code/values',
    `${apiDocs}: v1 values of an integer attribute, as text`,
    texts((s) => either(s, 'http.status_code')),
  ),
  values(
    '/api/v2/search/tag/span.http.status_code/values',
    `${compat}: v2 values are typed (int)`,
    typed((s) => has(span(s, 'http.status_code'))),
  ),
  values('/api/v2/search/tag/status/values', `${compat}: status values are the fixed keyword list`, () => ['keyword:error', 'keyword:ok', 'keyword:unset']),
  values('/api/v2/search/tag/kind/values', `${compat}: kind values are the fixed keyword list`, () => [
    'keyword:client',
    'keyword:consumer',
    'keyword:internal',
    'keyword:producer',
    'keyword:server',
    'keyword:unspecified',
  ]),
  values(
    '/api/v2/search/tag/resource.service.name/values',
    `${apiDocs}: q= keeps the values of spans the filter matches (exactly: ${decision})`,
    (traces) =>
      sorted(
        allSpans(traces)
          .filter((s) => asString(span(s, 'http.method')) === 'GET')
          .flatMap((s) => has(resource(s, 'service.name')))
          .map(typedTag),
      ),
    { q: '{ span.http.method = "GET" }' },
  ),
  values(
    '/api/v2/search/tag/span.cached/values',
    `${compat}: v2 values are typed (bool)`,
    typed((s) => has(span(s, 'cached'))),
  ),
  values(
    '/api/v2/search/tag/span.sample.ratio/values',
    `${compat}: v2 values are typed (float, and int for the SDK's whole numbers)`,
    typed((s) => has(span(s, 'sample.ratio'))),
  ),
  values('/api/v2/search/tag/name/values', `${compat}: the name intrinsic's values are strings`, (traces) =>
    sorted(allSpans(traces).map((s) => `string:${s.name}`)),
  ),
  values(
    '/api/v2/search/tag/.http.method/values',
    `${traceQlDocs}: an unscoped tag reads span and resource attributes`,
    typed((s) => either(s, 'http.method')),
  ),
  values(
    '/api/v2/search/tag/resource.host.cores/values',
    `${compat}: v2 values of an integer resource attribute`,
    typed((s) => has(resource(s, 'host.cores'))),
  ),
  // The corpus: cart traces (t = 1, 4, 7, 10) have redis (odd t) and postgresql (even t) client spans; db.rows = 3t.
  ...['{ resource.service.name = "shop-cart" }', '{ span.db.rows > 10 }', '{ span.db.rows < 4 }'].map((q) =>
    values(
      '/api/v2/search/tag/span.db.system/values',
      `${apiDocs}: q= keeps the values of spans the filter matches (exactly: ${decision})`,
      (traces: readonly ModelTrace[]) => {
        const c = /db\.rows ([<>]) (\d+)/.exec(q);
        const passes = (s: ModelSpan): boolean =>
          c === null
            ? asString(resource(s, 'service.name')) === 'shop-cart'
            : c[1] === '>'
              ? (asInt(span(s, 'db.rows')) ?? -Infinity) > Number(c[2])
              : (asInt(span(s, 'db.rows')) ?? Infinity) < Number(c[2]);
        return sorted(
          allSpans(traces)
            .filter(passes)
            .flatMap((s) => has(span(s, 'db.system')))
            .map(typedTag),
        );
      },
      { q },
    ),
  ),
];

/** TraceQL this API refuses with 400 naming the construct (a deliberate difference: docs/tempo.md). */
export const unsupportedQueries: readonly { readonly q: string; readonly names: string }[] = [
  { q: '{ span.http.method = "GET" } >> { name = "render" }', names: '>>' },
  { q: '{ kind = server } > { kind = client }', names: '>' },
  { q: '{ kind = client } ~ { name = "render" }', names: '~' },
  { q: '{ kind = server } | count() > 2', names: 'count()' },
  { q: '{ kind = server } | avg(duration) > 1ms', names: 'avg' },
  { q: '{ kind = server } | by(resource.service.name)', names: 'by(' },
  { q: '{ event:name = "cache miss" }', names: 'event:name' },
];

/** Unparsable TraceQL and the offending text, whose column (1-based) the 400 names. */
export const unparsableQueries: readonly { readonly q: string; readonly at: number }[] = [
  { q: '{ span.http.method = }', at: '{ span.http.method = '.length },
  { q: '{ name = "x" }}', at: '{ name = "x" }'.length },
  { q: '{ .a = 1 && }', at: '{ .a = 1 && '.length },
];
