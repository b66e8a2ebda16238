// Label sets as the engine keeps them: (name, value) pairs sorted by name in
// UTF-8 byte order. Setting a label to the empty string removes it, as
// Prometheus' labels builder does.
import type { Labels } from '../sample-source.ts';
import { compareUtf8 } from '../label-order.ts';

/** The value of label `name`, or '' when the set has none (as Prometheus' Get). */
export function labelValue(labels: Labels, name: string): string {
  for (const [n, v] of labels) if (n === name) return v;
  return '';
}

/** The set with `name` set to `value`, or removed when `value` is empty. */
export function withLabel(labels: Labels, name: string, value: string): Labels {
  const out: (readonly [string, string])[] = [];
  let placed = value === '';
  for (const pair of labels) {
    if (pair[0] === name) continue;
    if (!placed && compareUtf8(name, pair[0]) < 0) {
      out.push([name, value]);
      placed = true;
    }
    out.push(pair);
  }
  if (!placed) out.push([name, value]);
  return out;
}

/** The set without the labels in `names`. */
export function withoutLabels(labels: Labels, names: readonly string[]): Labels {
  return labels.filter(([n]) => !names.includes(n));
}

/** A key equal for equal label sets. */
export function labelsKey(labels: Labels): string {
  return JSON.stringify(labels);
}

/** Whether label sets `a` and `b` are equal. */
export function sameLabels(a: Labels, b: Labels): boolean {
  if (a.length !== b.length) return false;
  return a.every(([n, v], i) => {
    const other = b[i];
    return other !== undefined && other[0] === n && other[1] === v;
  });
}
