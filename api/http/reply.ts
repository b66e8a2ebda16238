// The one adapter from results to HTTP: a value becomes a JSON 200, an
// ApiError its status and the error envelope with the request id.
import type { ParameterizedContext } from 'koa';
import type { Result } from '../../src/result.ts';
import type { ApiError } from './api-error.ts';
import { errorBody, errorStatus } from './api-error.ts';
import type { ApiState } from './api-context.ts';

type Context = ParameterizedContext<ApiState>;

/** Writes an API error: its status, the error envelope, and `WWW-Authenticate` on 401. */
export function sendError(ctx: Context, error: ApiError): void {
  ctx.status = errorStatus[error.code];
  ctx.body = errorBody(error, ctx.state.requestId);
  if (error.code === 'unauthorized') ctx.set('www-authenticate', 'Bearer');
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
