// Conversion off the event loop: a small pool of worker threads
// (convert-worker.ts) that convert large request bodies with the same
// converters as the main thread, so that one tenant's 16 MB body (~0.4 s of
// CPU) does not hold the event loop every other request needs. The ingest
// pipeline sends only bodies above its threshold here (small ones cost less
// inline than the hand-off); a job's answer is the same RowBatch, rejections
// and tenants inline conversion would give (test/unit/gateway/convert/
// worker/convert-pool.test.ts holds them equal). Decompressed Prometheus
// remote write bodies are converted here too (convertRemoteWrite), with
// their metadata and skipped histograms as the inline converter returns them
// (remote-write-pool.test.ts).
//
// Jobs wait for a free worker ordered by flow (the decode gate's: a tenant,
// or a key): the next job is the oldest of the flow with the fewest jobs
// converting, so one tenant's queue does not hold another's single job. The
// decode gate before it (gateway/limits/decode-gate.ts) already bounds how
// many requests of one flow get here at once.
//
// Workers start on the first job and are replaced when one exits. A job
// whose worker died (a crash, the memory limit, a job past jobTimeoutMs) is answered
// `unavailable` (503 / UNAVAILABLE: the client sends again), never left
// waiting; stop() answers every job still queued or converting the same way
// and ends the workers. Worker files load as the main thread's do: .ts under
// Node's type stripping (npm start, tests), the compiled .js in the image.
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, isMarkedAsUntransferable } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { fail, ok } from '../../../src/result.ts';
import type { Result } from '../../../src/result.ts';
import type { TenantSettingsView } from '../../../src/tenant/settings/tenant-settings.ts';
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import type { RemoteWriteBatch } from '../../prometheus/write-request.ts';
import type { SignalName, WireFormat } from '../../wire/otlp-messages.ts';
import type { ItemLimits } from '../common/item-limits.ts';
import { ItemTally } from '../common/item-tally.ts';
import type { TenantResolver } from '../common/tenant-resolver.ts';
import type { ConvertJob, JobAnswer, Question, Reply, RemoteWriteExtras, WorkerSetup } from './convert-messages.ts';

/** The pool's settings; only `limits` is required. */
export interface ConvertPoolOptions {
  /** The item limits of every conversion (the same as the inline converters'). */
  readonly limits: ItemLimits;
  /** The tenant settings inline conversion uses (retention per tenant); absent, the process's retention. */
  readonly settings?: TenantSettingsView | undefined;
  /** Worker threads at most; default one per core but one, leaving a core to the event loop. */
  readonly size?: number | undefined;
  /** The clock each job's time window is read from at dispatch (ms). */
  readonly now?: (() => number) | undefined;
  /** Tests: every worker's log id prefix (10 hex digits), so that log ids equal an inline generator's. */
  readonly logIdProcess?: string | undefined;
  /** Tests: another worker entry (one that crashes on purpose). */
  readonly workerFile?: URL | undefined;
  /** A job converting longer than this ends its worker (a converter that never returns: a bug) and is answered unavailable; default 30 s. */
  readonly jobTimeoutMs?: number | undefined;
  /** Told of every worker that exits unasked (its uncaught error, if any), for the gateway's log. */
  readonly onWorkerExit?: ((code: number, error: Error | undefined) => void) | undefined;
}

/** A body the caller gives up, in the chunks it was read in: chunks that are whole buffers move to the worker uncopied (and are detached here). */
export interface OwnedChunks {
  readonly chunks: readonly Uint8Array[];
  readonly length: number;
}

/**
 * The parts of a job's body and the buffers moved with it. A Buffer the
 * caller keeps is copied; of owned chunks, a chunk that is its whole
 * ArrayBuffer moves (gzip's 64 KiB output chunks: nearly all of a large
 * body), and slices of shared or pooled memory are copied.
 */
function partsOf(body: Buffer | OwnedChunks): { parts: Uint8Array[]; transfer: ArrayBuffer[] } {
  if (Buffer.isBuffer(body)) {
    const copy = new Uint8Array(body.length);
    copy.set(body);
    return { parts: [copy], transfer: [copy.buffer] };
  }
  const parts: Uint8Array[] = [];
  const transfer: ArrayBuffer[] = [];
  const moved = new Set<ArrayBufferLike>();
  for (const chunk of body.chunks) {
    const whole = chunk.buffer;
    if (
      whole instanceof ArrayBuffer &&
      chunk.byteOffset === 0 &&
      chunk.byteLength === whole.byteLength &&
      !moved.has(whole) &&
      !isMarkedAsUntransferable(whole)
    ) {
      moved.add(whole);
      transfer.push(whole);
      parts.push(chunk);
    } else {
      const copy = new Uint8Array(chunk.byteLength);
      copy.set(chunk);
      transfer.push(copy.buffer);
      parts.push(copy);
    }
  }
  return { parts, transfer };
}

/** Why a job has no answer: its worker died, or the pool stopped. */
export interface PoolFailure {
  readonly kind: 'invalid' | 'unavailable';
  readonly message: string;
}

