// io-ts building blocks for request decoding. Objects are closed: a field the
// codec does not know is a 400 naming it (catches typos). Every codec can
// carry a JSON Schema, so the OpenAPI document is generated from the very
// codecs the routes decode with and cannot drift from them.
import * as t from 'io-ts';

export type JsonSchema = Readonly<Record<string, unknown>>;

const schemaOf = new WeakMap<t.Mixed, JsonSchema>();

/** Attaches the JSON Schema the OpenAPI document shows for a codec. */
export function withSchema<C extends t.Mixed>(codec: C, schema: JsonSchema): C {
  schemaOf.set(codec, schema);
  return codec;
}

/** The JSON Schema attached to a codec, if any. */
export function attachedSchema(codec: t.Mixed): JsonSchema | undefined {
  return schemaOf.get(codec);
}

/** The data path of a decode context, e.g. `queries[0].metrics`. */
export function pathOf(context: t.Context): string {
  let path = '';
  for (const [i, entry] of context.entries()) {
    const parent = context[i - 1]?.type;
    // Union and intersection members are keyed by member index: not part of the data path.
    if (entry.key === '' || parent instanceof t.UnionType || parent instanceof t.IntersectionType) continue;
    path += /^\d+$/.test(entry.key) ? `[${entry.key}]` : path === '' ? entry.key : `.${entry.key}`;
  }
  return path;
}

/** A short rendering of a value for error messages. */
const show = (u: unknown): string => (u === undefined ? 'missing' : JSON.stringify(u).slice(0, 80));

export type Props = Readonly<Record<string, t.Mixed>>;

/** An object codec that fails on unknown keys; `required` and `optional` stay inspectable. */
export class ClosedType<R extends Props, O extends Props> extends t.Type<t.TypeOfProps<R> & t.TypeOfPartialProps<O>> {
  readonly required: R;
  readonly optional: O;
  readonly _tag = 'ClosedType' as const;

  constructor(name: string, required: R, optional: O) {
    const known = new Set([...Object.keys(required), ...Object.keys(optional)]);
    // Fields as [name, codec, required]: worked out once here, not on every request.
    const fields: readonly (readonly [string, t.Mixed, boolean])[] = Object.entries({ ...optional, ...required }).map(
      ([k, c]) => [k, c, k in required] as const,
    );
    super(
      name,
      (u): u is t.TypeOfProps<R> & t.TypeOfPartialProps<O> =>
        typeof u === 'object' &&
        u !== null &&
        fields.every(([k, c, isRequired]) => {
          const v = (u as Record<string, unknown>)[k];
          return (v === undefined && !isRequired) || c.is(v);
        }),
      (u, c) => {
        if (typeof u !== 'object' || u === null || Array.isArray(u)) return t.failure(u, c, `${pathOf(c) || 'body'} must be a JSON object`);
        const input = u as Record<string, unknown>;
        const errors: t.ValidationError[] = [];
        for (const k in input) {
          if (Object.prototype.hasOwnProperty.call(input, k) && !known.has(k)) {
            const at = pathOf(c);
            errors.push({ value: input[k], context: c, message: `unknown field "${at === '' ? k : `${at}.${k}`}"` });
          }
        }
        const out: Record<string, unknown> = {};
        for (const [k, codec, isRequired] of fields) {
          // Optional fields given as null are treated as absent.
          const v = input[k] === null && !isRequired ? undefined : input[k];
          if (v === undefined && !isRequired) continue;
          const r = codec.validate(v, [...c, { key: k, type: codec, actual: v }]);
          if (r._tag === 'Left') errors.push(...r.left);
          else out[k] = r.right;
        }
        return errors.length > 0 ? t.failures(errors) : t.success(out as t.TypeOfProps<R> & t.TypeOfPartialProps<O>);
      },
      t.identity,
    );
    this.required = required;
    this.optional = optional;
  }
}

export function closed<R extends Props, O extends Props>(name: string, required: R, optional: O): ClosedType<R, O> {
  return new ClosedType(name, required, optional);
}

