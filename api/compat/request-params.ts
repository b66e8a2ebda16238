// The parameters of a compatibility API request: the query string and, for a
// POST, an application/x-www-form-urlencoded body (what Grafana's data sources
// send). The body goes through /v1's reader (api/http/request-body.ts), so
// compat and /v1 share its rules: gzip and deflate decoded, the size limit
// counted after decoding (413), 415 for other encodings and media types.
// Repeated parameters follow /v1's rule too: a name given more than once,
// in the query string and the body together, is a 400, except list
// parameters (a name ending in `[]`, e.g. match[], and those an API names),
// whose every value is read (docs/api.md, "Compatibility APIs").
import type { Result } from '../../src/result.ts';
import { fail, ok } from '../../src/result.ts';
import type { ApiError } from '../http/api-error.ts';
import { invalidRequest, requestTimeout, unsupportedMediaType } from '../http/api-error.ts';
import { bodyReader, mediaType, parseFormBody } from '../http/request-body.ts';
import type { BodyDeadline } from '../http/request-body.ts';
import type { CompatContext } from './compat-api.ts';

/** Most bytes a form body may hold, after decoding. */
export const maxFormBytes = 1_048_576;

export interface RequestParams {
  /** The value of a parameter (given at most once, unless it is a list). */
  readonly get: (name: string) => string | undefined;
  /** Every value of a list parameter (e.g. match[]): the body's, then the query string's. */
  readonly all: (name: string) => string[];
}

const form = 'application/x-www-form-urlencoded';
const readBody = bodyReader({ limit: maxFormBytes, formMethods: new Set(['POST']), maxDepth: 32 });

/** The declared length of a POSTed form sent whole and uncompressed (what Grafana sends), within the limit; undefined for any other body. */
function plainFormLength(ctx: CompatContext): number | undefined {
  const headers = ctx.req.headers;
  if (ctx.method !== 'POST' || headers['transfer-encoding'] !== undefined || mediaType(headers['content-type']) !== form) return undefined;
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return undefined;
  const declared = headers['content-length'] ?? '';
  if (!/^\d{1,7}$/.test(declared)) return undefined;
  const length = Number(declared);
  return length > 0 && length <= maxFormBytes ? length : undefined;
}

/**
 * The body of a plain form read as it arrives, or why not (ended early: 400; past the deadline: 408, its connection
 * closed once answered). The shared reader's answer for such a body, without its general machinery (about 0.05 ms of
 * a dashboard request's 1-2 ms): Node's parser delivers exactly the declared bytes, decoded as UTF-8, a BOM dropped.
 */
function readPlainForm(ctx: CompatContext, length: number, deadline: BodyDeadline | undefined): Promise<Result<string, ApiError>> {
  const req = ctx.req;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let timer: NodeJS.Timeout | undefined;
    const settle = (r: Result<string, ApiError>): void => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onEarlyEnd).off('close', onEarlyEnd);
      resolve(r);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > length) settle(fail(invalidRequest('the request body ended early')));
      else chunks.push(chunk);
    };
    const onEnd = (): void => {
      if (received !== length) {
        settle(fail(invalidRequest('the request body ended early')));
        return;
      }
      const text = Buffer.concat(chunks, received).toString('utf8');
      settle(ok(text.startsWith('\uFEFF') ? text.slice(1) : text));
    };
    const onEarlyEnd = (): void => {
      settle(fail(invalidRequest('the request body ended early')));
    };
    if (deadline !== undefined) {
      timer = setTimeout(
        () => {
          // The rest of the body is not read: the connection closes once the answer is written.
          ctx.set('connection', 'close');
          settle(fail(requestTimeout(`the request body did not arrive within ${deadline.timeoutMs} ms`)));
        },
        Math.max(0, deadline.atMs - performance.now()),
      );
    }
    req.on('data', onData).once('end', onEnd).once('error', onEarlyEnd).once('close', onEarlyEnd);
  });
}

/** Form fields as pairs, each value of a repeated name in order. */
const pairsOf = (fields: Record<string, string | string[]>): [string, string][] =>
  Object.entries(fields).flatMap(([name, v]) => (Array.isArray(v) ? v : [v]).map((one): [string, string] => [name, one]));

/** The form body's fields as pairs; none for a request without one. */
async function bodyPairs(ctx: CompatContext): Promise<Result<[string, string][], ApiError>> {
  const plain = plainFormLength(ctx);
  if (plain !== undefined) {
    const text = await readPlainForm(ctx, plain, ctx.state.bodyDeadline);
    return text.ok ? ok(pairsOf(parseFormBody(text.value))) : text;
  }
  const body = await readBody(ctx, ctx.state.bodyDeadline);
  if (!body.ok) return body;
  if (body.value === undefined) return ok([]);
  // The shared reader also takes JSON; these APIs read forms only.
  if (mediaType(ctx.get('content-type')) !== form) return fail(unsupportedMediaType(`request body must be ${form}, not ${mediaType(ctx.get('content-type'))}`));
  return ok(pairsOf(body.value as Record<string, string | string[]>));
}

const isList = (name: string, lists: ReadonlySet<string>): boolean => name.endsWith('[]') || lists.has(name);

/** The request's parameters, or why they cannot be read (400, 413, 415); `lists` names list parameters besides those ending in `[]`. */
export async function readRequestParams(ctx: CompatContext, lists: ReadonlySet<string> = new Set()): Promise<Result<RequestParams, ApiError>> {
  const body = await bodyPairs(ctx);
  if (!body.ok) return body;
  const values = new Map<string, string[]>();
  for (const [name, value] of [...body.value, ...new URLSearchParams(ctx.querystring)]) {
    const seen = values.get(name);
    if (seen === undefined) values.set(name, [value]);
    else if (isList(name, lists)) seen.push(value);
    else return fail(invalidRequest(`query parameter "${name}" is given more than once`));
  }
  return ok({
    get: (name) => values.get(name)?.[0],
    all: (name) => values.get(name) ?? [],
  });
}

/** readRequestParams with the reason as text (every failure then answered as a 400 by the caller). */
export async function readParams(ctx: CompatContext): Promise<Result<RequestParams, string>> {
  const params = await readRequestParams(ctx);
  return params.ok ? params : fail(params.error.message);
}
