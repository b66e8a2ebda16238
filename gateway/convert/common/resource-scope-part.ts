// What a converter renders once per resource and once per scope and copies
// into every row below them, whatever the wire format.
import type { Resolution } from './tenant-resolver.ts';

export interface ResourcePart {
  /** The columns service_name, resource_schema_url and resource_attributes, as RowBinary. */
  readonly bytes: Buffer;
  /** The resource's tenant.id resolution, undefined when it has none. */
  readonly tenant: Resolution | undefined;
  /** A value nests deeper than the limit: every item of the resource is rejected. */
  readonly tooDeep: boolean;
}

export interface ScopePart {
  /** The scope's columns, as RowBinary. */
  readonly bytes: Buffer;
  /** A value nests deeper than the limit: every item of the scope is rejected. */
  readonly tooDeep: boolean;
}
