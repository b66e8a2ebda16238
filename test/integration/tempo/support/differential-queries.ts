// The table of the Tempo differential test: every query asked of the real
// Tempo and of Tenantry's /tempo over the same traces (trace-corpus.ts).
// `kind` says how the answers are compared (tempo-client.ts canonical forms).

export interface DifferentialQuery {
  readonly name: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly kind: 'search' | 'limit' | 'values' | 'tagNames';
}

/** Spans per spanset asked for: more than any trace has, so both show every matched span. */
const spss = '50';

const traceql = (q: string, extra: Record<string, string> = {}): DifferentialQuery => ({ name: q, path: '/api/search', params: { q, limit: '100', spss, ...extra }, kind: 'search' });
const tagSearch = (params: Record<string, string>): DifferentialQuery => ({
  name: `tags: ${new URLSearchParams(params).toString()}`, path: '/api/search', params: { limit: '100', ...params }, kind: 'search',
});
const values = (path: string, params: Record<string, string> = {}): DifferentialQuery => ({
  name: `${path}${params['q'] === undefined ? '' : ` q=${params['q']}`}`, path, params, kind: 'values',
});

export const differentialQueries: readonly DifferentialQuery[] = [
  // every intrinsic
  traceql('{ }'),
  traceql('{ true }'),
  traceql('{ name = "render" }'),
  traceql('{ name != "render" && kind = server }'),
  traceql('{ name =~ "SELECT.*" }'),
  traceql('{ name !~ "SELECT.*|render" }'),
  traceql('{ status = error }'),
  traceql('{ status = ok }'),
  traceql('{ status = unset && kind = client }'),
  traceql('{ kind = producer }'),
  traceql('{ span:kind = internal }'),
  traceql('{ duration > 100ms }'),
  traceql('{ duration >= 40ms && duration <= 250ms }'),
  traceql('{ duration < 2ms }'),
  traceql('{ statusMessage = "connection reset" }'),
  traceql('{ rootName = "GET /api/checkout" }'),
  traceql('{ rootServiceName = "shop-cart" }'),
  traceql('{ trace:rootService = "shop-payment" && kind = server }'),
  traceql('{ traceDuration > 1s }'),
  // attributes in each scope, each operator and type
  traceql('{ span.http.method = "GET" }'),
  traceql('{ span.http.status_code >= 500 }'),
  traceql('{ span.http.status_code = 200 || span.http.status_code = 503 }'),
  traceql('{ span.http.status_code != 200 }'),
  traceql('{ span.http.status_code < 203 }'),
  traceql('{ span.http.status_code > 204 && span.http.status_code <= 206 }'),
  traceql('{ span.sample.ratio > 1.0 }'),
  traceql('{ span.sample.ratio >= 2 }'),
  traceql('{ span.cached = true }'),
  traceql('{ .cached = false }'),
  traceql('{ span.http.status_code = "200" }'),
  traceql('{ span.nope != "x" }'),
  traceql('{ resource.service.name = "shop-cart" && span.http.method = "POST" }'),
  traceql('{ resource.deployment.region = "us-east" }'),
  traceql('{ resource.host.cores > 2 }'),
  traceql('{ .service.name =~ "shop-(cart|payment)" }'),
  traceql('{ span.http.route =~ "/api/cart/.*" && span.http.method != "GET" }'),
  traceql('{ span.http.route !~ "/api/cart/.*" && kind = server }'),
  traceql('{ span.template.name = "page-1" || span.db.system = "redis" }'),
  traceql('{ (span.db.rows > 10 || span.db.system = "postgresql") && kind = client }'),
  // between spansets
  traceql('{ span.db.system = "redis" } && { status = error }'),
  traceql('{ span.messaging.system = "kafka" } || { name = "render" }'),
  traceql('{ kind = producer } && { span.template.name = "page-0" } && { resource.deployment.region = "eu-west" }'),
  // select
  traceql('{ span.http.method = "GET" } | select(span.http.route, resource.deployment.region)'),
  traceql('{ kind = client } | select(span.db.rows, name, status)'),
  // limit: as many traces (which ones is Tempo's choice; Tenantry's are the newest, asserted apart)
  { name: '{ span.http.method = "GET" } limit=2', path: '/api/search', params: { q: '{ span.http.method = "GET" }', limit: '2', spss }, kind: 'limit' },
  { name: '{ } limit=5', path: '/api/search', params: { q: '{ }', limit: '5', spss }, kind: 'limit' },
  // the legacy tag search
  tagSearch({ tags: 'http.method=GET' }),
  tagSearch({ tags: 'http.method=GET', minDuration: '1s' }),
  tagSearch({ tags: 'service.name=shop-cart', maxDuration: '100ms' }),
  tagSearch({ tags: 'name=render' }),
  tagSearch({ tags: 'http.status_code=500' }),
  tagSearch({ minDuration: '1500ms' }),
  tagSearch({ tags: 'service.name=cart' }),
  tagSearch({ tags: 'http.method=POST db.system=redis' }),
  // tag names and values
  { name: '/api/search/tags', path: '/api/search/tags', params: {}, kind: 'tagNames' },
  values('/api/search/tag/http.method/values'),
  values('/api/search/tag/service.name/values'),
  values('/api/search/tag/http.status_code/values'),
  values('/api/v2/search/tag/span.http.status_code/values'),
  values('/api/v2/search/tag/status/values'),
  values('/api/v2/search/tag/kind/values'),
  values('/api/v2/search/tag/resource.service.name/values', { q: '{ span.http.method = "GET" }' }),
  values('/api/v2/search/tag/span.cached/values'),
  values('/api/v2/search/tag/span.sample.ratio/values'),
  values('/api/v2/search/tag/name/values'),
  values('/api/v2/search/tag/.http.method/values'),
  values('/api/v2/search/tag/resource.host.cores/values'),
];

/** TraceQL Tempo runs and this API refuses with 400 naming the construct (docs/tempo.md). */
export const unsupportedQueries: readonly { readonly q: string; readonly names: string }[] = [
  { q: '{ span.http.method = "GET" } >> { name = "render" }', names: '>>' },
  { q: '{ kind = server } > { kind = client }', names: '>' },
  { q: '{ kind = client } ~ { name = "render" }', names: '~' },
  { q: '{ kind = server } | count() > 2', names: 'count()' },
  { q: '{ kind = server } | avg(duration) > 1ms', names: 'avg' },
  { q: '{ kind = server } | by(resource.service.name)', names: 'by(' },
  { q: '{ event:name = "cache miss" }', names: 'event:name' },
];
