// The one adapter from results to HTTP: a value becomes a JSON 200, an
// ApiError its status and the error envelope with the request id.
import type { ParameterizedContext } from 'koa';
import type { Result } from '../../src/result.ts';
import type { ApiError } from './api-error.ts';
import { errorBody, errorStatus } from './api-error.ts';
import type { ApiState } from './api-context.ts';

type Context = ParameterizedContext<ApiState>;

/** Seconds a client should wait before retrying a 429 or a 503 (the store may need a moment to recover). */
export const retryAfterSeconds: Partial<Record<ApiError['code'], number>> = { rate_limited: 1, unavailable: 5 };

/**
 * Writes an API error: its status, the error envelope, `WWW-Authenticate` on
 * 401 and `Retry-After` on 429 and 503. A server fault's answer never
 * carries details: what went wrong is in the log under the request id.
 */
export function sendError(ctx: Context, error: ApiError): void {
  const status = errorStatus[error.code];
  ctx.status = status;
  ctx.body = errorBody(status >= 500 ? { code: error.code, message: error.message } : error, ctx.state.requestId);
  if (error.code === 'unauthorized') ctx.set('www-authenticate', 'Bearer');
  const retryAfter = retryAfterSeconds[error.code];
  if (retryAfter !== undefined) ctx.set('retry-after', String(retryAfter));
}

/**
 * Writes a handler's result. The value goes to Koa already serialised with
 * its media type set: Koa's own path for objects looks the type up by name
 * on every response.
 */
export function sendResult(ctx: Context, result: Result<unknown, ApiError>): void {
  if (!result.ok) {
    sendError(ctx, result.error);
    return;
  }
  ctx.status = 200;
  ctx.set('Content-Type', 'application/json; charset=utf-8');
  ctx.body = JSON.stringify(result.value);
}
