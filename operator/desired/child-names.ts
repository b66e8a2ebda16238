// Names of a stack's children. The CRD caps stack names at 30 characters so
// that the longest of these stays within Kubernetes' limits (StatefulSet
// names ≤ 52, Service names ≤ 63).

/** Every child name of one stack, derived from the stack name only. */
export function childNames(stack: string) {
  return {
    gateway: `${stack}-gateway`,
    api: `${stack}-api`,
    credentials: `${stack}-credentials`,
    clickhouse: `${stack}-clickhouse`,
    clickhouseHeadless: `${stack}-clickhouse-headless`,
    clickhouseConfig: `${stack}-clickhouse-config`,
    clickhouseShard: (shard: number): string => `${stack}-clickhouse-s${shard}`,
    keeper: `${stack}-clickhouse-keeper`,
    keeperConfig: `${stack}-clickhouse-keeper-config`,
    migrate: (hash: string): string => `${stack}-migrate-${hash}`,
    /** The claim of gateway replica `ordinal`, as the StatefulSet controller names it from the claim template `wal`. */
    walClaim: (ordinal: number): string => `wal-${stack}-gateway-${ordinal}`,
    /** The Job that drains a scaled-away gateway replica's claim. */
    walDrain: (ordinal: number): string => `${stack}-gateway-drain-${ordinal}`,
  } as const;
}
