// Request bodies through koa-body (co-body underneath): JSON on every
// body-carrying method, form encoding on the methods that allow it (PUT, for
// /v1/tenants/:id). koa-body enforces the size limit after gzip/deflate
// decompression while streaming (a gzip bomb stops at the limit, 413), strict
// JSON (objects and arrays only; empty is {}), refuses `__proto__` keys, drops
// a BOM and decodes UTF-8. Around it, only what koa-body cannot express:
// - 415 for other media types and content encodings (koa-body skips a body
//   whose type it does not parse, and would read form bodies on every method);
// - form fields read as flat name=value pairs: its `qs` parser nests `a[b]`
//   and drops a `__proto__` field silently, where we want it refused by the
//   codec like any unknown field;
// - a bound on nesting: V8 parses 100k levels, but every later recursive walk
//   (a decode error's rendering of the value, JSON.stringify) would overflow
//   the stack on them, so a body nested deeper than `maxDepth` is a 400;
// - a deadline (TENANTRY_BODY_TIMEOUT_MS from the end of the headers): a body
//   that trickles or stalls is answered 408 and its connection closed then,
//   not when the listener's backstop (headers plus body timeout) fires;
// - its errors mapped to the API's error codes here, once.
import type { ParameterizedContext } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { Result } from '../../src/result.ts';
import { fail, ok } from '../../src/result.ts';
import type { ApiError } from './api-error.ts';
import { invalidRequest, payloadTooLarge, requestTimeout, unsupportedMediaType } from './api-error.ts';

export interface BodyRules {
  /** Most bytes a body may hold, after decompression. */
  readonly limit: number;
  /** Methods that accept application/x-www-form-urlencoded besides JSON. */
  readonly formMethods: ReadonlySet<string>;
  /** Most levels of arrays and objects a JSON body may nest (the body itself is level 1). */
  readonly maxDepth: number;
}

/** When a request's body must have arrived: `atMs` on performance.now()'s clock, `timeoutMs` after the headers. */
export interface BodyDeadline {
  readonly atMs: number;
  readonly timeoutMs: number;
}

/** What koa-body needs of a Koa context (any state). */
type BodyContext = ParameterizedContext<unknown>;

const json = 'application/json';
const form = 'application/x-www-form-urlencoded';
const bodyMethods = new Set(['POST', 'PUT', 'PATCH']);
const encodings = new Set(['identity', 'gzip', 'x-gzip', 'deflate']);
/** Strict JSON starts with an object or an array (RFC 8259 whitespace first). */
const strictJson = /^[ \t\n\r]*[[{]/;

/** The media type of a Content-Type header: lowercase, without parameters ('' when absent). */
export function mediaType(header: string | undefined): string {
  if (header === undefined) return '';
  const semicolon = header.indexOf(';');
  return (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}

/** Form fields; a name given more than once becomes an array (and fails decoding like any other wrong type). */
export function parseFormBody(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(text)) {
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return { ...out };
}

/** Whether `text` is JSON that co-body's strict mode would take but for a `__proto__` key. */
function isStrictJson(text: string): boolean {
  if (!strictJson.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Whether `value` nests arrays and objects deeper than `maxDepth` levels; iterative, so any depth is safe to ask about. */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > maxDepth) return true;
    for (const child of Object.values(node)) if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
  }
  return false;
}

/** The API error for a koa-body (co-body, raw-body, zlib) failure; undefined for anything else, which is a bug. */
function bodyError(error: unknown, encoding: string, limit: number): ApiError | undefined {
  const e = error as { status?: unknown; type?: unknown; body?: unknown; code?: unknown };
  if (e.status === 413) return payloadTooLarge(`request body is larger than ${limit / 1_048_576} MiB`);
  if (e.status === 415) return unsupportedMediaType('request body encoding or charset is not supported');
  // co-body attaches the text it could not parse: refused either as JSON or, when it is JSON, for a `__proto__` key.
  if (typeof e.body === 'string') {
    return isStrictJson(e.body)
      ? invalidRequest('request body must not use the key "__proto__"')
      : invalidRequest('request body is not valid JSON (or not a JSON object)');
  }
  if (e.type === 'request.aborted' || e.type === 'request.size.invalid') return invalidRequest('the request body ended early');
  if (typeof e.code === 'string' && e.code.startsWith('Z_')) return invalidRequest(`request body is not valid ${encoding} data`);
  return undefined;
}

/** A reader of request bodies under `rules`: the parsed body, undefined when the request carries none. */
export function bodyReader(rules: BodyRules): (ctx: BodyContext, deadline?: BodyDeadline) => Promise<Result<unknown, ApiError>> {
  const parse = koaBody({
    json: true,
    jsonTypes: [json],
    jsonStrict: true,
    jsonLimit: rules.limit,
    text: true,
    textTypes: [form],
    textLimit: rules.limit,
    urlencoded: false,
    multipart: false,
    encoding: 'utf-8',
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH],
    patchKoa: true,
    patchNode: false,
  });
  const noop = (): Promise<void> => Promise.resolve();

  /** Parses the body, or 'expired' when `deadline` passes first (the abandoned parse then ends with the connection). */
  const parseBy = async (ctx: BodyContext, deadline: BodyDeadline | undefined): Promise<'parsed' | 'expired'> => {
    const parsing = (parse(ctx, noop) as Promise<unknown>).then(() => 'parsed' as const);
    if (deadline === undefined) return parsing;
    parsing.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(
        () => {
          resolve('expired');
        },
        Math.max(0, deadline.atMs - performance.now()),
      );
    });
    try {
      return await Promise.race([parsing, expired]);
    } finally {
      clearTimeout(timer);
    }
  };

  return async (ctx, deadline) => {
    const headers = ctx.req.headers;
    if (!bodyMethods.has(ctx.method)) return ok(undefined);
    const declared = headers['content-length'];
    const hasBody = headers['transfer-encoding'] !== undefined || (declared !== undefined && declared !== '');
    const type = mediaType(headers['content-type']);
    if (!hasBody || type === '') return ok(undefined);
    const formAllowed = rules.formMethods.has(ctx.method);
    if (type !== json && !(type === form && formAllowed)) {
      if (declared === '0') return ok(undefined);
      return fail(unsupportedMediaType(`request body must be ${json}${formAllowed ? ` or ${form}` : ''}, not ${type}`));
    }
    const encoding = (headers['content-encoding'] ?? 'identity').toLowerCase();
    if (!encodings.has(encoding)) return fail(unsupportedMediaType(`request body content-encoding must be gzip, deflate or identity, not ${encoding}`));
    try {
      if ((await parseBy(ctx, deadline)) === 'expired') {
        // The rest of the body is not read: the connection closes once the answer is written.
        ctx.set('connection', 'close');
        return fail(requestTimeout(`the request body did not arrive within ${deadline?.timeoutMs ?? 0} ms`));
      }
    } catch (error) {
      const mapped = bodyError(error, encoding, rules.limit);
      if (mapped === undefined) throw error;
      return fail(mapped);
    }
    const body: unknown = ctx.request.body;
    if (nestsDeeperThan(body, rules.maxDepth)) return fail(invalidRequest(`request body nests arrays and objects deeper than ${rules.maxDepth} levels`));
    return type === form ? ok(parseFormBody(typeof body === 'string' ? body : '')) : ok(body);
  };
}