/** A job's rows, and a remote write job's extras. */
interface Converted {
  readonly batch: RowBatch;
  readonly remoteWrite?: RemoteWriteExtras | undefined;
}

interface Job {
  readonly message: ConvertJob;
  readonly transfer: readonly ArrayBuffer[];
  readonly flow: string;
  readonly tenants: TenantResolver;
  readonly done: (result: Result<Converted, PoolFailure>) => void;
  readonly fault: (error: Error) => void;
}

interface Slot {
  readonly worker: Worker;
  readonly port: MessagePort;
  readonly flag: Int32Array;
  job: Job | undefined;
  error: Error | undefined;
  /** Ends the worker if its job runs past jobTimeoutMs. */
  timer: NodeJS.Timeout | undefined;
}

const defaultJobTimeoutMs = 30_000;

/** The default size: one worker per core but one (at least one). */
export const defaultPoolSize = (): number => Math.max(1, availableParallelism() - 1);

/** The worker entry beside this file, with this file's own extension (.ts from source, .js once compiled). */
const defaultWorkerFile = new URL(`./convert-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

export class ConvertPool {
  readonly #options: ConvertPoolOptions;
  readonly #size: number;
  readonly #now: () => number;
  readonly #slots = new Set<Slot>();
  readonly #queue: Job[] = [];
  readonly #running = new Map<string, number>();
  #nextId = 1;
  #stopped = false;
  /** Workers that exited while a job was theirs (tests, metrics). */
  #lost = 0;

  constructor(options: ConvertPoolOptions) {
    this.#options = options;
    this.#size = Math.max(1, Math.floor(options.size ?? defaultPoolSize()));
    this.#now = options.now ?? Date.now;
  }

  /** Worker threads running now. */
  get workers(): number {
    return this.#slots.size;
  }

  /** Jobs whose worker exited before answering, since the pool started. */
  get lostJobs(): number {
    return this.#lost;
  }

  /**
   * Converts `body` in a worker as converters[signal][format] would inline
   * (a Buffer is copied, owned chunks move: see OwnedChunks);
   * `tenants` answers the worker's admission questions and receives the
   * tenants it found. Invalid bodies are `invalid`; a dead worker or a
   * stopped pool `unavailable`. A converter's exception (a bug) rejects.
   */
  async convert(
    signal: SignalName,
    format: WireFormat,
    body: Buffer | OwnedChunks,
    tenants: TenantResolver,
    flow: string,
  ): Promise<Result<RowBatch, PoolFailure>> {
    const result = await this.#enqueue(signal, format, body, tenants, flow, undefined);
    return result.ok ? ok(result.value.batch) : result;
  }

  /**
   * Converts a decompressed remote write body for `tenant` as
   * remoteWriteConverter would inline: rows, metadata and skipped
   * histograms; failures as convert's.
   */
  async convertRemoteWrite(body: Buffer | OwnedChunks, tenant: string, tenants: TenantResolver, flow: string): Promise<Result<RemoteWriteBatch, PoolFailure>> {
    const result = await this.#enqueue('metrics', 'protobuf', body, tenants, flow, { tenant });
    if (!result.ok) return result;
    const { batch, remoteWrite } = result.value;
    if (remoteWrite === undefined) throw new Error('a remote write job was answered without its metadata');
    return ok({ batch, metadata: remoteWrite.metadata, skippedHistograms: remoteWrite.skippedHistograms });
  }

  #enqueue(
    signal: SignalName,
    format: WireFormat,
    body: Buffer | OwnedChunks,
    tenants: TenantResolver,
    flow: string,
    remoteWrite: ConvertJob['remoteWrite'],
  ): Promise<Result<Converted, PoolFailure>> {
    if (this.#stopped) return Promise.resolve(fail({ kind: 'unavailable', message: 'the gateway is stopping' }));
    const { parts, transfer } = partsOf(body);
    const message: ConvertJob = { id: this.#nextId++, signal, format, parts, nowMs: this.#now(), principal: tenants.principal, remoteWrite };
    return new Promise((resolve, reject) => {
      this.#queue.push({ message, transfer, flow, tenants, done: resolve, fault: reject });
      this.#pump();
    });
  }

  /** Answers every queued and converting job `unavailable` and ends the workers. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const stopping: PoolFailure = { kind: 'unavailable', message: 'the gateway is stopping' };
    for (const job of this.#queue.splice(0)) job.done(fail(stopping));
    const ending: Promise<number>[] = [];
    for (const slot of this.#slots) {
      const job = slot.job;
      slot.job = undefined;
      if (job !== undefined) this.#finished(job, fail(stopping));
      clearTimeout(slot.timer);
      slot.port.close();
      ending.push(slot.worker.terminate());
    }
    this.#slots.clear();
    await Promise.all(ending);
  }

  /** Gives idle workers (started as needed, up to the size) the next jobs in flow order. */
  #pump(): void {
    while (this.#queue.length > 0 && !this.#stopped) {
      let slot: Slot | undefined;
      for (const s of this.#slots) if (s.job === undefined) slot = s;
      if (slot === undefined) {
        if (this.#slots.size >= this.#size) return;
        slot = this.#spawn();
      }
      const job = this.#next();
      slot.job = job;
      const worker = slot.worker;
      slot.timer = setTimeout(() => {
        slot.error = new Error(`a conversion ran longer than ${this.#options.jobTimeoutMs ?? defaultJobTimeoutMs} ms`);
        void worker.terminate();
      }, this.#options.jobTimeoutMs ?? defaultJobTimeoutMs);
      slot.timer.unref();
      this.#running.set(job.flow, (this.#running.get(job.flow) ?? 0) + 1);
      slot.worker.postMessage(job.message, [...job.transfer]);
    }
  }

  /** Takes the oldest queued job of the flow with the fewest jobs converting. */
  #next(): Job {
    let at = 0;
    let least = Number.POSITIVE_INFINITY;
    this.#queue.forEach((job, i) => {
      const running = this.#running.get(job.flow) ?? 0;
      if (running < least) {
        least = running;
        at = i;
      }
    });
    const [job] = this.#queue.splice(at, 1);
    if (job === undefined) throw new Error('the queue was empty');
    return job;
  }

  #spawn(): Slot {
    const { port1, port2 } = new MessageChannel();
    const signal = new SharedArrayBuffer(4);
    const setup: WorkerSetup = {
      limits: this.#options.limits,
      withSettings: this.#options.settings !== undefined,
      logIdProcess: this.#options.logIdProcess,
      signal,
      port: port2,
    };
    const worker = new Worker(this.#options.workerFile ?? defaultWorkerFile, { workerData: setup, transferList: [port2] });
    const slot: Slot = { worker, port: port1, flag: new Int32Array(signal), job: undefined, error: undefined, timer: undefined };
    this.#slots.add(slot);
    // Neither keeps the process alive: the gateway's listeners do, and stop() ends the workers.
    worker.unref();
    port1.unref();
    port1.on('message', (question: Question) => {
      this.#answer(slot, question);
    });
    worker.on('message', (answer: JobAnswer) => {
      this.#answered(slot, answer);
    });
    // An uncaught exception in a worker: its 'exit' follows, and handles the job.
    worker.on('error', (error: unknown) => {
      slot.error = error instanceof Error ? error : new Error(String(error));
    });
    worker.on('exit', (code) => {
      this.#exited(slot, code);
    });
    return slot;
  }

  /** Answers a worker's question about its job, and wakes it. */
  #answer(slot: Slot, question: Question): void {
    const job = slot.job;
    let reply: Reply;
    if (question.ask === 'admits') reply = { admits: job !== undefined && job.message.id === question.job && job.tenants.admits(question.tenant) };
    else {
      const settings = this.#options.settings;
      if (settings === undefined) return; // the worker was told there are none, and never asks
      reply = { effective: settings.effective(question.tenant) };
    }
    slot.port.postMessage(reply);
    Atomics.store(slot.flag, 0, 1);
    Atomics.notify(slot.flag, 0);
  }

  #answered(slot: Slot, answer: JobAnswer): void {
    const job = slot.job;
    if (job === undefined || job.message.id !== answer.id) return;
    slot.job = undefined;
    clearTimeout(slot.timer);
    switch (answer.kind) {
      case 'rows':
        job.tenants.adopt(answer.tenants);
        this.#finished(
          job,
          ok({
            batch: {
              table: answer.table,
              rows: Buffer.from(answer.rows.buffer, answer.rows.byteOffset, answer.rows.byteLength),
              rowCount: answer.rowCount,
              rejected: ItemTally.restore(this.#options.limits, answer.tally),
            },
            remoteWrite: answer.remoteWrite,
          }),
        );
        break;
      case 'invalid':
        job.tenants.adopt(answer.tenants);
        this.#finished(job, fail({ kind: 'invalid', message: answer.error }));
        break;
      case 'thrown':
        this.#finished(job, undefined, new Error(`conversion worker: ${answer.message}`));
        break;
    }
    this.#pump();
  }

  /** A worker ended (crash, memory limit, lost track, terminate): its job is answered unavailable, and another worker takes its place. */
  #exited(slot: Slot, code: number): void {
    if (!this.#slots.delete(slot)) return; // stop() already answered its job
    slot.port.close();
    clearTimeout(slot.timer);
    this.#options.onWorkerExit?.(code, slot.error);
    const job = slot.job;
    slot.job = undefined;
    if (job !== undefined) {
      this.#lost++;
      this.#finished(job, fail({ kind: 'unavailable', message: `the conversion worker stopped (exit code ${code}) before converting this request: retry` }));
    }
    if (!this.#stopped) this.#spawn();
    this.#pump();
  }

  #finished(job: Job, result: Result<Converted, PoolFailure> | undefined, error?: Error): void {
    const running = (this.#running.get(job.flow) ?? 1) - 1;
    if (running <= 0) this.#running.delete(job.flow);
    else this.#running.set(job.flow, running);
    if (result !== undefined) job.done(result);
    else job.fault(error ?? new Error('conversion failed'));
  }
}
