// Status of a stack, computed in one place from what the reconciler observed:
// the workloads' ready counts, the migration Job, the last apply error and
// the tenant count. Ready means every workload is at its desired replicas
// and the schema migration succeeded.
import type { Stack } from '../stack/stack-spec.ts';
import { childNames } from '../desired/child-names.ts';
import { apiPort } from '../desired/tenantry-workloads.ts';
import type { Condition, ConditionInput } from './conditions.ts';
import { mergeConditions } from './conditions.ts';

export interface WorkloadState {
  /** "Deployment/demo-gateway" */
  readonly key: string;
  readonly desired: number;
  /** Undefined when the object does not exist (yet). */
  readonly ready: number | undefined;
  readonly updated: number | undefined;
}

export interface JobState {
  readonly name: string;
  readonly exists: boolean;
  readonly succeeded: boolean;
  readonly failed: boolean;
  readonly failureMessage: string | undefined;
}

export interface Observed {
  readonly workloads: readonly WorkloadState[];
  readonly migration: JobState;
  /** The message of the last failed apply or prune, if this reconcile failed. */
  readonly applyError: string | undefined;
  readonly tenantCount: number | undefined;
}

export interface StackStatus {
  readonly observedGeneration: number;
  readonly conditions: Condition[];
  readonly endpoints: { readonly otlpHttp: string; readonly otlpGrpc: string; readonly api: string };
  readonly tenantCount?: number;
}

/** In-cluster endpoints of a stack's Services. */
export function stackEndpoints(stack: Stack): StackStatus['endpoints'] {
  const n = childNames(stack.ref.name);
  const ns = stack.ref.namespace;
  const p = stack.spec.gateway.ports;
  return {
    otlpHttp: `http://${n.gateway}.${ns}.svc:${p.otlpHttp}`,
    otlpGrpc: `${n.gateway}.${ns}.svc:${p.otlpGrpc}`,
    api: `http://${n.api}.${ns}.svc:${apiPort}`,
  };
}

function describe(w: WorkloadState): string {
  return w.ready === undefined ? `${w.key} missing` : `${w.key} ${w.ready}/${w.desired} ready`;
}

/** Ready, Progressing and Degraded from the observed state. */
export function stackConditions(o: Observed): ConditionInput[] {
  const waiting = o.workloads.filter((w) => w.ready === undefined || w.ready < w.desired || (w.updated ?? 0) < w.desired);
  const m = o.migration;
  const migrationFailed = m.failed;
  const migrationPending = !m.succeeded && !m.failed;

  let degraded: ConditionInput;
  if (o.applyError !== undefined) degraded = { type: 'Degraded', status: 'True', reason: 'ApplyFailed', message: o.applyError };
  else if (migrationFailed)
    degraded = {
      type: 'Degraded',
      status: 'True',
      reason: 'MigrationFailed',
      message: `Job ${m.name} failed${m.failureMessage === undefined ? '' : `: ${m.failureMessage}`}`,
    };
  else degraded = { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'no errors' };

  const pendingParts = [...waiting.map(describe), ...(migrationPending ? [`Job ${m.name} ${m.exists ? 'running' : 'missing'}`] : [])];
  const progressing: ConditionInput =
    pendingParts.length > 0 && o.applyError === undefined && !migrationFailed
      ? {
          type: 'Progressing',
          status: 'True',
          reason: migrationPending && waiting.length === 0 ? 'MigrationRunning' : 'RollingOut',
          message: pendingParts.join('; '),
        }
      : {
          type: 'Progressing',
          status: 'False',
          reason: pendingParts.length === 0 ? 'Complete' : 'Stalled',
          message: pendingParts.length === 0 ? 'every workload is at its desired state' : pendingParts.join('; '),
        };

  let ready: ConditionInput;
  if (o.applyError !== undefined) ready = { type: 'Ready', status: 'False', reason: 'ApplyFailed', message: o.applyError };
  else if (migrationFailed) ready = { type: 'Ready', status: 'False', reason: 'MigrationFailed', message: degraded.message };
  else if (waiting.length > 0) ready = { type: 'Ready', status: 'False', reason: 'WorkloadsNotReady', message: waiting.map(describe).join('; ') };
  else if (migrationPending) ready = { type: 'Ready', status: 'False', reason: 'MigrationPending', message: `waiting for Job ${m.name}` };
  else ready = { type: 'Ready', status: 'True', reason: 'AllComponentsReady', message: `${o.workloads.length} workloads ready, schema migrated` };

  return [ready, progressing, degraded];
}

/** The full status to write, keeping transition times of unchanged conditions. */
export function stackStatus(stack: Stack, o: Observed, previous: readonly Condition[], now: Date): StackStatus {
  return {
    observedGeneration: stack.ref.generation,
    conditions: mergeConditions(previous, stackConditions(o), stack.ref.generation, now),
    endpoints: stackEndpoints(stack),
    ...(o.tenantCount === undefined ? {} : { tenantCount: o.tenantCount }),
  };
}
