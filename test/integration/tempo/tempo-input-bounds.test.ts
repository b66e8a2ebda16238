// Issue 33: no input a client can send to /tempo gives a 5xx. Every numeric
// input of every endpoint (limit, spss, start/end, minDuration/maxDuration,
// TraceQL's duration literals and numbers, the tag endpoints' limit and
// maxStaleValues), trace ids, and TraceQL's nesting and length have a range;
// beyond it the answer is a 400 in Tempo's shape (text/plain) naming the
// parameter. A parameter given twice is a 400 (docs/api.md, "Compatibility
// APIs"). A bounded fast-check run over TraceQL-ish text and parameter
// values asserts that nothing answers 5xx. All against a real `all` process.
import { expect } from 'chai';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';
import { canonicalSearch } from './support/tempo-client.ts';
import { exportSpans, traceCorpus, traceIds } from './support/trace-corpus.ts';

const tenant = 'tempo-bounds';
const keys = { ingest: 'tempo-bounds-ingest-0123456789', read: 'tempo-bounds-read-0123456789' };
const corpus = traceCorpus(tenant, 3, Date.now());
const nowS = Math.floor(Date.now() / 1000);
const window = { start: String(nowS - 3600), end: String(nowS + 60) };

interface Answer {
  readonly status: number;
  readonly type: string;
  readonly text: string;
}

/** One input beyond its range: the path under /tempo, its parameters, and what the 400's message must name. */
interface Beyond {
  readonly what: string;
  readonly path: string;
  readonly params: Record<string, string>;
  readonly names: RegExp;
}

const nestedParens = (depth: number): string => `{ ${'('.repeat(depth)}name = "a"${')'.repeat(depth)} }`;
const search = '/api/search';
const valuesV2 = '/api/v2/search/tag/span.http.method/values';

