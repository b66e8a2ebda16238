// A small JSON Schema checker for the subset the OpenAPI document uses (type,
// enum, required, properties, additionalProperties, items, $ref, oneOf), so
// tests can hold real responses against the documented response schemas.

type Schema = Readonly<Record<string, unknown>>;

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

/** Problems found in `value` against `schema`; an empty list means it conforms. */
export function checkSchema(value: unknown, schema: Schema, components: Readonly<Record<string, Schema>>, at = '$'): string[] {
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    const target = components[ref.replace('#/components/schemas/', '')];
    return target === undefined ? [`${at}: unknown $ref ${ref}`] : checkSchema(value, target, components, at);
  }
  const oneOf = schema['oneOf'];
  if (Array.isArray(oneOf)) {
    const passing = oneOf.filter((s) => checkSchema(value, s as Schema, components, at).length === 0).length;
    return passing === 1 ? [] : [`${at}: matches ${passing} of the oneOf schemas`];
  }
  const problems: string[] = [];
  const type = schema['type'];
  if (type !== undefined) {
    const allowed = Array.isArray(type) ? type : [type];
    const actual = typeOf(value);
    if (!allowed.includes(actual) && !(actual === 'integer' && allowed.includes('number'))) return [`${at}: ${actual} is not ${allowed.join(' or ')}`];
  }
  const enumeration = schema['enum'];
  if (Array.isArray(enumeration) && !enumeration.includes(value)) problems.push(`${at}: ${JSON.stringify(value)} is not one of ${enumeration.join(', ')}`);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const key of (schema['required'] as string[] | undefined) ?? []) if (!(key in obj)) problems.push(`${at}: missing ${key}`);
    const props = (schema['properties'] as Record<string, Schema> | undefined) ?? {};
    const extra = schema['additionalProperties'];
    for (const [k, v] of Object.entries(obj)) {
      const p = props[k];
      if (p !== undefined) problems.push(...checkSchema(v, p, components, `${at}.${k}`));
      else if (extra === false) problems.push(`${at}: undocumented field ${k}`);
      else if (typeof extra === 'object' && extra !== null) problems.push(...checkSchema(v, extra as Schema, components, `${at}.${k}`));
    }
  }
  if (Array.isArray(value) && typeof schema['items'] === 'object') {
    value.forEach((v, i) => {
      problems.push(...checkSchema(v, schema['items'] as Schema, components, `${at}[${String(i)}]`));
    });
  }
  return problems;
}
