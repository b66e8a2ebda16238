// The tested least-privilege rules (test/fixtures/k8s/operator-rbac.yaml, which
// the chart's rules equal) grant exactly what the operator's resource table
// needs: every kind it owns with the verbs of a watch-fed apply-and-prune loop,
// and nothing it does not use.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { ownedTypes, resourceTypes } from '../../../../operator/kube/resource-types.ts';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const fixture = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'k8s', 'operator-rbac.yaml');
const rules =
  parseAllDocuments(readFileSync(fixture, 'utf8'))
    .map((d) => d.toJS() as { kind: string; rules?: Rule[] })
    .find((o) => o.kind === 'ClusterRole')?.rules ?? [];
const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

/** The verbs granted on group/resource, over every rule. */
function verbs(group: string, resource: string): string[] {
  return [...new Set(rules.filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource)).flatMap((r) => r.verbs))].sort();
}

describe('operator RBAC rules against the resource table', () => {
  const loop = ['create', 'delete', 'get', 'list', 'patch', 'watch'];

  it('every owned kind, HPAs and NetworkPolicies included, gets exactly get/list/watch/create/patch/delete', () => {
    expect(ownedTypes).to.include.members([resourceTypes.horizontalPodAutoscaler, resourceTypes.networkPolicy]);
    for (const t of ownedTypes) expect(verbs(groupOf(t.apiVersion), t.plural), t.kind).to.deep.equal(loop);
  });

  it('grants nothing beyond the resource table (no resource the operator never touches, no update outside the Lease)', () => {
    const known = new Set(Object.values(resourceTypes).flatMap((t) => [`${groupOf(t.apiVersion)}/${t.plural}`, `${groupOf(t.apiVersion)}/${t.plural}/status`]));
    for (const r of rules) {
      for (const group of r.apiGroups) for (const resource of r.resources) expect(known.has(`${group}/${resource}`), `${group}/${resource}`).to.equal(true);
      if (r.verbs.includes('update')) expect(r.resources).to.deep.equal(['leases']);
    }
  });
});