const beyond: readonly Beyond[] = [
  { what: 'limit=1e308', path: search, params: { q: '{ }', limit: '1e308' }, names: /limit/ },
  { what: 'limit=2^64', path: search, params: { q: '{ }', limit: '18446744073709551616' }, names: /limit/ },
  { what: 'limit=-1', path: search, params: { q: '{ }', limit: '-1' }, names: /limit/ },
  { what: 'limit=10001', path: search, params: { q: '{ }', limit: '10001' }, names: /limit/ },
  { what: 'spss=1e308', path: search, params: { q: '{ }', spss: '1e308' }, names: /spss/ },
  { what: 'spss=2^64', path: search, params: { q: '{ }', spss: '18446744073709551616' }, names: /spss/ },
  { what: 'start=1e308', path: search, params: { q: '{ }', start: '1e308' }, names: /start/ },
  { what: 'start=year 33658', path: search, params: { q: '{ }', start: '999999999999' }, names: /start/ },
  { what: 'end=30 digits', path: search, params: { q: '{ }', start: window.start, end: '9'.repeat(30) }, names: /end/ },
  { what: 'end=year 33658 on a search', path: search, params: { q: '{ }', start: window.start, end: '999999999999' }, names: /end/ },
  { what: 'end=year 33658 on a trace lookup', path: `/api/traces/${'a'.repeat(32)}`, params: { end: '999999999999' }, names: /end/ },
  { what: 'start=-1', path: search, params: { q: '{ }', start: '-1' }, names: /start/ },
  { what: 'tags end=1e308', path: '/api/search/tags', params: { end: '1e308' }, names: /end/ },
  { what: 'v2 tags start=NaN', path: '/api/v2/search/tags', params: { start: 'NaN' }, names: /start/ },
  { what: 'tag values end=Infinity', path: valuesV2, params: { end: 'Infinity' }, names: /end/ },
  { what: 'minDuration=1e308s', path: search, params: { minDuration: '1e308s' }, names: /minDuration/ },
  { what: 'maxDuration=2^64ns', path: search, params: { maxDuration: '18446744073709551616ns' }, names: /maxDuration/ },
  { what: 'minDuration=99999999999h', path: search, params: { minDuration: '99999999999h' }, names: /minDuration/ },
  { what: 'maxDuration=400 digits.5s', path: search, params: { maxDuration: `${'9'.repeat(400)}.5s` }, names: /maxDuration/ },
  { what: 'TraceQL duration > 1e308s', path: search, params: { q: '{ duration > 1e308s }' }, names: /TraceQL|q\b/ },
  { what: 'TraceQL duration > 2^64ns', path: search, params: { q: '{ duration > 18446744073709551616ns }' }, names: /duration/ },
  { what: 'TraceQL traceDuration > 99999999999h', path: search, params: { q: '{ traceDuration > 99999999999h }' }, names: /duration/ },
  { what: 'TraceQL span.x > 1e400', path: search, params: { q: '{ span.x > 1e400 }' }, names: /TraceQL/ },
  { what: 'TraceQL span.x > 10^20', path: search, params: { q: '{ span.x > 100000000000000000000 }' }, names: /integer|TraceQL/ },
  { what: 'TraceQL span.x = 400-digit float', path: search, params: { q: `{ span.x = ${'9'.repeat(400)}.5 }` }, names: /TraceQL/ },
  { what: 'TraceQL status = 5 (a comparison it cannot run)', path: search, params: { q: '{ status = 5 }' }, names: /status/ },
  { what: 'TraceQL span.x > 1s (attribute against a duration)', path: search, params: { q: '{ span.x > 1s }' }, names: /duration/ },
  { what: 'TraceQL nested 50 deep', path: search, params: { q: nestedParens(50) }, names: /TraceQL|nest|deep/ },
  { what: 'TraceQL nested 300 deep', path: search, params: { q: nestedParens(300) }, names: /TraceQL|nest|deep/ },
  { what: 'TraceQL of 10,000 characters', path: search, params: { q: `{ name = "${'x'.repeat(10_000)}" }` }, names: /TraceQL|long|characters/ },
  {
    what: 'TraceQL of 400 conditions',
    path: search,
    params: { q: `{ ${Array.from({ length: 400 }, (_, i) => `span.k${i} = "v"`).join(' || ')} }` },
    names: /TraceQL|conditions|complex/,
  },
  {
    what: 'TraceQL of 60 spansets',
    path: search,
    params: { q: Array.from({ length: 60 }, (_, i) => `{ span.k${i} = "v" }`).join(' || ') },
    names: /TraceQL|spanset|complex/,
  },
  { what: 'legacy search with 65 tags', path: search, params: { tags: Array.from({ length: 65 }, (_, i) => `k${i}=v`).join(' ') }, names: /tags/ },
  { what: 'legacy search tag with a bad escape', path: search, params: { tags: 'a="\\q"' }, names: /tags/ },
  { what: 'tag values q nested 50 deep', path: valuesV2, params: { q: nestedParens(50) }, names: /TraceQL|nest|deep/ },
  { what: 'tag values q duration > 2^64ns', path: valuesV2, params: { q: '{ duration > 18446744073709551616ns }' }, names: /duration/ },
  { what: 'tag values q status = 5', path: valuesV2, params: { q: '{ status = 5 }' }, names: /status/ },
  { what: 'tag values limit=1e308', path: valuesV2, params: { limit: '1e308' }, names: /limit/ },
  { what: 'tag values limit=2^64', path: '/api/search/tag/http.method/values', params: { limit: '18446744073709551616' }, names: /limit/ },
  { what: 'tag values maxStaleValues=-1', path: valuesV2, params: { maxStaleValues: '-1' }, names: /maxStaleValues/ },
  { what: 'tags limit=1e308', path: '/api/v2/search/tags', params: { limit: '1e308' }, names: /limit/ },
  { what: 'tags maxStaleValues=2^64', path: '/api/search/tags', params: { maxStaleValues: '18446744073709551616' }, names: /maxStaleValues/ },
  { what: 'trace id of 33 digits', path: `/api/traces/${'a'.repeat(33)}`, params: {}, names: /trace ID/i },
  { what: 'trace id of 200 digits (v2)', path: `/api/v2/traces/${'1'.repeat(200)}`, params: {}, names: /trace ID/i },
  { what: 'trace id with a non-hex character', path: '/api/v2/traces/abcg', params: {}, names: /trace ID/i },
];

