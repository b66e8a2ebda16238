// JSON-lines logger: one object per line on stdout, with time, level and
// message first so `jq` and log shippers read it without configuration.
import type { LogLevel } from '../config/codecs.ts';

const rank: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40 };

export type Fields = Readonly<Record<string, unknown>>;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  child(fields: Fields): Logger;
}

export type LineSink = (line: string) => void;

const stdoutSink: LineSink = (line) => {
  process.stdout.write(line + '\n');
};

/** Errors become { name, message, code? } so they survive JSON.stringify. */
function serialise(value: unknown): unknown {
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: value.name, message: value.message, ...(code === undefined ? {} : { code }) };
  }
  return value;
}

/** Creates a logger writing lines at or above `level` to `sink` (stdout by default). */
export function createLogger(level: LogLevel, base: Fields = {}, sink: LineSink = stdoutSink): Logger {
  const write = (at: LogLevel, msg: string, fields?: Fields): void => {
    if (rank[at] < rank[level]) return;
    const record: Record<string, unknown> = { time: new Date().toISOString(), level: at, msg, ...base };
    if (fields !== undefined) for (const [k, v] of Object.entries(fields)) record[k] = serialise(v);
    sink(JSON.stringify(record));
  };
  return {
    debug: (msg, fields) => {
      write('debug', msg, fields);
    },
    info: (msg, fields) => {
      write('info', msg, fields);
    },
    warn: (msg, fields) => {
      write('warn', msg, fields);
    },
    error: (msg, fields) => {
      write('error', msg, fields);
    },
    child: (fields) => createLogger(level, { ...base, ...fields }, sink),
  };
}

/** A logger that drops everything, for unit tests. */
export const silentLogger: Logger = createLogger('error', {}, () => undefined);
