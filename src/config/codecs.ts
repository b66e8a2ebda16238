// io-ts codecs that turn one environment string into a typed value. Each
// codec's `name` is the sentence shown when a value does not decode, so a
// bad setting stops the process with a message naming what was expected.
import * as t from 'io-ts';

const MiB = 1024 * 1024;

/** A codec from string to A whose failures read "expected <description>". */
function fromString<A>(description: string, parse: (raw: string) => A | undefined): t.Type<A, string> {
  return new t.Type<A, string>(
    description,
    (_u): _u is A => false,
    (u, c) => {
      if (typeof u !== 'string') return t.failure(u, c);
      const value = parse(u.trim());
      return value === undefined ? t.failure(u, c) : t.success(value);
    },
    (a) => String(a),
  );
}

/** Integer in [min, max], written in decimal. */
export function intInRange(min: number, max: number, description?: string): t.Type<number, string> {
  return fromString(description ?? `an integer from ${min} to ${max}`, (raw) => {
    if (!/^-?\d+$/.test(raw)) return undefined;
    const n = Number(raw);
    return Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined;
  });
}

export const Port = intInRange(0, 65535, 'a TCP port from 0 to 65535 (0 picks a free port)');

const byteUnits: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  kib: 1024,
  mib: MiB,
  gib: 1024 * MiB,
  k: 1024,
  m: MiB,
  g: 1024 * MiB,
};

/** A byte size: plain bytes ("16777216") or with a unit ("16MiB", "512 KiB", "1GB"). */
export const ByteSize = fromString('a byte size such as 16777216, 16MiB or 512KiB (at least 1 byte)', (raw) => {
  const match = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(raw);
  if (match === null) return undefined;
  const factor = byteUnits[(match[2] ?? '').toLowerCase()];
  if (factor === undefined) return undefined;
  const bytes = Math.floor(Number(match[1]) * factor);
  return Number.isSafeInteger(bytes) && bytes >= 1 ? bytes : undefined;
});

export const LogLevel = t.keyof({ debug: null, info: null, warn: null, error: null }, 'one of debug, info, warn, error');
export type LogLevel = t.TypeOf<typeof LogLevel>;

/** When the write-ahead log acknowledges (docs/adr/0006-write-ahead-log.md, "Durability"). */
export const WalSync = t.keyof({ write: null, fsync: null }, 'write or fsync');
export type WalSync = t.TypeOf<typeof WalSync>;

export const NonEmptyString = fromString('a non-empty string', (raw) => (raw.length > 0 ? raw : undefined));

/** Any string, taken as is (passwords may be empty or carry spaces). */
export const RawString = new t.Type<string, string>('a string', t.string.is, (u, c) => (typeof u === 'string' ? t.success(u) : t.failure(u, c)), t.identity);

export const HttpUrl = fromString('an http:// or https:// URL', (raw) => {
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString().replace(/\/$/, '') : undefined;
  } catch {
    return undefined;
  }
});

/** A ClickHouse identifier usable as database or cluster name without quoting. */
export const Identifier = fromString('a name of letters, digits and underscores, not starting with a digit', (raw) =>
  /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(raw) ? raw : undefined,
);

/** A bind address: an IPv4/IPv6 literal or a host name. */
export const Host = fromString('an IP address or host name', (raw) => (/^[A-Za-z0-9.:_-]+$/.test(raw) ? raw : undefined));

const dnsLabel = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A Kubernetes namespace name (DNS-1123 label). */
export const DnsLabel = fromString('a Kubernetes namespace name (lower-case letters, digits and -, at most 63)', (raw) =>
  dnsLabel.test(raw) ? raw : undefined,
);

/** A comma-separated list of namespace names (operator watch scope). */
export const NamespaceList = fromString('a comma-separated list of Kubernetes namespace names', (raw) => {
  const names = raw
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  return names.length > 0 && names.every((n) => dnsLabel.test(n)) ? names : undefined;
});

/** A switch: on/off (also true/false, 1/0). */
export const OnOff = fromString('on or off', (raw) => {
  const v = raw.toLowerCase();
  if (['on', 'true', '1', 'yes'].includes(v)) return true;
  if (['off', 'false', '0', 'no'].includes(v)) return false;
  return undefined;
});