/** Inputs at the edge of their range: answered. */
const within: readonly { what: string; path: string; params: Record<string, string> }[] = [
  { what: 'limit=10000 spss=1000', path: search, params: { q: '{ }', ...window, limit: '10000', spss: '1000' } },
  { what: 'maxDuration=2562047h (under 2^63 ns)', path: search, params: { ...window, maxDuration: '2562047h' } },
  { what: 'minDuration=0s', path: search, params: { ...window, minDuration: '0s' } },
  { what: 'TraceQL duration < 2562047h', path: search, params: { q: '{ duration < 2562047h }', ...window } },
  { what: 'TraceQL span.x > 2^53 - 1', path: search, params: { q: '{ span.x > 9007199254740991 }', ...window } },
  { what: 'TraceQL nested 16 deep', path: search, params: { q: nestedParens(16), ...window } },
  {
    what: 'TraceQL of 128 conditions',
    path: search,
    params: { q: `{ ${Array.from({ length: 128 }, (_, i) => `span.k${i} =~ "v.*"`).join(' || ')} }`, ...window },
  },
  {
    what: 'TraceQL of 32 spansets',
    path: search,
    params: { q: Array.from({ length: 32 }, (_, i) => `{ span.k${i} = "v" && duration > 1ms }`).join(' || '), ...window },
  },
  { what: 'TraceQL of 8,000 characters', path: search, params: { q: `{ name = "${'x'.repeat(7_980)}" }`, ...window } },
  { what: 'legacy search with 64 tags', path: search, params: { tags: Array.from({ length: 64 }, (_, i) => `k${i}=v`).join(' '), ...window } },
  { what: 'tag values limit=1', path: valuesV2, params: { limit: '1', maxStaleValues: '0', ...window } },
  { what: 'tags limit=1', path: '/api/v2/search/tags', params: { limit: '1', maxStaleValues: '100', ...window } },
  { what: 'trace id of 32 digits', path: `/api/v2/traces/${traceIds(corpus)[0] ?? ''}`, params: {} },
  { what: 'end year 2199 on a lookup', path: `/api/traces/${traceIds(corpus)[0] ?? ''}`, params: { end: '7258118399' } },
];

