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
import { invalidRequest, unsupportedMediaType } from '../http/api-error.ts';
import { bodyReader, mediaType } from '../http/request-body.ts';
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

/** The form body's fields as pairs; none for a request without one. */
async function bodyPairs(ctx: CompatContext): Promise<Result<[string, string][], ApiError>> {
  const body = await readBody(ctx, ctx.state.bodyDeadline);
  if (!body.ok) return body;
  if (body.value === undefined) return ok([]);
  // The shared reader also takes JSON; these APIs read forms only.
  if (mediaType(ctx.get('content-type')) !== form) return fail(unsupportedMediaType(`request body must be ${form}, not ${mediaType(ctx.get('content-type'))}`));
  return ok(
    Object.entries(body.value as Record<string, string | string[]>).flatMap(([name, v]) =>
      (Array.isArray(v) ? v : [v]).map((one): [string, string] => [name, one]),
    ),
  );
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
