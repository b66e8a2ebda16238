// JSON Schema (OpenAPI 3.1 dialect) of a request codec: the schema a codec
// carries, or one derived from its io-ts structure.
import * as t from 'io-ts';
import { attachedSchema, ClosedType } from '../../http/codecs.ts';
import type { JsonSchema } from '../../http/codecs.ts';

/** Derives the schema of a codec; throws for codec kinds it does not know (a bug caught by the OpenAPI test). */
export function schemaOf(codec: t.Mixed): JsonSchema {
  const attached = attachedSchema(codec);
  if (attached !== undefined) return attached;
  if (codec instanceof ClosedType) {
    const required = Object.keys(codec.required as Record<string, t.Mixed>);
    const props = { ...(codec.required as Record<string, t.Mixed>), ...(codec.optional as Record<string, t.Mixed>) };
    return {
      type: 'object',
      additionalProperties: false,
      ...(required.length === 0 ? {} : { required }),
      properties: Object.fromEntries(Object.entries(props).map(([k, c]) => [k, schemaOf(c)])),
    };
  }
  if (codec instanceof t.StringType) return { type: 'string' };
  if (codec instanceof t.NumberType) return { type: 'number' };
  if (codec instanceof t.BooleanType) return { type: 'boolean' };
  if (codec instanceof t.ArrayType) return { type: 'array', items: schemaOf(codec.type as t.Mixed) };
  if (codec instanceof t.KeyofType) return { type: 'string', enum: Object.keys(codec.keys as Record<string, unknown>) };
  throw new Error(`no JSON Schema for codec ${codec.name}`);
}
