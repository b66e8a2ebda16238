// The port through which the operator reads and names a stack's tenants: the
// stack's /v1 tenants API. Failures are values.

export interface StoredTenant {
  readonly id: string;
  readonly name: string;
}

export type DirectoryResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

export interface TenantDirectory {
  /** Every tenant the admin key sees, all pages. */
  list(): Promise<DirectoryResult<StoredTenant[]>>;
  /** One tenant, or undefined when the API does not know it. */
  get(id: string): Promise<DirectoryResult<StoredTenant | undefined>>;
  /** Sets a tenant's name, creating the record when the id is unknown. */
  rename(id: string, name: string): Promise<DirectoryResult<StoredTenant>>;
}
