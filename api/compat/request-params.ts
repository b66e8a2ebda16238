// The parameters of a compatibility API request: the query string and, for a
// POST, an application/x-www-form-urlencoded body (what Grafana's data sources
// send), as Prometheus' and Loki's r.FormValue read them (the body's value first).
import type { Result } from '../../src/result.ts';
import { fail, ok } from '../../src/result.ts';
import type { CompatContext } from './compat-api.ts';

/** Most bytes a form body may hold. */
export const maxFormBytes = 1_048_576;

export interface RequestParams {
  /** The first value of a parameter (the body's before the query string's). */
  readonly get: (name: string) => string | undefined;
  /** Every value of a parameter (e.g. match[]). */
  readonly all: (name: string) => string[];
}

async function readForm(ctx: CompatContext): Promise<Result<URLSearchParams, string>> {
  if (ctx.method !== 'POST' || !ctx.is('application/x-www-form-urlencoded')) return ok(new URLSearchParams());
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxFormBytes) return fail(`request body larger than ${maxFormBytes} bytes`);
    chunks.push(chunk);
  }
  return ok(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
}

/** The request's parameters, or why the body could not be read. */
export async function readParams(ctx: CompatContext): Promise<Result<RequestParams, string>> {
  const body = await readForm(ctx);
  if (!body.ok) return body;
  const query = new URLSearchParams(ctx.querystring);
  return ok({
    get: (name) => body.value.get(name) ?? query.get(name) ?? undefined,
    all: (name) => [...body.value.getAll(name), ...query.getAll(name)],
  });
}
