// OTLP/JSON attributes, AnyValues, resources and scopes as RowBinary, read
// from the parsed JSON (otlp-json.ts): the same text protobuf-attributes.ts
// writes (strings as is, integers in decimal, doubles in JavaScript notation,
// bytes in base64, arrays and key-value lists as JSON), plus the lookups the
// converters need: tenant.id, service.name, log.record.uid. An AnyValue with
// several variants set is the last one fromObject set (bytes, kvlist, array,
// double, int, bool, string), as protobufjs's oneof getter reported it; the
// others are still checked, as fromObject converted them all.
import { fail, ok } from '../../../src/result.ts';
import { isValidTenantId } from '../../../src/tenant/tenant-id.ts';
import { RowWriter } from '../../rowbinary/row-writer.ts';
import { int64Text } from './otlp-values.ts';
import { bytesOf, bytesSet, checkDepth, InvalidJson, int64, isMessage, messageField, messageList, text } from './otlp-json.ts';
import type { Json } from './otlp-json.ts';
import type { RequestLimits, TruncateReason } from './item-limits.ts';
import { tenantAttribute } from './tenant-resolver.ts';
import type { Resolution } from './tenant-resolver.ts';
import type { ResourcePart, ScopePart } from './resource-scope-part.ts';

const common = '.opentelemetry.proto.common.v1.';
const names = {
  value: `${common}KeyValue.value`,
  arrayValue: `${common}AnyValue.arrayValue`,
  kvlistValue: `${common}AnyValue.kvlistValue`,
  bytesValue: `${common}AnyValue.bytesValue`,
  arrayValues: `${common}ArrayValue.values`,
  kvlistValues: `${common}KeyValueList.values`,
  scopeAttributes: `${common}InstrumentationScope.attributes`,
  resourceAttributes: '.opentelemetry.proto.resource.v1.Resource.attributes',
  entityRefs: '.opentelemetry.proto.resource.v1.Resource.entityRefs',
  idKeys: `${common}EntityRef.idKeys`,
  descriptionKeys: `${common}EntityRef.descriptionKeys`,
} as const;

/** AnyValue variants, in the order fromObject sets them (the last one set wins). */
const Variant = { none: 0, string: 1, bool: 2, int: 3, double: 4, array: 5, kvlist: 6, bytes: 7 } as const;
type Variant = (typeof Variant)[keyof typeof Variant];

/** The variant of an AnyValue at `depth`, after checking the variants that lose to it. */
function variantOf(v: Json, depth: number): Variant {
  checkDepth(depth);
  let variant: Variant = Variant.none;
  if (v['stringValue'] !== null && v['stringValue'] !== undefined) variant = Variant.string;
  if (v['boolValue'] !== null && v['boolValue'] !== undefined) variant = Variant.bool;
  if (v['intValue'] !== null && v['intValue'] !== undefined) variant = Variant.int;
  if (v['doubleValue'] !== null && v['doubleValue'] !== undefined) variant = Variant.double;
  if (v['arrayValue'] !== null && v['arrayValue'] !== undefined) variant = Variant.array;
  if (v['kvlistValue'] !== null && v['kvlistValue'] !== undefined) variant = Variant.kvlist;
  if (bytesSet(v['bytesValue'])) variant = Variant.bytes;
  if (variant > Variant.int && v['intValue'] !== null && v['intValue'] !== undefined) int64(v['intValue']);
  if (variant > Variant.array && v['arrayValue'] !== null && v['arrayValue'] !== undefined) arrayJson(v['arrayValue'], depth);
  if (variant > Variant.kvlist && v['kvlistValue'] !== null && v['kvlistValue'] !== undefined) kvlistJson(v['kvlistValue'], depth);
  return variant;
}

function arrayJson(a: unknown, depth: number): unknown[] {
  const array = messageField(a, names.arrayValue) ?? {};
  checkDepth(depth + 1);
  return messageList(array['values'], names.arrayValues).map((value) => anyValueJson(value, depth + 2));
}

function kvlistJson(l: unknown, depth: number): Record<string, unknown> {
  const list = messageField(l, names.kvlistValue) ?? {};
  checkDepth(depth + 1);
  const out: Record<string, unknown> = {};
  for (const kv of messageList(list['values'], names.kvlistValues)) {
    checkDepth(depth + 2);
    const value = messageField(kv['value'], names.value);
    out[text(kv['key'])] = value === undefined ? null : anyValueJson(value, depth + 3);
  }
  return out;
}

