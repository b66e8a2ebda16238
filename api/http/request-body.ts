// Reads and parses request bodies: JSON on every body-carrying method, and
// form encoding on the methods that allow it (PUT, for /v1/tenants/:id). At most
// `limit` bytes after decompression (gzip and deflate accepted); JSON must be
// an object or an array and may not carry a `__proto__` key. Read straight
// from the request stream instead of through koa-body: its general parsers
// (co-body, raw-body, type-is) cost about 0.1 ms of every request.
import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import type { ApiError, Result } from './api-error.ts';
import { fail, invalidRequest, ok } from './api-error.ts';

export interface BodyRules {
  /** Most bytes a body may hold, after decompression. */
  readonly limit: number;
  /** Methods that accept application/x-www-form-urlencoded besides JSON. */
  readonly formMethods: ReadonlySet<string>;
}

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/** Strict JSON starts with an object or an array (RFC 8259 whitespace first). */
const strictJson = /^[ \t\n\r]*[[{]/;
/** A `__proto__` key, possibly written with escapes (the pattern @hapi/bourne uses). */
const protoKey = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;

const tooLarge = (limit: number): ApiError => ({ code: 'payload_too_large', message: `request body is larger than ${limit / 1_048_576} MiB` });
const notJson = (): ApiError => invalidRequest('request body is not valid JSON (or not a JSON object)');

type Raw = { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly error: ApiError };

/** The body's bytes as sent, or an error once more than `limit` bytes arrive. */
function readRaw(req: IncomingMessage, limit: number): Promise<Raw> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.resolve({ ok: false, error: tooLarge(limit) });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (raw: Raw): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onFailure);
      req.off('close', onFailure);
      resolve(raw);
    };
    function onData(chunk: Buffer): void {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        finish({ ok: false, error: tooLarge(limit) });
        return;
      }
      chunks.push(chunk);
    }
    function onEnd(): void {
      finish({ ok: true, bytes: chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, size) });
    }
    // The client went away (or the stream broke) before the body ended.
    function onFailure(): void {
      finish({ ok: false, error: invalidRequest('the request body ended early') });
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onFailure);
    req.on('close', onFailure);
  });
}

/** Undoes the content encoding, still within `limit`. */
async function decoded(bytes: Buffer, encoding: string, limit: number): Promise<Result<Buffer>> {
  if (encoding === 'identity') return ok(bytes);
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') return ok(await gunzipAsync(bytes, { maxOutputLength: limit }));
    return ok(await inflateAsync(bytes, { maxOutputLength: limit }));
  } catch (error) {
    return (error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE' ? fail(tooLarge(limit)) : fail(invalidRequest(`request body is not valid ${encoding} data`));
  }
}

/** Strict JSON: an object or an array; empty means `{}`. */
export function parseJsonBody(text: string): Result<unknown> {
  if (text === '') return ok({});
  if (!strictJson.test(text)) return fail(notJson());
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail(notJson());
  }
  if (protoKey.test(text) && hasProtoKey(value)) return fail(invalidRequest('request body must not use the key "__proto__"'));
  return ok(value);
}

/** Whether any object inside `value` has an own `__proto__` key (JSON.parse creates those as plain keys). */
function hasProtoKey(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Object.prototype.hasOwnProperty.call(value, '__proto__')) return true;
  return Object.values(value).some(hasProtoKey);
}

/** Form fields; a name given more than once becomes an array (and fails decoding like any other wrong type). */
export function parseFormBody(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(text)) {
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return { ...out };
}

/** The media type of a Content-Type header: lowercase, without parameters ('' when absent). */
export function mediaType(header: string | undefined): string {
  if (header === undefined) return '';
  const semicolon = header.indexOf(';');
  return (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}

/** The parsed body of a request: undefined when it carries none or its method takes none. */
export async function readBody(req: IncomingMessage, rules: BodyRules): Promise<Result<unknown>> {
  const method = req.method ?? 'GET';
  if (method !== 'POST' && method !== 'PUT' && method !== 'PATCH') return ok(undefined);
  const declared = req.headers['content-length'];
  const hasBody = req.headers['transfer-encoding'] !== undefined || (declared !== undefined && declared !== '');
  const type = mediaType(req.headers['content-type']);
  if (!hasBody || type === '') return ok(undefined);
  const formAllowed = rules.formMethods.has(method);
  const form = type === 'application/x-www-form-urlencoded' && formAllowed;
  if (type !== 'application/json' && !form) {
    if (declared === '0') return ok(undefined);
    const also = formAllowed ? ' or application/x-www-form-urlencoded' : '';
    return fail({ code: 'unsupported_media_type', message: `request body must be application/json${also}, not ${type}` });
  }
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (!['identity', 'gzip', 'x-gzip', 'deflate'].includes(encoding)) {
    return fail({ code: 'unsupported_media_type', message: `request body content-encoding must be gzip, deflate or identity, not ${encoding}` });
  }
  const raw = await readRaw(req, rules.limit);
  if (!raw.ok) return raw;
  const bytes = await decoded(raw.bytes, encoding, rules.limit);
  if (!bytes.ok) return bytes;
  let text = bytes.value.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return form ? ok(parseFormBody(text)) : parseJsonBody(text);
}