/** A refinement with a readable failure message and a schema. */
export function refined<A>(base: t.Type<A, unknown>, name: string, ok: (a: A) => boolean, schema: JsonSchema): t.Type<A, unknown> {
  const codec = new t.Type<A, unknown, unknown>(
    name,
    (u): u is A => base.is(u) && ok(u),
    (u, c) => {
      const r = base.validate(u, c);
      if (r._tag === 'Left') return t.failure(u, c, `${pathOf(c) || 'value'} is ${show(u)}: expected ${name}`);
      return ok(r.right) ? t.success(r.right) : t.failure(u, c, `${pathOf(c) || 'value'} is ${show(u)}: expected ${name}`);
    },
    t.identity,
  );
  return withSchema(codec, schema);
}

/** A string, or a non-empty array of strings; decodes to an array. */
export const StringList = withSchema(
  new t.Type<readonly string[], unknown, unknown>(
    'a string or an array of strings',
    (u): u is readonly string[] => Array.isArray(u) && u.every((x) => typeof x === 'string'),
    (u, c) => {
      if (typeof u === 'string') return t.success([u]);
      if (Array.isArray(u) && u.length > 0 && u.length <= 1000 && u.every((x) => typeof x === 'string')) return t.success(u);
      return t.failure(u, c, `${pathOf(c) || 'value'} is ${show(u)}: expected a string or a non-empty array of at most 1000 strings`);
    },
    t.identity,
  ),
  { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 1000 }] },
);

/** One of the listed strings, or a non-empty array of them; decodes to an array. */
export function enumList<K extends string>(values: readonly K[]): t.Type<readonly K[], unknown> {
  const allowed = new Set<string>(values);
  const expected = `one of ${values.join(', ')} (or an array of them)`;
  return withSchema(
    new t.Type<readonly K[], unknown, unknown>(
      expected,
      (u): u is readonly K[] => Array.isArray(u) && u.every((x) => allowed.has(x as string)),
      (u, c) => {
        const list = typeof u === 'string' ? [u] : u;
        if (Array.isArray(list) && list.length > 0 && list.every((x) => typeof x === 'string' && allowed.has(x))) return t.success(list);
        return t.failure(u, c, `${pathOf(c) || 'value'} is ${show(u)}: expected ${expected}`);
      },
      t.identity,
    ),
    {
      oneOf: [
        { type: 'string', enum: values },
        { type: 'array', items: { type: 'string', enum: values }, minItems: 1 },
      ],
    },
  );
}

/** `{ attribute name: value | [values] }`, at most 50 keys. */
export const AttributeFilter = withSchema(
  new t.Type<Readonly<Record<string, readonly string[]>>, unknown, unknown>(
    'an object mapping attribute names to a string or an array of strings',
    (u): u is Record<string, readonly string[]> => typeof u === 'object' && u !== null,
    (u, c) => {
      const fail = (why: string): t.Validation<Record<string, readonly string[]>> => t.failure(u, c, `${pathOf(c) || 'attributes'} ${why}`);
      if (typeof u !== 'object' || u === null || Array.isArray(u)) return fail('must be an object mapping attribute names to a string or an array of strings');
      const entries = Object.entries(u as Record<string, unknown>);
      if (entries.length > 50) return fail('has more than 50 keys');
      const out: [string, readonly string[]][] = [];
      for (const [k, v] of entries) {
        if (k === '') return fail('has an empty attribute name');
        const list = typeof v === 'string' ? [v] : v;
        if (!Array.isArray(list) || list.length === 0 || list.length > 1000 || !list.every((x) => typeof x === 'string')) {
          return fail(`.${k} is ${show(v)}: expected a string or a non-empty array of strings`);
        }
        out.push([k, list]);
      }
      // fromEntries defines own properties: a key named "__proto__" or "constructor" stays a plain key.
      return t.success(Object.fromEntries(out));
    },
    t.identity,
  ),
  { type: 'object', additionalProperties: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, minItems: 1 }] }, maxProperties: 50 },
);

/** A Unix time: seconds, or ms / µs / ns by magnitude (≥1e11, ≥1e14, ≥1e17). */
export const TimeValue = refined(t.number, 'a non-negative Unix timestamp (seconds; ms, µs or ns accepted by magnitude)', (n) => Number.isFinite(n) && n >= 0, {
  type: 'number',
  minimum: 0,
  description: 'Unix time in seconds (fractions allowed); values ≥ 1e11 are read as milliseconds, ≥ 1e14 as microseconds, ≥ 1e17 as nanoseconds.',
});

export const Bool = withSchema(t.boolean, { type: 'boolean' });
export const Str = withSchema(t.string, { type: 'string' });
