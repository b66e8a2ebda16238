// TenantDirectory over the /v1 HTTP API with an admin key:
// GET /v1/tenants?limit=&page= (cursor pages), GET and PUT /v1/tenants/:id
// (PUT ?source=tenant for declared settings), GET and PUT
// /v1/settings/tenant-defaults.
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';
import type { SettingValues } from '../../src/tenant/settings/tenant-settings.ts';
import { reportedSettingsOf, settingValuesOf } from './declared-settings.ts';
import type { StoredTenant, TenantDirectory } from './tenant-directory.ts';

const pageSize = 1000;
const timeoutMs = 10_000;
/** A guard against a cursor that never ends. */
const maxPages = 10_000;
const defaultsPath = '/v1/settings/tenant-defaults';

interface Page {
  readonly data: readonly StoredTenant[];
  readonly nextPage: string | null;
}

function isTenant(v: unknown): v is { id: string; name: string } {
  return typeof v === 'object' && v !== null && typeof (v as StoredTenant).id === 'string' && typeof (v as StoredTenant).name === 'string';
}

/** The fields the operator uses of an API tenant object. */
function storedTenant(t: { id: string; name: string }): StoredTenant {
  const settings = reportedSettingsOf(t);
  return { id: t.id, name: t.name, ...(settings === undefined ? {} : { settings }) };
}

function errorMessage(json: unknown): string {
  return (json as { error?: { message?: string } } | undefined)?.error?.message ?? '';
}

export class HttpTenantDirectory implements TenantDirectory {
  readonly #base: string;
  readonly #key: string;

  constructor(baseUrl: string, adminKey: string) {
    this.#base = baseUrl.replace(/\/+$/, '');
    this.#key = adminKey;
  }

  async #call(method: 'GET' | 'PUT', path: string, body?: unknown): Promise<Result<{ status: number; json: unknown }, string>> {
    let res: Response;
    try {
      res = await fetch(`${this.#base}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.#key}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      return fail(`${method} ${this.#base}${path}: ${(error as Error).message}`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (res.status >= 500 || res.status === 401 || res.status === 403 || res.status === 429) {
      const message = (json as { error?: { message?: string } } | undefined)?.error?.message ?? text.slice(0, 200);
      return fail(`${method} ${path}: HTTP ${res.status}: ${message}`);
    }
    return ok({ status: res.status, json });
  }

  async list(): Promise<Result<StoredTenant[], string>> {
    const all: StoredTenant[] = [];
    let page: string | null = null;
    for (let i = 0; i < maxPages; i++) {
      const query = new URLSearchParams({ limit: String(pageSize), ...(page === null ? {} : { page }) });
      const r = await this.#call('GET', `/v1/tenants?${query.toString()}`);
      if (!r.ok) return r;
      const body = r.value.json as Partial<Page> | undefined;
      if (r.value.status !== 200 || !Array.isArray(body?.data)) return fail(`GET /v1/tenants: unexpected HTTP ${r.value.status}`);
      all.push(...body.data.filter(isTenant).map(storedTenant));
      page = typeof body.nextPage === 'string' && body.nextPage !== '' ? body.nextPage : null;
      if (page === null) return ok(all);
    }
    return fail(`GET /v1/tenants: more than ${maxPages} pages`);
  }

  async get(id: string): Promise<Result<StoredTenant | undefined, string>> {
    const r = await this.#call('GET', `/v1/tenants/${encodeURIComponent(id)}`);
    if (!r.ok) return r;
    if (r.value.status === 404) return ok(undefined);
    return r.value.status === 200 && isTenant(r.value.json) ? ok(storedTenant(r.value.json)) : fail(`GET /v1/tenants/${id}: unexpected HTTP ${r.value.status}`);
  }

  async rename(id: string, name: string): Promise<Result<StoredTenant, string>> {
    return this.#putTenant(`/v1/tenants/${encodeURIComponent(id)}`, { name });
  }

  async putDeclaredSettings(id: string, declared: Required<SettingValues>): Promise<Result<StoredTenant, string>> {
    return this.#putTenant(`/v1/tenants/${encodeURIComponent(id)}?source=tenant`, { limits: declared.limits, retention: declared.retention });
  }

  async getTenantDefaults(): Promise<Result<Required<SettingValues> | undefined, string>> {
    const r = await this.#call('GET', defaultsPath);
    if (!r.ok) return r;
    if (r.value.status === 404) return ok(undefined);
    if (r.value.status !== 200) return fail(`GET ${defaultsPath}: HTTP ${r.value.status} ${errorMessage(r.value.json)}`.trim());
    return ok(settingValuesOf(r.value.json));
  }

  async putTenantDefaults(values: Required<SettingValues>): Promise<Result<Required<SettingValues>, string>> {
    const r = await this.#call('PUT', defaultsPath, { limits: values.limits, retention: values.retention });
    if (!r.ok) return r;
    if (r.value.status !== 200) return fail(`PUT ${defaultsPath}: HTTP ${r.value.status} ${errorMessage(r.value.json)}`.trim());
    return ok(settingValuesOf(r.value.json));
  }

  async #putTenant(path: string, body: unknown): Promise<Result<StoredTenant, string>> {
    const r = await this.#call('PUT', path, body);
    if (!r.ok) return r;
    if (r.value.status === 200 && isTenant(r.value.json)) return ok(storedTenant(r.value.json));
    return fail(`PUT ${path}: HTTP ${r.value.status} ${errorMessage(r.value.json)}`.trim());
  }
}