/** An AnyValue as a JSON-compatible value, for nested arrays and maps. */
function anyValueJson(v: Json, depth: number): unknown {
  switch (variantOf(v, depth)) {
    case Variant.string:
      return text(v['stringValue']);
    case Variant.bool:
      return Boolean(v['boolValue']);
    case Variant.int:
      return int64Text(int64(v['intValue']));
    case Variant.double:
      return Number(v['doubleValue']);
    case Variant.array:
      return arrayJson(v['arrayValue'], depth);
    case Variant.kvlist:
      return kvlistJson(v['kvlistValue'], depth);
    case Variant.bytes:
      return bytesOf(v['bytesValue'], names.bytesValue).toString('base64');
    case Variant.none:
      return null;
  }
}

/** An AnyValue at `depth` as the text stored in a String column or attribute map. */
export function anyValueText(v: Json, depth: number): string {
  switch (variantOf(v, depth)) {
    case Variant.string:
      return text(v['stringValue']);
    case Variant.bool:
      return v['boolValue'] ? 'true' : 'false';
    case Variant.int:
      return int64Text(int64(v['intValue']));
    case Variant.double:
      return String(Number(v['doubleValue']));
    case Variant.array:
      return JSON.stringify(arrayJson(v['arrayValue'], depth));
    case Variant.kvlist:
      return JSON.stringify(kvlistJson(v['kvlistValue'], depth));
    case Variant.bytes:
      return bytesOf(v['bytesValue'], names.bytesValue).toString('base64');
    case Variant.none:
      return '';
  }
}

/** The text of a KeyValue's value at `depth` (the KeyValue's); absent is ''. */
function valueText(kv: Json, depth: number): string {
  checkDepth(depth);
  const value = messageField(kv['value'], names.value);
  return value === undefined ? '' : anyValueText(value, depth + 1);
}

/**
 * Whether an AnyValue that is an array or a key-value list, one level itself,
 * nests more than `levels` levels of them (protobuf-attributes.ts's
 * nestsDeeper over the same value); walks no deeper than that and leaves
 * malformed parts to the rendering that reports them.
 */
function nestsDeeper(v: Json, levels: number): boolean {
  let children: unknown[];
  if (bytesSet(v['bytesValue'])) return false;
  const list = v['kvlistValue'];
  const array = v['arrayValue'];
  if (list !== null && list !== undefined) {
    const values = isMessage(list) ? list['values'] : undefined;
    children = Array.isArray(values) ? values.map((kv: unknown) => (isMessage(kv) ? kv['value'] : undefined)) : [];
  } else if (array !== null && array !== undefined) {
    const values = isMessage(array) ? array['values'] : undefined;
    children = Array.isArray(values) ? values : [];
  } else {
    return false;
  }
  if (levels === 0) return true;
  for (const child of children) if (isMessage(child) && nestsDeeper(child, levels - 1)) return true;
  return false;
}

/**
 * Writes an AnyValue at `depth` as its text, at most `max` bytes (truncations
 * tallied as `reason`); a value nested deeper than the limits allow is
 * written as '' and flagged in `limits.tooDeep`.
 */
export function writeAnyValue(w: RowWriter, v: Json, depth: number, limits: RequestLimits, max: number, reason: TruncateReason): void {
  if (nestsDeeper(v, limits.limits.maxValueDepth)) {
    limits.tooDeep = true;
    w.empty();
    return;
  }
  limits.writeText(w, anyValueText(v, depth), max, reason);
}

/** Writes a KeyValue's value at `depth` (the KeyValue's) as an attribute value; absent is ''. */
function writeValue(w: RowWriter, kv: Json, depth: number, limits: RequestLimits): void {
  checkDepth(depth);
  const value = messageField(kv['value'], names.value);
  if (value === undefined) w.empty();
  else writeAnyValue(w, value, depth + 1, limits, limits.limits.maxAttributeValueBytes, 'attribute_value_bytes');
}

/**
 * Attributes (`name`: the repeated field, for errors) as a Map(LowCardinality(String), String):
 * the first maxAttributes pairs in order (the others are checked, not stored); returns how many were dropped.
 */
export function writeAttributes(w: RowWriter, attributes: unknown, name: string, depth: number, limits: RequestLimits): number {
  const list = messageList(attributes, name);
  const kept = limits.keep(list.length, limits.limits.maxAttributes, 'attribute_count');
  w.varint(kept);
  for (let i = 0; i < kept; i++) {
    const kv = list[i] ?? {};
    limits.writeText(w, text(kv['key']), limits.limits.maxAttributeKeyBytes, 'attribute_key_bytes');
    writeValue(w, kv, depth, limits);
  }
  for (let i = kept; i < list.length; i++) {
    const kv = list[i] ?? {};
    text(kv['key']);
    const value = messageField(kv['value'], names.value);
    if (value !== undefined && !nestsDeeper(value, limits.limits.maxValueDepth)) anyValueText(value, depth + 1);
  }
  return list.length - kept;
}

