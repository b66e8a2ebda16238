// A real kube-apiserver on etcd, on loopback free ports, as controller-runtime's
// envtest runs it: no kubelet, no controller manager (so pods never run and
// nothing is garbage-collected). Static token auth, RBAC, a temp dir with a
// service-account key pair and a kubeconfig; crds/ applied with kubectl.
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePorts } from '../../support/server-process.ts';
import type { K8sBinaries } from './k8s-binaries.ts';

const execFileAsync = promisify(execFile);
const repoRoot = join(import.meta.dirname, '..', '..');

export interface KubeTestServer {
  readonly url: string;
  readonly token: string;
  readonly kubeconfigPath: string;
  readonly dir: string;
  /** Milliseconds from spawn to etcd + API server ready. */
  readonly startMs: number;
  /** A kubeconfig for one of the extra users given at start (no groups: RBAC decides). */
  kubeconfigFor(user: string): string;
  /** Runs kubectl against this server; resolves with stdout, rejects with stderr. */
  kubectl(args: readonly string[], input?: string): Promise<string>;
  /**
   * Runs a watching kubectl (`get ... -w -o jsonpath=...{"\n"}`) until a printed
   * line satisfies `until`; resolves with that line. An event to await instead of polling.
   */
  kubectlUntil(args: readonly string[], until: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Every request the API server received so far (needs `audit: true` at start). */
  requests(): AuditedRequest[];
  /** Stops the API server and starts it again on the same port and etcd. */
  restartApiServer(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

function httpsStatus(url: string, token: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { rejectUnauthorized: false, headers: { authorization: `Bearer ${token}` }, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => {
      resolve(0);
    });
    req.on('timeout', () => {
      req.destroy();
      resolve(0);
    });
    req.end();
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}:\n${output().slice(-3000)}`);
    if (await check()) return;
    // Polled: a starting server has no event to wait on but its answering /readyz.
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} not ready within ${timeoutMs} ms:\n${output().slice(-3000)}`);
}

function spawnLogged(cmd: string, args: string[]): { child: ChildProcess; output: () => string } {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (c: Buffer): void => {
    out = (out + c.toString('utf8')).slice(-200_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  return { child, output: () => out };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    child.kill('SIGKILL');
  }, 10_000);
  await exited;
  clearTimeout(timer);
}

export interface KubeTestServerOptions {
  /** Extra users with their own static tokens and no groups, for RBAC tests. */
  readonly users?: readonly string[];
  /** Writes an audit log of every request (one line each), read by `requests()`. */
  readonly audit?: boolean;
}

/** One request as the API server's audit log records it. */
export interface AuditedRequest {
  readonly user: string;
  readonly verb: string;
  /** "deployments", "observabilitystacks/status", or the path for non-resource requests. */
  readonly resource: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
}

// One audit line per request: only the RequestReceived stage, metadata level.
const auditPolicy = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [ResponseStarted, ResponseComplete, Panic]\nrules:\n- level: Metadata\n';

function readAudit(path: string): AuditedRequest[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      const e = JSON.parse(line) as {
        user?: { username?: string };
        verb?: string;
        requestURI?: string;
        objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
      };
      const r = e.objectRef;
      return {
        user: e.user?.username ?? '',
        verb: e.verb ?? '',
        resource:
          r?.resource === undefined ? ((e.requestURI ?? '').split('?')[0] ?? '') : `${r.resource}${r.subresource === undefined ? '' : `/${r.subresource}`}`,
        namespace: r?.namespace,
        name: r?.name,
      };
    });
}

function kubeconfig(url: string, token: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'current-context: test',
    'clusters:',
    `- name: test`,
    `  cluster: { server: "${url}", insecure-skip-tls-verify: true }`,
    'users:',
    `- name: admin`,
    `  user: { token: "${token}" }`,
    'contexts:',
    `- name: test`,
    `  context: { cluster: test, user: admin, namespace: default }`,
    '',
  ].join('\n');
}

