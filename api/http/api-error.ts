// The one error shape of the API (DESIGN.md section 5): stable codes, a
// message meant for a person, optional details. Expected failures travel as
// values of this type and become HTTP statuses in exactly one place.

export const errorStatus = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ApiError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details?: readonly string[];
}

export const invalidRequest = (message: string, details?: readonly string[]): ApiError =>
  details === undefined ? { code: 'invalid_request', message } : { code: 'invalid_request', message, details };
export const unauthorized = (): ApiError => ({ code: 'unauthorized', message: 'missing or unknown API key: send "Authorization: Bearer <key>"' });
export const forbidden = (scope: string): ApiError => ({ code: 'forbidden', message: `this API key lacks the "${scope}" scope` });
export const notFound = (what: string): ApiError => ({ code: 'not_found', message: `${what} not found` });
export const unavailable = (message: string): ApiError => ({ code: 'unavailable', message });
export const internal = (): ApiError => ({ code: 'internal', message: 'internal error; the request id identifies it in the server logs' });
export const methodNotAllowed = (message: string): ApiError => ({ code: 'method_not_allowed', message });
export const requestTimeout = (message: string): ApiError => ({ code: 'request_timeout', message });
export const payloadTooLarge = (message: string): ApiError => ({ code: 'payload_too_large', message });
export const unsupportedMediaType = (message: string): ApiError => ({ code: 'unsupported_media_type', message });

/** The JSON body of an error response. */
export function errorBody(error: ApiError, requestId: string): { error: Record<string, unknown> } {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details === undefined ? {} : { details: error.details }),
      requestId,
    },
  };
}
