// Issue 33, the Tempo part, in the real `all` process on embedded
// ClickHouse: a tenant with 400,000 spans searches all of them (TraceQL over
// every span, a regular expression over an attribute of 5,000 values, the
// trace-level join, spansets joined by && and ||, the legacy tag search, tag
// names and values). Each answers within the tenant's time limit with 200
// or a 4xx naming the limit it hit; another tenant's trivial Tempo query
// issued right after answers in under a second; and the process's peak RSS
// (VmHWM, from /proc) stays under TENANTRY_MEMORY_LIMIT_BYTES.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';
import { preloadSpans, spansPerTrace } from './support/preload-spans.ts';

const spans = 400_000;
const memoryLimit = 1024 ** 3;
const tenantTimeoutSeconds = 10;
const key = 'tempo-heavy-read-0123456789abcdef';

/** Peak resident set of `pid` so far, in bytes (VmHWM: the kernel's own high-water mark). */
function peakRss(pid: number): number {
  const line =
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmHWM:')) ?? '';
  return Number(/(\d+) kB/.exec(line)?.[1] ?? 0) * 1024;
}

interface Answer {
  readonly status: number;
  readonly ms: number;
  readonly text: string;
}

/** A 4xx may name: a statement's memory or result bound, or one of the API's own limits. */
const namesALimit = /max_memory_usage|max_result_rows|max_result_bytes|max_rows_to_read|limit|maxQueryDays|more than/;

describe("Tempo API: a search over all of a tenant's spans is bounded", function () {
  this.timeout(300_000);
  let dataDir: string;
  let tenantry: TenantryProcess | undefined;
  let api = '';

  const ask = async (tenant: string, path: string, params: Record<string, string>): Promise<Answer> => {
    const started = Date.now();
    const response = await fetch(`${api}/tempo${path}?${new URLSearchParams(params).toString()}`, {
      headers: { authorization: `Bearer ${key}`, 'x-scope-orgid': tenant },
    });
    const text = await response.text();
    return { status: response.status, ms: Date.now() - started, text };
  };

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tenantry-tempo-heavy-'));
    await preloadSpans(dataDir, 'heavy', spans);
    tenantry = startTenantry(
      ['all'],
      testEnvironment(dataDir, {
        TENANTRY_MEMORY_LIMIT_BYTES: String(memoryLimit),
        TENANTRY_TENANT_QUERY_TIMEOUT_SECONDS: String(tenantTimeoutSeconds),
        TENANTRY_API_KEYS: JSON.stringify([{ key, scopes: ['read'], tenants: ['heavy', 'light'] }]),
      }),
    );
    api = `http://127.0.0.1:${(await tenantry.started(120_000))['api'] ?? 0}`;
  });

  after(async () => {
    await tenantry?.stop('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it("answers each search over all spans within the tenant's time limit with 200 or a 4xx naming the limit; another tenant answers in under 1 s right after", async () => {
    const now = Math.floor(Date.now() / 1000);
    const day = { start: String(now - 86_400), end: String(now) };
    const traces = spans / spansPerTrace;
    // The data is there: every trace is found by a search bounded to fewer results than the data holds.
    const all = await ask('heavy', '/api/search', { q: '{ }', ...day, limit: '10000', spss: '1' });
    expect(all.status, all.text.slice(0, 300)).to.equal(200);
    expect((JSON.parse(all.text) as { traces: unknown[] }).traces, `a search over ${traces} traces returns its limit`).to.have.length(10_000);

    const heavy: [string, string, Record<string, string>][] = [
      ['every span, 10,000 traces, 1,000 spans each', '/api/search', { q: '{ }', ...day, limit: '10000', spss: '1000' }],
      ['a regular expression over user_id', '/api/search', { q: '{ span.user_id =~ ".*7.*" }', ...day, limit: '10000', spss: '1000' }],
      ['the trace-level join', '/api/search', { q: '{ traceDuration > 1ms && rootServiceName =~ "svc-.*" }', ...day, limit: '10000', spss: '1000' }],
      [
        'spansets joined by && and ||, selected fields',
        '/api/search',
        { q: '{ name = "op-3" } && { status = error } || { kind = server } | select(span.user_id, span.http.method)', ...day, limit: '10000', spss: '1000' },
      ],
      [
        'the legacy tag search with durations',
        '/api/search',
        { tags: 'service.name=svc http.method=GET', minDuration: '1ms', maxDuration: '2562047h', ...day, limit: '10000' },
      ],
      ['tag names over every span', '/api/v2/search/tags', day],
      ['user_id values over every span', '/api/v2/search/tag/span.user_id/values', day],
      ['user_id values of spans a query matches', '/api/v2/search/tag/span.user_id/values', { q: '{ span.http.method = "GET" && duration > 1ms }', ...day }],
    ];
    const answers: Record<string, string> = {};
    for (const [what, path, params] of heavy) {
      const answer = await ask('heavy', path, params);
      answers[what] = `${answer.status} in ${answer.ms} ms${answer.status === 200 ? '' : ` ${answer.text.slice(0, 120)}`}`;
      expect(answer.status === 200 || (answer.status >= 400 && answer.status < 500 && namesALimit.test(answer.text)), `${what}: ${answers[what]}`).to.equal(
        true,
      );
      expect(answer.ms, `${what} answered within the tenant's ${tenantTimeoutSeconds} s`).to.be.below(tenantTimeoutSeconds * 1000 + 1000);
      const trivial = await ask('light', '/api/search', { q: '{ name = "x" }' });
      expect(trivial.status, trivial.text).to.equal(200);
      expect(trivial.ms, `the light tenant's trivial search right after ${what}`).to.be.below(1000);
    }
    const peak = peakRss(tenantry?.child.pid ?? 0);
    console.log(`      peak RSS ${Math.round(peak / 2 ** 20)} MiB; ${JSON.stringify(answers, undefined, 2)}`);
    expect(peak, `peak RSS ${Math.round(peak / 2 ** 20)} MiB`).to.be.below(memoryLimit);
  });
});