/** Starts etcd and kube-apiserver, applies crds/, and writes a kubeconfig. */
export async function startKubeTestServer(bin: K8sBinaries, options: KubeTestServerOptions = {}): Promise<KubeTestServer> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'tenantry-kube-'));
  const token = randomBytes(24).toString('hex');
  const userTokens = new Map((options.users ?? []).map((u) => [u, randomBytes(24).toString('hex')]));
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
  writeFileSync(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(
    join(dir, 'tokens.csv'),
    [`${token},tenantry-test-admin,tenantry-test-admin,"system:masters"`, ...[...userTokens].map(([user, t]) => `${t},${user},${user}`)].join('\n') + '\n',
  );

  const { etcdClient, etcdPeer, apiPort } = await freePorts(['etcdClient', 'etcdPeer', 'apiPort']);
  const etcd = spawnLogged(bin.etcd, [
    '--data-dir',
    join(dir, 'etcd'),
    '--name',
    'test',
    '--listen-client-urls',
    `http://127.0.0.1:${etcdClient}`,
    '--advertise-client-urls',
    `http://127.0.0.1:${etcdClient}`,
    '--listen-peer-urls',
    `http://127.0.0.1:${etcdPeer}`,
    '--initial-advertise-peer-urls',
    `http://127.0.0.1:${etcdPeer}`,
    '--initial-cluster',
    `test=http://127.0.0.1:${etcdPeer}`,
    '--unsafe-no-fsync',
    '--log-level',
    'error',
  ]);
  const apiArgs = [
    '--etcd-servers',
    `http://127.0.0.1:${etcdClient}`,
    '--bind-address',
    '127.0.0.1',
    '--advertise-address',
    '127.0.0.1',
    '--secure-port',
    String(apiPort),
    '--cert-dir',
    join(dir, 'certs'),
    '--token-auth-file',
    join(dir, 'tokens.csv'),
    '--authorization-mode',
    'RBAC',
    '--service-account-issuer',
    'https://kubernetes.default.svc',
    '--service-account-key-file',
    join(dir, 'sa.pub'),
    '--service-account-signing-key-file',
    join(dir, 'sa.key'),
    '--service-cluster-ip-range',
    '10.96.0.0/16',
    '--allow-privileged=true',
    // No controller manager creates the "default" ServiceAccount.
    '--disable-admission-plugins',
    'ServiceAccount',
  ];
  const auditLog = join(dir, 'audit.log');
  if (options.audit === true) {
    writeFileSync(join(dir, 'audit-policy.yaml'), auditPolicy);
    apiArgs.push('--audit-policy-file', join(dir, 'audit-policy.yaml'), '--audit-log-path', auditLog, '--audit-log-mode', 'blocking');
  }
  let api = spawnLogged(bin.kubeApiServer, apiArgs);
  const url = `https://127.0.0.1:${apiPort}`;
  const stopAll = async (): Promise<void> => {
    await stopChild(api.child);
    await stopChild(etcd.child);
  };
  const waitApi = (): Promise<void> =>
    waitFor('kube-apiserver', async () => (await httpsStatus(`${url}/readyz`, token)) === 200, api.child, api.output, 60_000);
  try {
    await waitApi();
  } catch (error) {
    await stopAll();
    throw new Error(`${(error as Error).message}\netcd:\n${etcd.output().slice(-2000)}`, { cause: error });
  }

  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfig(url, token));
  for (const [user, t] of userTokens) writeFileSync(join(dir, `kubeconfig-${user}`), kubeconfig(url, t));

  const kubectl = async (args: readonly string[], input?: string): Promise<string> => {
    if (input === undefined) {
      const { stdout } = await execFileAsync(bin.kubectl, ['--kubeconfig', kubeconfigPath, ...args], { cwd: repoRoot });
      return stdout;
    }
    return new Promise((resolve, reject) => {
      const child = spawn(bin.kubectl, ['--kubeconfig', kubeconfigPath, ...args], { cwd: repoRoot });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
      });
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString();
      });
      child.on('exit', (code) => {
        if (code === 0) resolve(out);
        else reject(new Error(err || `kubectl exited ${code}`));
      });
      child.stdin.end(input);
    });
  };
  try {
    await kubectl(['apply', '-f', 'crds/']);
    await kubectl(['wait', '--for', 'condition=Established', '--timeout=30s', 'crd/observabilitystacks.tenantry.dev', 'crd/tenants.tenantry.dev']);
  } catch (error) {
    await stopAll();
    throw error;
  }

  return {
    url,
    token,
    kubeconfigPath,
    dir,
    startMs: Date.now() - started,
    kubectl,
    requests: () => readAudit(auditLog),
    kubectlUntil: (args, until, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const child = spawn(bin.kubectl, ['--kubeconfig', kubeconfigPath, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
        let buffered = '';
        let err = '';
        const seen: string[] = [];
        // A bound, not a wait: the watching kubectl resolves on the matching line; this only ends a wait that never sees it.
        const timer = setTimeout(() => {
          finish(new Error(`kubectl ${args.join(' ')}: no matching line within ${timeoutMs} ms; saw ${JSON.stringify(seen)} ${err}`));
        }, timeoutMs);
        function finish(result: Error | string): void {
          clearTimeout(timer);
          child.kill();
          if (typeof result === 'string') resolve(result);
          else reject(result);
        }
        child.stderr.on('data', (c: Buffer) => {
          err += c.toString();
        });
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          buffered += chunk;
          let nl;
          while ((nl = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, nl);
            buffered = buffered.slice(nl + 1);
            seen.push(line);
            if (until(line)) {
              finish(line);
              return;
            }
          }
        });
        child.on('exit', (code) => {
          finish(new Error(`kubectl ${args.join(' ')} exited ${String(code)} before a matching line: ${err}`));
        });
      }),
    kubeconfigFor: (user) => {
      if (!userTokens.has(user)) throw new Error(`bug: user ${user} was not given at start`);
      return join(dir, `kubeconfig-${user}`);
    },
    restartApiServer: async (downMs = 1000) => {
      await stopChild(api.child);
      // Deliberate: the API server stays down this long, so the operator's watches fail and reconnect.
      await new Promise((r) => setTimeout(r, downMs));
      api = spawnLogged(bin.kubeApiServer, apiArgs);
      await waitApi();
    },
    stop: async () => {
      await stopAll();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
