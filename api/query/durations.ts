// Every duration a client writes, in the three dialects the read APIs speak,
// read here and nowhere else:
// - Go's time.ParseDuration ("1.5s", "1m30s", "250ms", "100us"): units ns to
//   h in any order, fractions per component; Tempo's min/maxDuration and
//   TraceQL literals, LogQL's `| duration > 1.5s` filters;
// - Prometheus' model.ParseDuration ("1h30m", "2d", "1w", "1y", "250ms"):
//   integers, units y to ms in that order, millisecond resolution; PromQL
//   ranges, offsets and the Prometheus API's step, timeout, lookback_delta;
// - LogQL's: Go's first, then Prometheus' (Loki's lexer tries both), so
//   "1.5s" and "2d" are both durations there.
// Components are summed in integers (exact; Go truncates a fraction to the
// ns, and a float product would round "1.1999999999s" up to 1.2 s).

/** ns per Go duration unit (µs in either code point, as Go takes it). */
const goUnitNs: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** A Go duration in ns, exactly; undefined when `text` is not one (no sign: no read API takes a negative duration). */
export function parseGoDuration(text: string): bigint | undefined {
  if (!/^((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/.test(text)) return undefined;
  let total = 0n;
  for (const m of text.matchAll(/(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/g)) {
    const unit = goUnitNs[m[3] ?? 'ns'] ?? 1n;
    const fraction = m[2] ?? '';
    total +=
      BigInt(m[1] === undefined || m[1] === '' ? '0' : m[1]) * unit + (fraction === '' ? 0n : (BigInt(fraction) * unit) / 10n ** BigInt(fraction.length));
  }
  return total;
}

const promUnitMs: Readonly<Record<string, number>> = { y: 365 * 86_400_000, w: 7 * 86_400_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
const promPattern = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;
const promUnits = ['y', 'w', 'd', 'h', 'm', 's', 'ms'] as const;

/** A Prometheus duration ("1m30s") in ms ("0" is zero), or undefined when `text` is not one. */
export function parsePromDuration(text: string): number | undefined {
  if (text === '' || text === '0') return text === '0' ? 0 : undefined;
  const m = promPattern.exec(text);
  if (m === null) return undefined;
  const parts = promUnits.map((unit, i) => [unit, m[i + 1]] as const).filter(([, part]) => part !== undefined);
  if (parts.length === 0) return undefined;
  return parts.reduce((total, [unit, part]) => total + Number(part) * (promUnitMs[unit] ?? 0), 0);
}

/** A LogQL duration in ns: Go's syntax, else Prometheus' (days, weeks, years); undefined when it is neither. */
export function parseLogqlDuration(text: string): bigint | undefined {
  const go = parseGoDuration(text);
  if (go !== undefined) return go;
  // Prometheus' form exactly, in integers: a number of ms past 2^53 would lose digits as a float.
  const m = promPattern.exec(text);
  if (m === null || text === '') return undefined;
  return promUnits.reduce((total, unit, i) => total + BigInt(m[i + 1] ?? '0') * BigInt(promUnitMs[unit] ?? 0) * 1_000_000n, 0n);
}
