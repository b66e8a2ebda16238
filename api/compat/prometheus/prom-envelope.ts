// Prometheus' response envelope (web/api/v1): {"status":"success","data":…,
// "warnings":[…]} or {"status":"error","errorType":…,"error":…}, with the
// HTTP status each error type has there. Every answer of /prometheus is
// written here.
import type Koa from 'koa';
import type { ApiError } from '../../http/api-error.ts';
import { retryAfterSeconds } from '../../http/reply.ts';
import type { CompatState } from '../compat-api.ts';

export type PromErrorType = 'bad_data' | 'execution' | 'timeout' | 'canceled' | 'internal' | 'unavailable' | 'not_found' | 'too_many_requests';

export interface PromError {
  readonly type: PromErrorType;
  readonly message: string;
}

const statusOf: Readonly<Record<PromErrorType, number>> = {
  bad_data: 400,
  execution: 422,
  timeout: 503,
  canceled: 499,
  internal: 500,
  unavailable: 503,
  not_found: 404,
  too_many_requests: 429,
};

export const badData = (message: string): PromError => ({ type: 'bad_data', message });
export const execution = (message: string): PromError => ({ type: 'execution', message });

/** A query runner's failure in Prometheus' terms. */
export function fromApiError(e: ApiError): PromError {
  switch (e.code) {
    case 'invalid_request':
      return badData(e.message);
    case 'rate_limited':
      return { type: 'too_many_requests', message: e.message };
    case 'unavailable':
      return { type: 'unavailable', message: e.message };
    case 'not_found':
      return { type: 'not_found', message: e.message };
    default:
      return { type: 'internal', message: e.message };
  }
}

/** The error type of an HTTP status the compatibility mount answers itself (tenant selection, unknown paths). */
function typeOfStatus(status: number): PromErrorType {
  if (status === 404) return 'not_found';
  if (status === 429) return 'too_many_requests';
  if (status >= 500) return status === 503 ? 'unavailable' : 'internal';
  return 'bad_data';
}

type Ctx = Koa.ParameterizedContext<CompatState>;

export function writeSuccess(ctx: Ctx, data: unknown, warnings: readonly string[] = [], infos: readonly string[] = []): void {
  ctx.status = 200;
  ctx.type = 'application/json';
  // Prometheus 3 omits each list when it is empty.
  ctx.body = { status: 'success', data, ...(warnings.length === 0 ? {} : { warnings }), ...(infos.length === 0 ? {} : { infos }) };
}

export function writeError(ctx: Ctx, error: PromError): void {
  ctx.status = statusOf[error.type];
  ctx.type = 'application/json';
  // The one Retry-After policy of every API (reply.ts): 429 and 503 say when to come back.
  const retryAfter =
    error.type === 'too_many_requests' ? retryAfterSeconds.rate_limited : error.type === 'unavailable' ? retryAfterSeconds.unavailable : undefined;
  if (retryAfter !== undefined) ctx.set('retry-after', String(retryAfter));
  ctx.body = { status: 'error', errorType: error.type, error: error.message };
}

/** The mount's own failures (status and message) in the envelope. */
export function writeStatus(ctx: Ctx, status: number, message: string): void {
  writeError(ctx, { type: typeOfStatus(status), message });
  ctx.status = status;
}
