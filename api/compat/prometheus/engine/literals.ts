// PromQL's literals as Prometheus reads them: strings with Go's escapes
// (strutil.Unquote), numbers as Go's ParseInt(…, 0, 64) then ParseFloat
// (so 0x1f, 010 (octal) and 1_000 are numbers), durations as
// model.ParseDuration ("1h30m") or plain seconds.
import type { Result } from '../../../../src/result.ts';
import { fail, ok } from '../../../../src/result.ts';
import { parsePromDuration } from '../../../query/durations.ts';

const simpleEscapes: Readonly<Record<string, string>> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"', "'": "'" };

/** A quoted PromQL string ("…", '…' or `…`) → its value. */
export function unquoteString(raw: string): Result<string, string> {
  const quote = raw[0];
  if (raw.length < 2 || raw[raw.length - 1] !== quote) return fail(`unterminated quoted string ${raw}`);
  const body = raw.slice(1, -1);
  if (quote === '`') return ok(body);
  let bad: string | undefined;
  const value = body.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)/gsu, (_, e: string) => {
    const s = simpleEscapes[e];
    if (s !== undefined) {
      if ((e === '"' && quote === "'") || (e === "'" && quote === '"')) bad ??= e;
      return s;
    }
    if (/^[uU]/.test(e)) return String.fromCodePoint(parseInt(e.slice(1), 16));
    // \x and octal escapes are bytes in Go; a byte above 0x7f alone is not valid UTF-8.
    const byte = e.startsWith('x') ? parseInt(e.slice(1), 16) : /^[0-7]{3}$/.test(e) ? parseInt(e, 8) : -1;
    if (byte >= 0 && byte < 0x80) return String.fromCharCode(byte);
    bad ??= e;
    return '';
  });
  if (bad !== undefined) return fail(`error unquoting string ${raw}: invalid syntax`);
  return ok(value);
}

const intPattern = /^[+-]?(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|0[0-7_]*|[1-9][0-9_]*)$/;

function parseGoInt(text: string): number | undefined {
  if (!intPattern.test(text) || /__|_$|^[+-]?_/.test(text)) return undefined;
  const sign = text.startsWith('-') ? -1 : 1;
  const body = text.replace(/^[+-]/, '').replace(/_/g, '');
  const lower = body.toLowerCase();
  if (lower.startsWith('0x')) return sign * parseInt(lower.slice(2), 16);
  if (lower.startsWith('0o')) return sign * parseInt(lower.slice(2), 8);
  if (lower.startsWith('0b')) return sign * parseInt(lower.slice(2), 2);
  if (lower.length > 1 && lower.startsWith('0')) return sign * parseInt(lower.slice(1), 8);
  return sign * Number(lower);
}

/** A number literal (or a duration written where a number goes: "5m" is 300) → its value in seconds. */
export function parseNumberLiteral(text: string): Result<{ value: number; duration: boolean }, string> {
  const asInt = parseGoInt(text);
  if (asInt !== undefined) return ok({ value: asInt, duration: false });
  const sign = text.startsWith('-') ? -1 : 1;
  const unsigned = text.replace(/^[+-]/, '');
  const lower = unsigned.toLowerCase();
  if (lower === 'inf' || lower === 'infinity') return ok({ value: sign * Infinity, duration: false });
  if (lower === 'nan') return ok({ value: NaN, duration: false });
  if (/^(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/.test(lower)) return ok({ value: sign * Number(lower), duration: false });
  const ms = parsePromDuration(unsigned);
  if (ms !== undefined) return ok({ value: (sign * ms) / 1000, duration: true });
  return fail(`bad number or duration syntax: "${text}"`);
}

/** A duration inside brackets or after offset ("5m", "1h30m", or seconds "300") → milliseconds. */
export function parseDurationLiteral(text: string): Result<number, string> {
  const ms = parsePromDuration(text);
  if (ms !== undefined) return ok(ms);
  const n = parseNumberLiteral(text);
  if (n.ok && Number.isFinite(n.value.value)) return ok(Math.round(n.value.value * 1000));
  return fail(`bad duration syntax: "${text}"`);
}
