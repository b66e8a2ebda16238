// The order Prometheus returns series in: ClickHouse's (and Go's) byte order
// of the UTF-8 strings, label set by label set as Prometheus' labels.Compare.
// Sorted in TypeScript, never by a statement.

/**
 * Strings in UTF-8 byte order, as ClickHouse and Go compare them: UTF-16
 * code unit order except between a surrogate (half of a code point from
 * U+10000 on) and a unit from U+E000, where the surrogate's code point is
 * the greater.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const sx = x >= 0xd800 && x <= 0xdfff;
    const sy = y >= 0xd800 && y <= 0xdfff;
    if (sx !== sy && (x >= 0xe000 || y >= 0xe000)) return sx ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** Label sets (each sorted by name) in Prometheus' order (labels.Compare): pair by pair, name then value, then the shorter first. */
export function compareLabelSets(a: readonly (readonly [string, string])[], b: readonly (readonly [string, string])[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const [an, av] = a[i] ?? ['', ''];
    const [bn, bv] = b[i] ?? ['', ''];
    const c = compareUtf8(an, bn) || compareUtf8(av, bv);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}
