// Numbers as Prometheus' HTTP API prints them: sample values as strings in
// Go's strconv.FormatFloat(f, 'f', -1, 64) form (shortest digits that round
// trip, never an exponent), "NaN", "+Inf" and "-Inf"; timestamps as JSON
// numbers of seconds with at most millisecond digits.

/** The shortest decimal digits of `x` written out without an exponent, as Go's 'f' format with precision -1. */
function plainDecimal(x: number): string {
  const text = Math.abs(x).toString();
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  const e = text.indexOf('e');
  if (e < 0) return sign + text;
  const mantissa = text.slice(0, e);
  const exponent = Number(text.slice(e + 1));
  const point = mantissa.indexOf('.');
  const digits = mantissa.replace('.', '');
  const intDigits = (point < 0 ? mantissa.length : point) + exponent;
  if (intDigits <= 0) return `${sign}0.${'0'.repeat(-intDigits)}${digits}`;
  if (intDigits >= digits.length) return sign + digits + '0'.repeat(intDigits - digits.length);
  return `${sign}${digits.slice(0, intDigits)}.${digits.slice(intDigits)}`;
}

/** A sample value as Prometheus writes it in JSON. */
export function formatSampleValue(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  return plainDecimal(x);
}

/** A Unix millisecond time as Prometheus' JSON timestamp (seconds, a number). */
export const formatTimestamp = (ms: number): number => ms / 1000;

/** A Float64 as ClickHouse's toString writes it ("nan", "inf", "-inf", "1e21", "0.5") → the number. */
export function parseStoreFloat(text: string): number {
  if (text === 'nan' || text === '-nan') return NaN;
  if (text === 'inf' || text === '+inf') return Infinity;
  if (text === '-inf') return -Infinity;
  return Number(text);
}
