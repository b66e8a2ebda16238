// A small Kubernetes REST client over node:https with the credentials of a
// KubeConfig. Failures are values carrying the HTTP status and the API's
// Status reason, parsed here once; watches stream JSON lines to a callback.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';

/** A 2xx answer: its parsed body, and its status (server-side apply answers 201 when it created the object). */
export interface KubeAnswer<T> {
  readonly body: T;
  readonly status: number;
}

/** A refused or failed call: the HTTP status (0 when no answer came), the API's Status reason and message. */
export interface KubeFailure {
  readonly status: number;
  readonly reason: string;
  readonly message: string;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }>;
  };
  [field: string]: unknown;
}

export interface KubeList {
  metadata?: { resourceVersion?: string; continue?: string };
  items: KubeObject[];
}

export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: KubeObject;
}

export type WatchEnd = { readonly kind: 'closed' } | { readonly kind: 'failed'; readonly status: number; readonly message: string };

interface Call {
  readonly method: string;
  readonly path: string;
  readonly query?: Record<string, string | undefined>;
  readonly body?: unknown;
  readonly contentType?: string;
}

export class KubeRest {
  readonly #kc: KubeConfig;
  readonly #server: URL;

  constructor(kc: KubeConfig) {
    const cluster = kc.getCurrentCluster();
    if (cluster === null) throw new Error('bug: kubeconfig without a current cluster (checked at load)');
    this.#kc = kc;
    this.#server = new URL(cluster.server);
  }

  async #options(call: Call, timeoutMs: number | undefined): Promise<{ url: URL; opts: RequestOptions }> {
    const url = new URL(this.#server.pathname.replace(/\/$/, '') + call.path, this.#server);
    for (const [k, v] of Object.entries(call.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const opts: RequestOptions = { method: call.method, headers: { accept: 'application/json' }, ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }) };
    await this.#kc.applyToHTTPSOptions(opts);
    if (call.body !== undefined) opts.headers = { ...(opts.headers as Record<string, string>), 'content-type': call.contentType ?? 'application/json' };
    return { url, opts };
  }

  #send(url: URL, opts: RequestOptions): ReturnType<typeof httpsRequest> {
    return url.protocol === 'http:' ? httpRequest(url, opts) : httpsRequest(url, opts);
  }

  /** One request; a non-2xx answer or a network error is returned as a failure value. */
  async call<T>(call: Call): Promise<Result<KubeAnswer<T>, KubeFailure>> {
    const { url, opts } = await this.#options(call, 30_000);
    return new Promise((resolve) => {
      const req = this.#send(url, opts);
      req.on('response', (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (c: string) => {
            text += c;
          })
          .on('end', () => {
            const status = res.statusCode ?? 0;
            let parsed: unknown;
            try {
              parsed = text === '' ? {} : JSON.parse(text);
            } catch {
              parsed = { message: text };
            }
            if (status >= 200 && status < 300) resolve(ok({ body: parsed as T, status }));
            else {
              const s = parsed as { reason?: string; message?: string };
              resolve(fail({ status, reason: s.reason ?? 'Unknown', message: s.message ?? `HTTP ${status}` }));
            }
          });
      });
      req.on('timeout', () => {
        req.destroy(new Error('request timed out'));
      });
      req.on('error', (error) => {
        resolve(fail({ status: 0, reason: 'ConnectionFailed', message: error.message }));
      });
      if (call.body !== undefined) req.write(typeof call.body === 'string' ? call.body : JSON.stringify(call.body));
      req.end();
    });
  }

  /**
   * Streams a watch until the server closes it, it fails, or `signal` aborts.
   * An ERROR event (such as 410 Gone) ends the watch as a failure.
   */
  async watch(path: string, query: Record<string, string | undefined>, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<WatchEnd> {
    const { url, opts } = await this.#options({ method: 'GET', path, query: { ...query, watch: 'true' } }, undefined);
    return new Promise((resolve) => {
      let settled = false;
      const finish = (end: WatchEnd): void => {
        if (!settled) {
          settled = true;
          signal.removeEventListener('abort', abort);
          resolve(end);
        }
      };
      const req = this.#send(url, { ...opts, signal });
      const abort = (): void => {
        finish({ kind: 'closed' });
      };
      signal.addEventListener('abort', abort);
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        if (status !== 200) {
          let text = '';
          res
            .setEncoding('utf8')
            .on('data', (c: string) => {
              text += c;
            })
            .on('end', () => {
              finish({ kind: 'failed', status, message: text.slice(0, 500) });
            });
          return;
        }
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let nl;
          while ((nl = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (line === '') continue;
            let event: WatchEvent;
            try {
              event = JSON.parse(line) as WatchEvent;
            } catch {
              continue;
            }
            if (event.type === 'ERROR') {
              const s = event.object as { code?: number; message?: string };
              finish({ kind: 'failed', status: s.code ?? 500, message: s.message ?? 'watch error' });
              req.destroy();
              return;
            }
            onEvent(event);
          }
        });
        res.on('end', () => {
          finish({ kind: 'closed' });
        });
        res.on('error', (error) => {
          finish({ kind: 'failed', status: 0, message: error.message });
        });
      });
      req.on('error', (error) => {
        finish(signal.aborted ? { kind: 'closed' } : { kind: 'failed', status: 0, message: error.message });
      });
      req.end();
    });
  }
}
