// Stack in, objects out: everything one ObservabilityStack should own, in
// apply order (NetworkPolicies before any pod they protect, Secret and config
// before the workloads that read them).
import type { Manifest } from './manifest-types.ts';
import type { Stack } from '../stack/stack-spec.ts';
import { checksum } from './config-checksum.ts';
import { credentialsSecret, needsCredentialsSecret } from './credentials-secret.ts';
import type { GeneratedCredentials } from './credentials-secret.ts';
import { disruptionBudgets } from './disruption-budgets.ts';
import { managedClickHouseObjects } from './managed-clickhouse.ts';
import { networkPolicies } from './network-policies.ts';
import { migrationJob } from './migration-job.ts';
import { apiDeployment, apiService, autoscalers, gatewayService, gatewayStatefulSet } from './tenantry-workloads.ts';

export interface DesiredInputs {
  /** Contents of the generated Secret: the stored values, or fresh ones for a new stack. */
  readonly credentials: GeneratedCredentials;
  /** Checksum of the user Secrets the pods read (API keys, external ClickHouse); '' when none. */
  readonly referencedSecretsChecksum: string;
}

/** Every child object of a stack, in apply order. */
export function desiredObjects(stack: Stack, inputs: DesiredInputs): Manifest[] {
  const generated = needsCredentialsSecret(stack) ? credentialsSecret(stack, inputs.credentials) : undefined;
  const secretsChecksum = checksum({ generated: generated?.data, referenced: inputs.referencedSecretsChecksum });
  const ch = stack.spec.clickhouse;
  return [
    ...networkPolicies(stack),
    ...(generated === undefined ? [] : [generated]),
    ...(ch.mode === 'managed' ? managedClickHouseObjects(stack, ch.managed, checksum(inputs.credentials.clickhousePassword)) : []),
    migrationJob(stack),
    gatewayStatefulSet(stack, secretsChecksum),
    gatewayService(stack),
    apiDeployment(stack, secretsChecksum),
    apiService(stack),
    ...autoscalers(stack),
    ...disruptionBudgets(stack),
  ];
}

/** "Kind/name" of an object, the identity used for pruning and in messages. */
export function objectKey(o: { readonly kind?: string; readonly metadata?: { readonly name?: string } }): string {
  return `${o.kind ?? '?'}/${o.metadata?.name ?? '?'}`;
}
