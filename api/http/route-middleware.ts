// The per-route middleware a route is written with: `scope(...)` says who may
// call it, `validate(Codec)` / `validateQuery(Codec)` what it takes. Each
// either lets the request through with what it established in ctx.state, or
// answers the error itself; each also tells the route table (api-routes.ts)
// how to read what it established, so handlers get typed values.
import type { RouterMiddleware } from '@koa/router';
import type * as t from 'io-ts';
import type { Principal } from '../../src/auth/api-keys.ts';
import { canAccessTenant, hasScope } from '../../src/auth/api-keys.ts';
import type { Result } from '../../src/result.ts';
import { fail, ok } from '../../src/result.ts';
import type { ApiError } from './api-error.ts';
import { forbidden, invalidRequest, notFound, unauthorized } from './api-error.ts';
import type { ApiContext, ApiState } from './api-context.ts';
import type { ClosedType, Props } from './codecs.ts';
import { sendError } from './reply.ts';
import { decodeWith } from './request-decoder.ts';

export type ApiMiddleware = RouterMiddleware<ApiState>;

/** The caller of a route: the key's principal, and the tenant of the path when the route names one. */
export interface Caller {
  readonly principal: Principal;
  /** Aborts once the request's client stopped waiting (its statements are then stopped). */
  readonly abort?: AbortSignal;
  /** The request's id: the runner's log lines about its statements carry it. */
  readonly requestId?: string;
}
export interface TenantCaller extends Caller {
  readonly tenantId: string;
}

/** Authorisation middleware that also reads back the caller it checked. */
export type Guard<C> = ApiMiddleware & { readonly callerOf: (state: ApiState) => C };
/** Decoding middleware that also reads back the input it decoded. */
export type Validator<I> = ApiMiddleware & { readonly inputOf: (state: ApiState) => I };

type Scope = 'read' | 'admin';

/** A middleware from a check: the request goes on when it passes, else the error is the answer. */
function gate(check: (ctx: ApiContext) => Result<unknown, ApiError>): ApiMiddleware {
  return async (ctx, next) => {
    const checked = check(ctx);
    if (!checked.ok) {
      sendError(ctx, checked.error);
      return;
    }
    await next();
  };
}

/**
 * The key needs one of `scopes`. With `tenantParam`, the path's tenant must
 * also be in the key's list, checked first: a tenant outside it is "not
 * found", exactly like one that does not exist, so a key learns nothing
 * about other tenants.
 */
export function scope(scopes: readonly Scope[]): Guard<Caller>;
export function scope(scopes: readonly Scope[], tenantParam: string): Guard<TenantCaller>;
export function scope(scopes: readonly Scope[], tenantParam?: string): Guard<Caller> | Guard<TenantCaller> {
  const middleware = gate((ctx) => {
    const principal = ctx.state.principal;
    if (principal === undefined) return fail(unauthorized());
    if (tenantParam !== undefined) {
      const tenantId = ctx.params[tenantParam] ?? '';
      if (!canAccessTenant(principal, tenantId)) return fail(notFound(`tenant "${tenantId}"`));
      ctx.state.tenantId = tenantId;
    }
    return scopes.some((s) => hasScope(principal, s)) ? ok(undefined) : fail(forbidden(scopes.join('" or "')));
  });
  const principalOf = (state: ApiState): Principal => {
    if (state.principal === undefined) throw new Error('scope() read before it ran');
    return state.principal;
  };
  const callerOf = (state: ApiState): Caller => ({
    principal: principalOf(state),
    requestId: state.requestId,
    ...(state.abort === undefined ? {} : { abort: state.abort }),
  });
  if (tenantParam === undefined) return Object.assign(middleware, { callerOf });
  return Object.assign(middleware, { callerOf: (state: ApiState): TenantCaller => ({ ...callerOf(state), tenantId: state.tenantId ?? '' }) });
}

/** The query string as one value per name, refusing names not in `allowed` and names given twice. */
function queryParameters(ctx: ApiContext, allowed: ReadonlySet<string>): Result<Record<string, string>, ApiError> {
  const out: Record<string, string> = {};
  const unknown: string[] = [];
  for (const [name, value] of new URLSearchParams(ctx.querystring)) {
    if (!allowed.has(name)) unknown.push(name);
    else if (name in out) return fail(invalidRequest(`query parameter "${name}" is given more than once`));
    else out[name] = value;
  }
  if (unknown.length > 0) return fail(invalidRequest(`unknown query parameter${unknown.length > 1 ? 's' : ''}: ${unknown.map((u) => `"${u}"`).join(', ')}`));
  return ok(out);
}

function validator<I>(decode: (ctx: ApiContext) => Result<I, ApiError>): Validator<I> {
  const middleware = gate((ctx) => {
    const input = decode(ctx);
    if (input.ok) ctx.state.input = input.value;
    return input;
  });
  // The only reader of state.input, for the decode just above: the route table pairs them.
  return Object.assign(middleware, { inputOf: (state: ApiState): I => state.input as I });
}

const noParameters: ReadonlySet<string> = new Set();

/** The request body decoded with `codec` (an absent body reads as `{}`); the route takes no query parameters. */
export function validate<I>(codec: t.Type<I, unknown>): Validator<I> {
  return validator((ctx) => {
    const query = queryParameters(ctx, noParameters);
    return query.ok ? decodeWith(codec, ctx.state.body ?? {}, 'request body') : query;
  });
}

/** The query parameters decoded with `codec`, whose fields are the only parameters the route takes. */
export function validateQuery<R extends Props, O extends Props>(codec: ClosedType<R, O>): Validator<t.TypeOf<ClosedType<R, O>>> {
  const allowed = new Set([...Object.keys(codec.required), ...Object.keys(codec.optional)]);
  return validator((ctx) => {
    const query = queryParameters(ctx, allowed);
    return query.ok ? decodeWith(codec, query.value, 'query parameters') : query;
  });
}

/** The request body decoded with `body` and the query parameters with `query` (whose fields are the only parameters taken). */
export function validateWithQuery<I, R extends Props, O extends Props>(
  body: t.Type<I, unknown>,
  query: ClosedType<R, O>,
): Validator<{ readonly body: I; readonly query: t.TypeOf<ClosedType<R, O>> }> {
  const allowed = new Set([...Object.keys(query.required), ...Object.keys(query.optional)]);
  return validator((ctx) => {
    const parameters = queryParameters(ctx, allowed);
    if (!parameters.ok) return parameters;
    const decodedQuery = decodeWith(query, parameters.value, 'query parameters');
    if (!decodedQuery.ok) return decodedQuery;
    const decodedBody = decodeWith(body, ctx.state.body ?? {}, 'request body');
    return decodedBody.ok ? ok({ body: decodedBody.value, query: decodedQuery.value }) : decodedBody;
  });
}
