// Stacks used by the desired-state tests.
import { stackFromObject } from '../../../../operator/stack/stack-spec.ts';
import type { Stack } from '../../../../operator/stack/stack-spec.ts';
import type { DesiredInputs } from '../../../../operator/desired/desired-state.ts';

export function stackOf(name: string, spec: unknown, generation = 1): Stack {
  return stackFromObject({ metadata: { name, namespace: 'obs', uid: `uid-${name}`, generation }, spec });
}

export const inputs: DesiredInputs = {
  credentials: {
    adminKey: 'admin-key-value',
    clickhousePassword: 'ch-password',
    clickhouseDdlPassword: 'ch-ddl',
    interserverPassword: 'ch-interserver',
    clusterSecret: 'ch-secret',
    keeperPassword: 'keeper-pw',
  },
  referencedSecretsChecksum: '',
};