/** Writes the value of the first attribute named `key` as an attribute value; returns false when absent (nothing written). */
export function writeAttributeValue(w: RowWriter, attributes: unknown, key: string, depth: number, limits: RequestLimits): boolean {
  if (!Array.isArray(attributes)) return false; // not a list: writeAttributes refuses it
  for (const kv of attributes as unknown[]) {
    if (isMessage(kv) && text(kv['key']) === key) {
      writeValue(w, kv, depth, limits);
      return true;
    }
  }
  return false;
}

/** Checks attributes that no column stores (exemplars, metric metadata), as fromObject did. */
export function checkAttributes(attributes: unknown, name: string, depth: number): void {
  for (const kv of messageList(attributes, name)) valueText(kv, depth);
}

/** The text of the first attribute named `key`, or undefined when absent. */
export function attributeText(attributes: unknown, key: string, depth: number): string | undefined {
  if (!Array.isArray(attributes)) return undefined; // not a list: writeAttributes refuses it
  for (const kv of attributes as unknown[]) if (isMessage(kv) && text(kv['key']) === key) return valueText(kv, depth);
  return undefined;
}

/** The tenant.id attribute of a list: undefined when absent, otherwise a resolution (tenant-resolver.ts's rules). */
export function tenantOf(attributes: unknown, depth: number): Resolution | undefined {
  if (!Array.isArray(attributes)) return undefined; // not a list: writeAttributes refuses it
  for (const kv of attributes as unknown[]) {
    if (!isMessage(kv) || text(kv['key']) !== tenantAttribute) continue;
    const v = kv['value'];
    if (!isMessage(v)) return fail({ reason: 'invalid_tenant_type' });
    const variant = variantOf(v, depth + 1);
    let id: string;
    if (variant === Variant.string) id = text(v['stringValue']);
    else if (variant === Variant.int) id = int64Text(int64(v['intValue']));
    else return fail({ reason: 'invalid_tenant_type' });
    return isValidTenantId(id) ? ok(id) : fail({ reason: 'invalid_tenant_id' });
  }
  return undefined;
}

/** Renders a Resource{Spans,Logs,Metrics}'s resource (`name`: its field, for errors) and schema url, once per resource. */
export function resourcePart(resourceField: unknown, schemaUrl: unknown, name: string, limits: RequestLimits): ResourcePart {
  const resource = messageField(resourceField, name) ?? {};
  const attributes = resource['attributes'];
  // KeyValues of a resource are at depth 3: request, Resource{Spans,…}, Resource, KeyValue.
  const w = new RowWriter(1024);
  limits.tooDeep = false;
  if (!writeAttributeValue(w, attributes, 'service.name', 3, limits)) w.empty();
  w.text(text(schemaUrl));
  writeAttributes(w, attributes, names.resourceAttributes, 3, limits);
  for (const ref of messageList(resource['entityRefs'], names.entityRefs)) {
    if (ref['idKeys'] && !Array.isArray(ref['idKeys'])) throw new InvalidJson(`${names.idKeys}: array expected`);
    if (ref['descriptionKeys'] && !Array.isArray(ref['descriptionKeys'])) throw new InvalidJson(`${names.descriptionKeys}: array expected`);
  }
  limits.tally.keep();
  return { bytes: w.result(), tenant: tenantOf(attributes, 3), tooDeep: limits.tooDeep };
}

/**
 * Renders a Scope{Spans,Logs,Metrics}'s scope (`name`: its field, for errors): scope_name,
 * scope_version, scope_schema_url `withSchemaUrl` (logs), scope_attributes.
 */
export function scopePart(scopeField: unknown, name: string, withSchemaUrl: boolean, schemaUrl: unknown, limits: RequestLimits): ScopePart {
  const scope = messageField(scopeField, name) ?? {};
  const w = new RowWriter(512);
  w.text(text(scope['name']));
  w.text(text(scope['version']));
  if (withSchemaUrl) w.text(text(schemaUrl));
  // KeyValues of a scope are at depth 4: request, Resource{…}, Scope{…}, InstrumentationScope, KeyValue.
  limits.tooDeep = false;
  writeAttributes(w, scope['attributes'], names.scopeAttributes, 4, limits);
  limits.tally.keep();
  return { bytes: w.result(), tooDeep: limits.tooDeep };
}
