// Go's fmt %g, with and without a precision, for the numbers Prometheus'
// annotations print: the shortest digits that read back (or the given number
// of significant digits, ties to even on the exact binary value), in
// exponent form below 1e-4 and from the precision's power of ten (1e+06
// without one).

/** Significant digits (no trailing zeros) and the decimal exponent of |x|, x finite and non-zero. */
function shortestDigits(x: number): { digits: string; exp: number } {
  const [m = '', e = '0'] = Math.abs(x).toExponential().split('e');
  return { digits: m.replace('.', '').replace(/0+$/, ''), exp: Number(e) };
}

/** |x| rounded to `p` significant digits as Go's strconv does: a tie (exactly half) goes to the even digit. */
function roundedDigits(x: number, p: number): { digits: string; exp: number } {
  // 25 digits show the exact binary value far enough to tell a true tie from a near one.
  const [exact = '', exactExp = '0'] = Math.abs(x).toExponential(24).split('e');
  const all = exact.replace('.', '');
  const tail = all.slice(p);
  const tie = tail.startsWith('5') && /^50*$/.test(tail);
  const head = all.slice(0, p);
  if (tie && Number(head.at(-1)) % 2 === 0) return { digits: head.replace(/0+$/, '') || '0', exp: Number(exactExp) };
  const [m = '', e = '0'] = Math.abs(x)
    .toExponential(p - 1)
    .split('e');
  return { digits: m.replace('.', '').replace(/0+$/, '') || '0', exp: Number(e) };
}

/** Go's %g of `x` (`precision` significant digits, or the shortest exact ones when left out). */
export function formatGoG(x: number, precision?: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  if (x === 0) return `${sign}0`;
  const { digits, exp } = precision === undefined ? shortestDigits(x) : roundedDigits(x, Math.max(1, precision));
  let eprec = precision ?? 6;
  // With a precision, Go shortens it to the digits there are when they all stand before the point.
  if (precision !== undefined && eprec > digits.length && digits.length >= exp + 1) eprec = digits.length;
  if (exp < -4 || exp >= eprec) {
    const mantissa = digits.length > 1 ? `${digits[0] ?? ''}.${digits.slice(1)}` : digits;
    return `${sign}${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const fraction = digits.slice(exp + 1);
  return `${sign}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}
