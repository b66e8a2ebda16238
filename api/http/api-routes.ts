// The route table: a route reads as one sentence, path, who may call it,
// what it takes, and a handler from typed input to a Result, e.g.
//   routes.post('/v1/tenants/:tenant_id/logs', scope(['read'], 'tenant_id'), validate(LogQuery), (query, { tenantId }) => …)
// The handler's Result is sent by the one adapter in reply.ts.
import type Router from '@koa/router';
import type { Result } from '../../src/result.ts';
import type { ApiError } from './api-error.ts';
import type { ApiState } from './api-context.ts';
import type { ApiMiddleware, Guard, Validator } from './route-middleware.ts';
import { sendResult } from './reply.ts';

/** A route's own work: the decoded input and the checked caller in, a value or an ApiError out. */
export type Handler<I, C, T> = (input: I, caller: C) => Promise<Result<T, ApiError>>;

type Register = <C, I, T>(path: string, guard: Guard<C>, input: Validator<I>, handler: Handler<I, C, T>) => void;

export interface ApiRoutes {
  readonly get: Register;
  readonly put: Register;
  readonly post: Register;
}

function answer<C, I, T>(guard: Guard<C>, input: Validator<I>, handler: Handler<I, C, T>): ApiMiddleware {
  return async (ctx) => {
    sendResult(ctx, await handler(input.inputOf(ctx.state), guard.callerOf(ctx.state)));
  };
}

/** Typed registration on a Koa router: guard, then validator, then the handler's answer. */
export function apiRoutes(router: Router<ApiState>): ApiRoutes {
  return {
    get: (path, guard, input, handler) => {
      router.get(path, guard, input, answer(guard, input, handler));
    },
    put: (path, guard, input, handler) => {
      router.put(path, guard, input, answer(guard, input, handler));
    },
    post: (path, guard, input, handler) => {
      router.post(path, guard, input, answer(guard, input, handler));
    },
  };
}
