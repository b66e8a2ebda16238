// A slowloris client for benchmarks and tests: it opens one connection to
// host:port and sends a request as slowly as it likes, forever: its headers
// one byte at a time ('headers'), or complete headers and then a chunked
// body of one byte per chunk that never ends ('body'), or nothing at all
// ('silent'). It measures, from the connection being open to its 'close'
// event, how long the server let it live.
import { connect } from 'node:net';

export type SlowlorisMode = 'headers' | 'body' | 'silent';

export interface SlowlorisOptions {
  readonly host: string;
  readonly port: number;
  readonly mode?: SlowlorisMode;
  /** Request target (default /v1/traces). */
  readonly path?: string;
  /** Extra request headers, e.g. authorization, so that a body is read at all. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Time between two bytes (default 1000 ms). */
  readonly intervalMs?: number;
  /** Give up (closing the connection ourselves) after this long (default 5 minutes). */
  readonly limitMs?: number;
}

export interface SlowlorisResult {
  /** From the connection being open to its closing. */
  readonly closedAfterMs: number;
  /** False when we gave up at limitMs. */
  readonly closedByServer: boolean;
  /** What the server sent before closing (e.g. an HTTP/1.1 408). */
  readonly response: string;
}

function requestHead(options: SlowlorisOptions, mode: SlowlorisMode): string {
  const lines = [`POST ${options.path ?? '/v1/traces'} HTTP/1.1`, `Host: ${options.host}:${options.port}`, 'Content-Type: application/x-protobuf'];
  for (const [name, value] of Object.entries(options.headers ?? {})) lines.push(`${name}: ${value}`);
  if (mode === 'body') return `${lines.join('\r\n')}\r\nTransfer-Encoding: chunked\r\n\r\n`;
  // Headers mode: an unfinished header whose value grows one byte at a time.
  return `${lines.join('\r\n')}\r\nX-Slow: `;
}

/** Opens a slowloris connection and resolves when it closes (or at limitMs). */
export function slowloris(options: SlowlorisOptions): Promise<SlowlorisResult> {
  const mode = options.mode ?? 'headers';
  const intervalMs = options.intervalMs ?? 1000;
  const limitMs = options.limitMs ?? 300_000;
  return new Promise((resolve) => {
    const socket = connect(options.port, options.host);
    let opened = performance.now();
    let response = '';
    let trickle: NodeJS.Timeout | undefined;
    let gaveUp = false;
    const limit = setTimeout(() => {
      gaveUp = true;
      socket.destroy();
    }, limitMs);
    socket.on('connect', () => {
      opened = performance.now();
      if (mode === 'silent') return;
      socket.write(requestHead(options, mode));
      trickle = setInterval(() => {
        socket.write(mode === 'body' ? '1\r\na\r\n' : 'a');
      }, intervalMs);
    });
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      response += chunk;
    });
    // A reset after the server's answer is still the server closing.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(trickle);
      clearTimeout(limit);
      resolve({ closedAfterMs: Math.round(performance.now() - opened), closedByServer: !gaveUp, response });
    });
  });
}

/** Milliseconds until the server closes a slowloris connection to host:port, or `limitMs` if it never does. */
export async function slowlorisCloseMs(
  host: string,
  port: number,
  limitMs: number,
  mode: SlowlorisMode = 'headers',
  headers: Readonly<Record<string, string>> = {},
): Promise<number> {
  const result = await slowloris({ host, port, mode, headers, limitMs });
  return result.closedByServer ? result.closedAfterMs : limitMs;
}
