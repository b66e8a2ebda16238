// Query answers as short lines a table can state: `name{a="b"} 1.5` per
// element, a matrix as `name{a="b"} t=v t=v` with times in seconds.
import type { Labels } from '../../../../../../../api/compat/prometheus/engine/sample-source.ts';
import type { QueryValue } from '../../../../../../../api/compat/prometheus/engine/values.ts';

/** `name{a="b"}` of a label set. */
export function labelText(labels: Labels): string {
  const name = labels.find(([n]) => n === '__name__')?.[1] ?? '';
  const rest = labels.filter(([n]) => n !== '__name__').map(([n, v]) => `${n}=${JSON.stringify(v)}`);
  return rest.length === 0 ? (name === '' ? '{}' : name) : `${name}{${rest.join(',')}}`;
}

const num = (f: number): string => (Number.isInteger(f) || !Number.isFinite(f) ? String(f) : String(Number(f.toPrecision(10))));

/** The answer as lines, in the answer's order. */
export function render(value: QueryValue): string[] {
  switch (value.resultType) {
    case 'scalar':
      return [`scalar ${num(value.result.f)}`];
    case 'string':
      return [`string ${value.result.s}`];
    case 'vector':
      return value.result.map((e) => `${labelText(e.labels)} ${e.h === undefined ? num(e.f) : `h(count=${e.h.count},sum=${e.h.sum})`}`);
    case 'matrix':
      return value.result.map(
        (s) =>
          `${labelText(s.labels)} ${[...s.floats.map((p) => `${p.t / 1000}=${num(p.f)}`), ...s.histograms.map((p) => `${p.t / 1000}=h(count=${p.h.count})`)].join(' ')}`,
      );
  }
}
