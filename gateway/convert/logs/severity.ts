// A log record's severity number, shared by both log converters: its own,
// or, when that is 0 (unspecified), one derived from its severity text.
import { clampInt } from '../common/otlp-values.ts';

const severityByText: readonly (readonly [string, number])[] = [
  ['TRACE', 1],
  ['DEBUG', 5],
  ['INFO', 9],
  ['NOTICE', 10],
  ['WARN', 13],
  ['ERR', 17],
  ['CRIT', 18],
  ['ALERT', 19],
  ['EMERG', 21],
  ['FATAL', 21],
  ['PANIC', 21],
];

/** The OTLP severity number for a record: its own, or one derived from its text (syslog/log4j names too). */
export function severityNumber(number: number | null | undefined, text: string | null | undefined): number {
  const n = clampInt(number, 0, 255);
  if (n !== 0 || text === null || text === undefined || text === '') return n;
  const upper = text.trim().toUpperCase();
  for (const [prefix, value] of severityByText) if (upper.startsWith(prefix)) return value;
  return 0;
}
