// Every way an export request can end, as a value. Each receiver turns these
// into its protocol's answer in exactly one place.

export type Failure =
  | { readonly kind: 'unauthenticated'; readonly message: string }
  | { readonly kind: 'forbidden'; readonly message: string }
  | { readonly kind: 'method_not_allowed'; readonly message: string }
  | { readonly kind: 'unsupported_media_type'; readonly message: string }
  | { readonly kind: 'too_large'; readonly message: string }
  | { readonly kind: 'invalid'; readonly message: string }
  | { readonly kind: 'overloaded'; readonly message: string; readonly retryAfterSeconds: number }
  /** Every item of the request belongs to tenants over their ingest limits (gateway/limits/). */
  | { readonly kind: 'rate_limited'; readonly message: string; readonly retryAfterSeconds: number }
  | { readonly kind: 'unavailable'; readonly message: string }
  | { readonly kind: 'internal'; readonly message: string };

export interface Accepted {
  readonly kind: 'accepted';
  readonly accepted: number;
  readonly rejected: number;
  /** Empty when nothing was rejected. */
  readonly errorMessage: string;
}

export type Outcome = Accepted | Failure;
