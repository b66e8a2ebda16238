// Loki's answers: a JSON body with 200, or an error as Loki writes one, the
// status and a text/plain message (reference/loki-http-api). Handlers return
// a Result; every answer of /loki, the mount's own refusals included, is
// written here.
import type Koa from 'koa';
import type { ApiError } from '../../http/api-error.ts';
import { errorStatus } from '../../http/api-error.ts';
import { retryAfterSeconds } from '../../http/reply.ts';
import type { CompatState } from '../compat-api.ts';

/** A refusal in Loki's terms: the HTTP status, its message, and when to retry (limits, an unavailable store). */
export interface LokiError {
  readonly status: number;
  readonly message: string;
  readonly retryAfterSeconds?: number;
}

/** A client error: 400 with Loki's (or Tenantry's) message, which names the parameter. */
export const badRequest = (message: string): LokiError => ({ status: 400, message });

/** A failure of the shared query path (limits, timeouts, the store) with /v1's status and Retry-After. */
export function fromApiError(error: ApiError): LokiError {
  const seconds = retryAfterSeconds[error.code];
  return { status: errorStatus[error.code], message: error.message, ...(seconds === undefined ? {} : { retryAfterSeconds: seconds }) };
}

type Ctx = Koa.ParameterizedContext<CompatState>;

/** The body of Loki's query and label endpoints: {"status":"success","data":…}. */
export const successBody = (data: unknown): { status: 'success'; data: unknown } => ({ status: 'success', data });

export function writeSuccess(ctx: Ctx, body: unknown): void {
  ctx.status = 200;
  ctx.body = body;
}

export function writeError(ctx: Ctx, error: LokiError): void {
  if (error.retryAfterSeconds !== undefined) ctx.set('retry-after', String(error.retryAfterSeconds));
  ctx.status = error.status;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = `${error.message}\n`;
}

/** The mount's own refusals (tenant selection, unknown paths and methods), as CompatApi.fail. */
export function writeStatus(ctx: Ctx, status: number, message: string): void {
  writeError(ctx, { status, message });
}
