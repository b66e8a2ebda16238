import { expect } from 'chai';
import { Registry } from 'prom-client';
import type { KubeObject } from '../../../../operator/kube/kube-rest.ts';
import { registerStackConditions } from '../../../../operator/status/stack-condition-metric.ts';

const stack = (name: string, conditions: Array<{ type: string; status: string }>): KubeObject => ({
  metadata: { name, namespace: 'obs' },
  status: { conditions },
});

describe('tenantry_operator_stack_condition', () => {
  it('exports each stack condition as 1 (True) or 0, follows the cache at each scrape, and goes away when unregistered', async () => {
    const registry = new Registry();
    let stacks = [
      stack('a', [
        { type: 'Ready', status: 'False' },
        { type: 'Degraded', status: 'True' },
      ]),
      stack('b', [{ type: 'Degraded', status: 'False' }]),
    ];
    const unregister = registerStackConditions(registry, () => stacks);
    const text = await registry.metrics();
    expect(text).to.contain('tenantry_operator_stack_condition{namespace="obs",stack="a",condition="Degraded"} 1');
    expect(text).to.contain('tenantry_operator_stack_condition{namespace="obs",stack="a",condition="Ready"} 0');
    expect(text).to.contain('tenantry_operator_stack_condition{namespace="obs",stack="b",condition="Degraded"} 0');
    stacks = [stack('b', [{ type: 'Degraded', status: 'True' }])];
    const after = await registry.metrics();
    expect(after).to.not.contain('stack="a"');
    expect(after).to.contain('tenantry_operator_stack_condition{namespace="obs",stack="b",condition="Degraded"} 1');
    unregister();
    expect(await registry.metrics()).to.not.contain('tenantry_operator_stack_condition');
  });

  it('registering again (a new leadership term) replaces the previous gauge instead of failing', async () => {
    const registry = new Registry();
    registerStackConditions(registry, () => [stack('old', [{ type: 'Ready', status: 'True' }])]);
    registerStackConditions(registry, () => [stack('new', [{ type: 'Ready', status: 'True' }])]);
    const text = await registry.metrics();
    expect(text).to.contain('stack="new"').and.not.contain('stack="old"');
  });
});
