// OTLP units are UCUM (https://ucum.org); the API shows a name and a short name.

const known: Readonly<Record<string, readonly [string, string]>> = {
  '1': ['', ''],
  '': ['', ''],
  ns: ['nanosecond', 'ns'],
  us: ['microsecond', 'µs'],
  ms: ['millisecond', 'ms'],
  s: ['second', 's'],
  min: ['minute', 'min'],
  h: ['hour', 'h'],
  d: ['day', 'd'],
  bit: ['bit', 'bit'],
  By: ['byte', 'B'],
  kBy: ['kilobyte', 'kB'],
  KBy: ['kilobyte', 'kB'],
  MBy: ['megabyte', 'MB'],
  GBy: ['gigabyte', 'GB'],
  TBy: ['terabyte', 'TB'],
  KiBy: ['kibibyte', 'KiB'],
  MiBy: ['mebibyte', 'MiB'],
  GiBy: ['gibibyte', 'GiB'],
  TiBy: ['tebibyte', 'TiB'],
  '%': ['percent', '%'],
  Hz: ['hertz', 'Hz'],
  Cel: ['degree Celsius', '°C'],
  V: ['volt', 'V'],
  W: ['watt', 'W'],
  J: ['joule', 'J'],
  A: ['ampere', 'A'],
};

function single(unit: string): readonly [string, string] {
  const hit = known[unit];
  if (hit !== undefined) return hit;
  // Curly-brace annotations ({requests}) are unit-less counts with a label.
  const annotation = /^\{(.+)\}$/.exec(unit);
  if (annotation?.[1] !== undefined) return [annotation[1], annotation[1]];
  return [unit, unit];
}

/** `ms` → millisecond/ms, `By/s` → byte per second/B/s, `1` → ""/"". */
export function unitNames(unit: string): { name: string; short_name: string } {
  const slash = unit.indexOf('/');
  if (slash > 0) {
    const [n1, s1] = single(unit.slice(0, slash));
    const [n2, s2] = single(unit.slice(slash + 1));
    return { name: `${n1 === '' ? 'per' : `${n1} per`} ${n2}`, short_name: `${s1}/${s2}` };
  }
  const [name, short] = single(unit);
  return { name, short_name: short };
}
