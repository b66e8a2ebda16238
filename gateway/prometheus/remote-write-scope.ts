// Temporary: the scope moved to src/prometheus/remote-write-scope.ts (shared by the gateway and the API).
export { remoteWriteScope } from '../../src/prometheus/remote-write-scope.ts';
