// The port through which the operator reads and names a stack's tenants and
// pushes their declared settings: the stack's /v1 tenants and settings API.
// Failures are values: a message saying what went wrong.
import type { Result } from '../../src/result.ts';
import type { SettingValues } from '../../src/tenant/settings/tenant-settings.ts';
import type { ReportedSettings } from './declared-settings.ts';

export interface StoredTenant {
  readonly id: string;
  readonly name: string;
  /** Effective settings with their sources; absent when the API reports none. */
  readonly settings?: ReportedSettings;
}

export interface TenantDirectory {
  /** Every tenant the admin key sees, all pages. */
  list(): Promise<Result<StoredTenant[], string>>;
  /** One tenant, or undefined when the API does not know it. */
  get(id: string): Promise<Result<StoredTenant | undefined, string>>;
  /** Sets a tenant's name, creating the record when the id is unknown. */
  rename(id: string, name: string): Promise<Result<StoredTenant, string>>;
  /** Replaces the values a Tenant resource declares (source 'tenant'): fields absent are removed from that source. */
  putDeclaredSettings(id: string, declared: Required<SettingValues>): Promise<Result<StoredTenant, string>>;
  /** The stack's tenant defaults (source 'stack'), only the fields set; undefined when the API has no settings routes. */
  getTenantDefaults(): Promise<Result<Required<SettingValues> | undefined, string>>;
  /** Replaces the stack's tenant defaults (source 'stack'). */
  putTenantDefaults(values: Required<SettingValues>): Promise<Result<Required<SettingValues>, string>>;
}
