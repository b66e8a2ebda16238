import { expect } from 'chai';
import { stackConditions, stackStatus } from '../../../../operator/status/stack-status.ts';
import type { Observed, WorkloadState } from '../../../../operator/status/stack-status.ts';
import { stackOf } from '../desired/stack-fixtures.ts';

const ready = (key: string, n: number): WorkloadState => ({ key, desired: n, ready: n, updated: n });
const done = { name: 'demo-migrate-abc', exists: true, succeeded: true, failed: false, failureMessage: undefined };
const allReady: Observed = {
  workloads: [ready('Deployment/demo-gateway', 2), ready('Deployment/demo-api', 2)],
  migration: done,
  applyError: undefined,
  tenantCount: 3,
};

function byType(o: Observed): Record<string, { status: string; reason: string; message: string }> {
  return Object.fromEntries(stackConditions(o).map((c) => [c.type, { status: c.status, reason: c.reason, message: c.message }]));
}

describe('operator stack status', () => {
  it('everything ready: Ready True, Progressing False, Degraded False', () => {
    const c = byType(allReady);
    expect([c['Ready']?.status, c['Ready']?.reason]).to.deep.equal(['True', 'AllComponentsReady']);
    expect([c['Progressing']?.status, c['Progressing']?.reason]).to.deep.equal(['False', 'Complete']);
    expect([c['Degraded']?.status, c['Degraded']?.reason]).to.deep.equal(['False', 'AsExpected']);
  });

  it('missing or unready workloads: not Ready, Progressing with the workloads named', () => {
    const c = byType({
      ...allReady,
      workloads: [
        { key: 'Deployment/demo-gateway', desired: 2, ready: undefined, updated: undefined },
        { key: 'Deployment/demo-api', desired: 2, ready: 1, updated: 2 },
      ],
    });
    expect([c['Ready']?.status, c['Ready']?.reason]).to.deep.equal(['False', 'WorkloadsNotReady']);
    expect(c['Ready']?.message).to.equal('Deployment/demo-gateway missing; Deployment/demo-api 1/2 ready');
    expect([c['Progressing']?.status, c['Progressing']?.reason]).to.deep.equal(['True', 'RollingOut']);
  });

  it('workloads ready but migration running: MigrationPending', () => {
    const c = byType({ ...allReady, migration: { ...done, succeeded: false } });
    expect([c['Ready']?.status, c['Ready']?.reason]).to.deep.equal(['False', 'MigrationPending']);
    expect([c['Progressing']?.status, c['Progressing']?.reason]).to.deep.equal(['True', 'MigrationRunning']);
  });

  it('failed migration or apply error: Degraded True with the reason', () => {
    const failed = byType({ ...allReady, migration: { ...done, succeeded: false, failed: true, failureMessage: 'BackoffLimitExceeded' } });
    expect([failed['Degraded']?.status, failed['Degraded']?.reason, failed['Degraded']?.message]).to.deep.equal([
      'True',
      'MigrationFailed',
      'Job demo-migrate-abc failed: BackoffLimitExceeded',
    ]);
    expect(failed['Ready']?.reason).to.equal('MigrationFailed');
    const apply = byType({ ...allReady, applyError: 'Deployment/demo-api: forbidden' });
    expect([apply['Degraded']?.status, apply['Degraded']?.reason, apply['Ready']?.reason, apply['Progressing']?.status]).to.deep.equal([
      'True',
      'ApplyFailed',
      'ApplyFailed',
      'False',
    ]);
  });

  it('status: observedGeneration, endpoints, tenant count, transition time kept while a condition holds', () => {
    const stack = stackOf('demo', { gateway: { ports: { otlpHttp: 9318 } } }, 4);
    const t0 = new Date('2026-01-01T00:00:00Z');
    const first = stackStatus(stack, { ...allReady, migration: { ...done, succeeded: false } }, [], t0);
    expect(first.observedGeneration).to.equal(4);
    expect(first.tenantCount).to.equal(3);
    expect(first.endpoints).to.deep.equal({
      otlpHttp: 'http://demo-gateway.obs.svc:9318',
      otlpGrpc: 'demo-gateway.obs.svc:4317',
      api: 'http://demo-api.obs.svc:8080',
    });
    const t1 = new Date('2026-01-01T00:05:00Z');
    const second = stackStatus(stack, allReady, first.conditions, t1);
    const at = (s: typeof first, type: string): string | undefined => s.conditions.find((c) => c.type === type)?.lastTransitionTime;
    expect(at(second, 'Ready')).to.equal(t1.toISOString());
    expect(at(second, 'Degraded')).to.equal(t0.toISOString());
    expect(second.conditions.every((c) => c.observedGeneration === 4)).to.equal(true);
  });
});
