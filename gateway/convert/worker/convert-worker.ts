// A conversion worker thread: converts request bodies with the same
// converters as the main thread (row-converters.ts; their module-global
// ScratchWriter is per thread, so each worker has its own) and sends back
// the rows, the tally and the tenants found. Started by convert-pool.ts.
// Remote write bodies arrive decompressed and go through the main thread's
// remote write converter (gateway/prometheus/write-request.ts).
//
// Two decisions are the main thread's, not the worker's: whether the ingest
// limiter admits a tenant (asked once per tenant and request), and a
// tenant's effective settings (its retention). The worker asks them
// synchronously, at the moment the converter needs them: it posts the
// question on its port and blocks in Atomics.wait until the main thread has
// posted the answer and notified; receiveMessageOnPort then reads it. A
// snapshot passed with the body cannot work because the tenants are known
// only while decoding, and asking at that moment keeps inline conversion's
// exact semantics (the limiter's state as conversion meets each tenant), so
// the pool's answers equal inline conversion's. A request names one tenant
// or a few, so the round trips (one event-loop turn each) are few; the
// main thread never blocks on a worker.
import { setPriority } from 'node:os';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type { EffectiveSettings, TenantSettingsView } from '../../../src/tenant/settings/tenant-settings.ts';
import { ItemTally } from '../common/item-tally.ts';
import { TenantResolver } from '../common/tenant-resolver.ts';
import { LogIdGenerator } from '../logs/log-id.ts';
import { rowConverters } from '../row-converters.ts';
import { remoteWriteConverter } from '../../prometheus/write-request.ts';
import { mapValue } from '../../../src/result.ts';
import type { Result } from '../../../src/result.ts';
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import type { ConvertJob, JobAnswer, Question, Reply, RemoteWriteExtras, WorkerSetup } from './convert-messages.ts';

/** The nice value of a conversion thread: below the event loop's (0), above idle. */
const workerNice = 10;

/** How long a worker waits for the main thread's answer before it gives the job up (the main thread is never blocked that long). */
const answerTimeoutMs = 30_000;

// Large bodies are bulk work; the event loop answers every tenant's small
// requests. On Linux a thread has its own nice value, and setpriority on
// "this process" (0) sets the calling thread's: the kernel then runs the
// event loop first when cores are short. Elsewhere it would lower the whole
// process, so it is done on Linux only; refused (a sandbox), it is skipped.
if (process.platform === 'linux') {
  try {
    setPriority(0, workerNice);
  } catch {
    // Not allowed here: the worker runs at the process's priority.
  }
}

const setup = workerData as WorkerSetup;
const flag = new Int32Array(setup.signal);
let job = 0;
let nowMs = 0;

/** Asks the main thread about the current job and waits for its answer. */
function ask(question: Question): Reply {
  Atomics.store(flag, 0, 0);
  setup.port.postMessage(question);
  // A late answer would be read as the next question's: a worker that lost track ends, and the pool answers its job 503 and replaces it.
  if (Atomics.wait(flag, 0, 0, answerTimeoutMs) === 'timed-out') process.exit(70);
  const answer = receiveMessageOnPort(setup.port);
  if (answer === undefined) throw new Error('the main thread notified without an answer');
  return answer.message as Reply;
}

const settings: TenantSettingsView | undefined = setup.withSettings
  ? {
      effective: (tenant: string): EffectiveSettings => {
        const reply = ask({ job, ask: 'effective', tenant });
        if (!('effective' in reply)) throw new Error('the main thread answered another question');
        return reply.effective;
      },
      generation: 0,
    }
  : undefined;

const admission = {
  admits: (tenant: string): boolean => {
    const reply = ask({ job, ask: 'admits', tenant });
    if (!('admits' in reply)) throw new Error('the main thread answered another question');
    return reply.admits;
  },
};

const converters = rowConverters(new LogIdGenerator(setup.logIdProcess), () => nowMs, setup.limits, settings);
const remoteWrite = remoteWriteConverter(setup.limits, () => nowMs, settings);

/** The job's body converted by its converter, with a remote write body's metadata and skipped histograms. */
function converted(message: ConvertJob, body: Buffer, tenants: TenantResolver): Result<{ batch: RowBatch; extras?: RemoteWriteExtras }, string> {
  if (message.remoteWrite === undefined) return mapValue(converters[message.signal][message.format].convert(body, tenants), (batch) => ({ batch }));
  return mapValue(remoteWrite(body, message.remoteWrite.tenant, tenants), ({ batch, metadata, skippedHistograms }) => ({
    batch,
    extras: { metadata, skippedHistograms },
  }));
}

/** Converts one job; never throws (an exception is answered as 'thrown'). */
function convert(message: ConvertJob): { answer: JobAnswer; transfer: ArrayBuffer[] } {
  job = message.id;
  nowMs = message.nowMs;
  try {
    const tenants = new TenantResolver(message.principal, admission);
    const [first] = message.parts;
    const body =
      message.parts.length === 1 && first !== undefined ? Buffer.from(first.buffer, first.byteOffset, first.byteLength) : Buffer.concat(message.parts);
    const result = converted(message, body, tenants);
    const found = [...tenants.tenants];
    if (!result.ok) return { answer: { id: message.id, kind: 'invalid', error: result.error, tenants: found }, transfer: [] };
    const { batch, extras } = result.value;
    if (!(batch.rejected instanceof ItemTally)) throw new Error('a converter returned rejections that are not an ItemTally');
    // Own buffer, so that it can be transferred, not copied again.
    const rows = new Uint8Array(batch.rows.length);
    rows.set(batch.rows);
    return {
      answer: {
        id: message.id,
        kind: 'rows',
        table: batch.table,
        rows,
        rowCount: batch.rowCount,
        tally: batch.rejected.state,
        tenants: found,
        remoteWrite: extras,
      },
      transfer: [rows.buffer],
    };
  } catch (error) {
    return { answer: { id: message.id, kind: 'thrown', message: error instanceof Error ? (error.stack ?? error.message) : String(error) }, transfer: [] };
  }
}

parentPort?.on('message', (message: ConvertJob) => {
  const { answer, transfer } = convert(message);
  parentPort?.postMessage(answer, transfer);
});
