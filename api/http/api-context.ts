// What travels with a request through the API's middleware: the request id,
// the authenticated principal, the parsed body, and what the route's own
// middleware established (the tenant in scope, the decoded input).
import type { RouterContext } from '@koa/router';
import type { Principal } from '../../src/auth/api-keys.ts';
import type { BodyDeadline } from './request-body.ts';

export interface ApiState {
  requestId: string;
  principal: Principal | undefined;
  /** The parsed request body (undefined when the request has none). */
  body: unknown;
  /** The tenant of the path, once `scope` found it within the key's reach. */
  tenantId: string | undefined;
  /** The request's input, once `validate` decoded it. */
  input: unknown;
  /** Aborts once the client stopped waiting for the answer: its statements are then stopped. */
  abort: AbortSignal | undefined;
  /** When the request's body must have arrived (TENANTRY_BODY_TIMEOUT_MS after its headers). */
  bodyDeadline: BodyDeadline | undefined;
}

export type ApiContext = RouterContext<ApiState>;
