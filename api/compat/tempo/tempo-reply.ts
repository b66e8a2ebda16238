// Tempo's answers: JSON, text or protobuf with 200, or an error as Tempo
// writes one, the status and a text/plain message (docs/tempo.md).
// Handlers return a Result; every answer of /tempo, the mount's own
// refusals included, is written here.
import type Koa from 'koa';
import type { ApiError } from '../../http/api-error.ts';
import { errorStatus } from '../../http/api-error.ts';
import { retryAfterSeconds } from '../../http/reply.ts';
import type { CompatState } from '../compat-api.ts';

/** A refusal in Tempo's terms: the HTTP status, its message, and when to retry (limits, an unavailable store). */
export interface TempoError {
  readonly status: number;
  readonly message: string;
  readonly retryAfterSeconds?: number;
}

/** What a 200 carries: a JSON body, Tempo's protobuf, or text (the echo). */
export type TempoBody =
  | { readonly kind: 'json'; readonly body: unknown }
  | { readonly kind: 'protobuf'; readonly body: Uint8Array }
  | { readonly kind: 'text'; readonly body: string };

/** A client error: 400 with a message naming the parameter. */
export const badRequest = (message: string): TempoError => ({ status: 400, message });

/** What is not there (a trace), as Tempo says it. */
export const notFound = (message: string): TempoError => ({ status: 404, message });

/** A failure of the shared query path (limits, timeouts, the store) with /v1's status and Retry-After. */
export function fromApiError(error: ApiError): TempoError {
  const seconds = retryAfterSeconds[error.code];
  return { status: errorStatus[error.code], message: error.message, ...(seconds === undefined ? {} : { retryAfterSeconds: seconds }) };
}

export const json = (body: unknown): TempoBody => ({ kind: 'json', body });

type Ctx = Koa.ParameterizedContext<CompatState>;

/** Writes a 200 of the handler's kind. */
export function writeAnswer(ctx: Ctx, answer: TempoBody): void {
  ctx.status = 200;
  if (answer.kind === 'json') {
    ctx.type = 'application/json';
    ctx.body = answer.body;
  } else if (answer.kind === 'protobuf') {
    ctx.type = 'application/protobuf';
    ctx.body = Buffer.from(answer.body);
  } else {
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = answer.body;
  }
}

export function writeError(ctx: Ctx, error: TempoError): void {
  if (error.retryAfterSeconds !== undefined) ctx.set('retry-after', String(error.retryAfterSeconds));
  ctx.status = error.status;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = `${error.message}\n`;
}

/** The mount's own refusals (tenant selection, unknown paths and methods), as CompatApi.fail. */
export function writeStatus(ctx: Ctx, status: number, message: string): void {
  writeError(ctx, { status, message });
}