describe('Tempo API: inputs beyond their range (issue 33)', function () {
  this.timeout(300_000);
  let dir: string;
  let tenantry: TenantryProcess;
  let api: string;
  const headers = { authorization: `Bearer ${keys.read}`, 'X-Scope-OrgID': tenant };

  async function get(path: string, params: Record<string, string> | string): Promise<Answer> {
    const query = typeof params === 'string' ? params : new URLSearchParams(params).toString();
    const response = await fetch(`${api}/tempo${path}${query === '' ? '' : `?${query}`}`, { headers });
    return { status: response.status, type: response.headers.get('content-type') ?? '', text: await response.text() };
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tenantry-tempo-bounds-'));
    tenantry = startTenantry(
      ['all'],
      testEnvironment(join(dir, 'tenantry'), {
        TENANTRY_API_KEYS: JSON.stringify([
          { key: keys.ingest, scopes: ['ingest'], tenants: ['*'] },
          { key: keys.read, scopes: ['read'], tenants: [tenant] },
        ]),
      }),
    );
    const ports = await tenantry.started(120_000);
    api = `http://127.0.0.1:${ports['api'] ?? 0}`;
    await exportSpans(`http://127.0.0.1:${ports['otlpHttp'] ?? 0}/v1/traces`, { authorization: `Bearer ${keys.ingest}` }, corpus);
    // Tenantry reports no event when an accepted span becomes searchable: poll, bounded.
    const deadline = Date.now() + 60_000;
    let seen = 0;
    while (Date.now() < deadline && seen < 3) {
      const answer = await get(search, { q: '{ }', ...window });
      seen = answer.status === 200 ? canonicalSearch(JSON.parse(answer.text)).length : 0;
      if (seen < 3) await new Promise((r) => setTimeout(r, 250));
    }
    expect(seen, 'the corpus is searchable').to.equal(3);
  });

  after(async () => {
    await tenantry.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers every input beyond its range with a 400 in Tempo's shape naming the parameter", async () => {
    const wrong: string[] = [];
    for (const c of beyond) {
      const answer = await get(c.path, c.params);
      const shaped = answer.status === 400 && answer.type.startsWith('text/plain') && c.names.test(answer.text);
      if (!shaped) wrong.push(`${c.what}: ${answer.status} ${answer.type} ${answer.text.slice(0, 200)}`);
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it('answers inputs at the edge of their range', async () => {
    const wrong: string[] = [];
    for (const c of within) {
      const answer = await get(c.path, c.params);
      if (answer.status !== 200) wrong.push(`${c.what}: ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
    const one = await get(valuesV2, { limit: '1', ...window });
    expect((JSON.parse(one.text) as { tagValues: unknown[] }).tagValues, 'tag values limit=1').to.have.length(1);
  });

  it("refuses a parameter given twice, in Tempo's shape, as the other compatibility APIs do", async () => {
    const twice = await get(search, 'q=%7B%7D&limit=1&limit=2');
    expect([twice.status, twice.type.startsWith('text/plain'), twice.text.includes('"limit"')], twice.text).to.deep.equal([400, true, true]);
    const q = await get(search, 'q=%7B%7D&q=%7B%7D');
    expect([q.status, q.text.includes('"q"')], q.text).to.deep.equal([400, true]);
  });

  it("answers the mount's own refusals in Tempo's shape", async () => {
    const unknown = await get('/api/nope', {});
    expect([unknown.status, unknown.type.startsWith('text/plain')], unknown.text).to.deep.equal([404, true]);
    const post = await fetch(`${api}/tempo/api/search`, { method: 'DELETE', headers });
    expect([post.status, (post.headers.get('content-type') ?? '').startsWith('text/plain')], await post.text()).to.deep.equal([405, true]);
    const noKey = await fetch(`${api}/tempo/api/search`);
    expect([noKey.status, (noKey.headers.get('content-type') ?? '').startsWith('text/plain')]).to.deep.equal([401, true]);
  });

  it('never answers 5xx to generated TraceQL and parameter values (fast-check, bounded)', async () => {
    const numberText = fc.oneof(
      fc.constantFrom(window.start, window.end, '1', '20', '10000', '1795000000.5'),
      fc.constantFrom(
        '0',
        '-0',
        '-1',
        '1e308',
        '-1e308',
        '1e-308',
        'NaN',
        'Infinity',
        '18446744073709551616',
        '9223372036854775808',
        '9223372036854775807',
        '0x10',
        '1_000',
        '',
        ' ',
        '.5',
        '5.',
        '1e',
        'e5',
      ),
      fc.double().map(String),
      fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
      fc.integer().map(String),
    );
    const duration = fc.oneof(
      fc
        .tuple(
          fc.oneof(fc.nat().map(String), fc.bigInt({ min: 0n, max: 2n ** 80n }).map(String), fc.constantFrom('1.5', '.5', '0', '9'.repeat(30))),
          fc.constantFrom('ns', 'us', 'µs', 'ms', 's', 'm', 'h', 'd', ''),
        )
        .map(([n, u]) => `${n}${u}`),
      fc.constantFrom('1h30m', '1.5h', '1e308s', `${'9'.repeat(50)}.5s`, '0s', '-5m', '2562047h', '2562048h'),
    );
    const field = fc.constantFrom(
      'name',
      'status',
      'kind',
      'duration',
      'traceDuration',
      'rootName',
      'rootServiceName',
      'statusMessage',
      'span.http.method',
      'resource.service.name',
      '.x',
      'span.db.rows',
      'span:duration',
      'event.name',
      'parent.x',
    );
    const value = fc.oneof(
      numberText.filter((s) => s.trim() !== ''),
      duration,
      fc.constantFrom('"GET"', '`a.*`', '"("', '"[z-a]"', 'error', 'ok', 'server', 'true', 'nil', '"\\q"', "'x'"),
    );
    const op = fc.constantFrom('=', '!=', '>', '>=', '<', '<=', '=~', '!~', '>>', '&&');
    const comparison = fc.tuple(field, op, value).map(([f, o, v]) => `${f} ${o} ${v}`);
    const filter = fc.array(comparison, { minLength: 0, maxLength: 4 }).chain((cs) => fc.constantFrom('&&', '||').map((j) => `{ ${cs.join(` ${j} `)} }`));
    const traceQl = fc.oneof(
      filter,
      fc.tuple(filter, fc.constantFrom('&&', '||', '>>', '~', '|'), filter).map(([a, j, b]) => `${a} ${j} ${b}`),
      fc.tuple(filter, fc.constantFrom('| select(span.x)', '| count() > 2', '| by(name)', '| rate()')).map(([a, p]) => `${a} ${p}`),
      fc.nat({ max: 80 }).map((n) => nestedParens(n)),
      fc.string({ maxLength: 40 }),
    );
    // A parameter is mostly absent (or a sensible value), so most requests reach the statement instead of a 400 on another parameter.
    const sometimes = <T>(arb: fc.Arbitrary<T>, sensible?: fc.Arbitrary<T>): fc.Arbitrary<T | null> =>
      fc.oneof({ weight: 12, arbitrary: sensible === undefined ? fc.constant(null) : fc.oneof(fc.constant(null), sensible) }, { weight: 1, arbitrary: arb });
    const params = fc.record({
      q: fc.option(traceQl, { freq: 8 }),
      start: sometimes(numberText, fc.constant(window.start)),
      end: sometimes(numberText, fc.constant(window.end)),
      limit: sometimes(numberText),
      spss: sometimes(numberText),
      minDuration: sometimes(duration),
      maxDuration: sometimes(duration),
      tags: sometimes(fc.constantFrom('service.name=shop', 'a="b c"', '"oops', 'k=')),
      maxStaleValues: sometimes(numberText),
      scope: sometimes(fc.constantFrom('span', 'resource', 'intrinsic', 'x')),
    });
    const id = fc.oneof(fc.constantFrom(...traceIds(corpus)), fc.stringMatching(/^[0-9a-fA-Fg-z]{1,40}$/));
    const path = fc.oneof(
      { weight: 6, arbitrary: fc.constant(search) },
      {
        weight: 3,
        arbitrary: fc.constantFrom('/api/search/tag/http.method/values', valuesV2, '/api/v2/search/tag/status/values', '/api/v2/search/tag/duration/values'),
      },
      { weight: 1, arbitrary: fc.constantFrom('/api/search/tags', '/api/v2/search/tags') },
      { weight: 1, arbitrary: id.map((t) => `/api/traces/${t}`) },
      { weight: 1, arbitrary: id.map((t) => `/api/v2/traces/${t}`) },
    );
    const failures: string[] = [];
    await fc.assert(
      fc.asyncProperty(path, params, async (p, raw) => {
        const sent: Record<string, string> = {};
        for (const [name, v] of Object.entries(raw)) if (v !== null) sent[name] = v;
        const answer = await get(p, sent);
        if (answer.status >= 500 || (answer.status >= 400 && !answer.type.startsWith('text/plain')))
          failures.push(`${p} ${JSON.stringify(sent).slice(0, 300)}: ${answer.status} ${answer.text.slice(0, 200)}`);
        return answer.status < 500;
      }),
      { numRuns: 300, seed: 33, endOnFailure: true },
    );
    expect(failures).to.deep.equal([]);
  });
});
