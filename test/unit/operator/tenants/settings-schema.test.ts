// The CRD schemas of declared settings (Tenant spec.limits/spec.retention,
// ObservabilityStack spec.tenantDefaults) against the settings module: the
// same field names, integer types, and the bounds the API validates with.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { limitBounds, limitFields, retentionBounds, retentionFields } from '../../../../src/tenant/settings/tenant-settings.ts';
import type { Bound } from '../../../../src/tenant/settings/tenant-settings.ts';

type Schema = {
  type?: string;
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
};

function rootSchema(file: string): Schema {
  const doc = parse(readFileSync(join(import.meta.dirname, '..', '..', '..', '..', 'crds', file), 'utf8'), { merge: true }) as {
    spec: { versions: Array<{ schema: { openAPIV3Schema: Schema } }> };
  };
  const schema = doc.spec.versions[0]?.schema.openAPIV3Schema;
  if (schema === undefined) throw new Error(`no schema in ${file}`);
  return schema;
}

function at(schema: Schema, path: string): Schema {
  const found = path.split('.').reduce<Schema | undefined>((s, k) => s?.properties?.[k], schema);
  if (found === undefined) throw new Error(`no ${path}`);
  return found;
}

function expectGroup(group: Schema, fields: readonly string[], bounds: Readonly<Record<string, Bound>>, where: string): void {
  expect(group.type, where).to.equal('object');
  expect(group['x-kubernetes-preserve-unknown-fields'], `${where} prunes unknown fields`).to.equal(undefined);
  expect(Object.keys(group.properties ?? {}), where).to.have.members([...fields]);
  for (const f of fields) {
    const s = group.properties?.[f];
    expect(s?.type, `${where}.${f}`).to.equal('integer');
    expect([s?.minimum, s?.maximum], `${where}.${f} bounds`).to.deep.equal([bounds[f]?.min, bounds[f]?.max]);
  }
}

describe('operator CRD schemas of tenant settings', () => {
  const tenant = rootSchema('tenantry.dev_tenants.yaml');
  const stack = rootSchema('tenantry.dev_observabilitystacks.yaml');

  it('Tenant spec.limits and spec.retention: the contract’s field names, integers, its bounds', () => {
    expectGroup(at(tenant, 'spec.limits'), limitFields, limitBounds, 'Tenant spec.limits');
    expectGroup(at(tenant, 'spec.retention'), retentionFields, retentionBounds, 'Tenant spec.retention');
  });

  it('ObservabilityStack spec.tenantDefaults: the same groups, no defaults of their own', () => {
    expect(Object.keys(at(stack, 'spec.tenantDefaults').properties ?? {})).to.have.members(['limits', 'retention']);
    expectGroup(at(stack, 'spec.tenantDefaults.limits'), limitFields, limitBounds, 'spec.tenantDefaults.limits');
    expectGroup(at(stack, 'spec.tenantDefaults.retention'), retentionFields, retentionBounds, 'spec.tenantDefaults.retention');
    expect(JSON.stringify(at(stack, 'spec.tenantDefaults'))).not.to.contain('"default"');
  });

  it('Tenant status has every effective field and a source enum for each', () => {
    expect(Object.keys(at(tenant, 'status.limits').properties ?? {})).to.have.members([...limitFields]);
    expect(Object.keys(at(tenant, 'status.retention').properties ?? {})).to.have.members([...retentionFields]);
    for (const [group, fields] of [
      ['limits', limitFields],
      ['retention', retentionFields],
    ] as const) {
      for (const f of fields) expect(at(tenant, `status.sources.${group}.${f}`).enum, `${group}.${f}`).to.have.members(['tenant', 'api', 'stack', 'default']);
    }
  });
});
