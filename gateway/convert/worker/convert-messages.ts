// The messages between the conversion pool (convert-pool.ts, main thread)
// and its workers (convert-worker.ts): a job (one request body), its answer,
// and the synchronous questions a worker asks the main thread while it
// converts (see convert-worker.ts for why they are synchronous). Everything
// here is plain data that survives structured cloning; bodies and rows
// travel as transferred ArrayBuffers, not copies. A job is an OTLP body or a
// decompressed Prometheus remote write body (whose answer also carries the
// request's metadata and its skipped native histograms).
import type { MessagePort } from 'node:worker_threads';
import type { Principal } from '../../../src/auth/api-keys.ts';
import type { EffectiveSettings } from '../../../src/tenant/settings/tenant-settings.ts';
import type { TableName } from '../../rowbinary/row-batch.ts';
import type { SignalName, WireFormat } from '../../wire/otlp-messages.ts';
import type { MetricMetadata } from '../../prometheus/write-request.ts';
import type { ItemLimits } from '../common/item-limits.ts';
import type { TallyState } from '../common/item-tally.ts';
import type { TenantItems } from '../common/tenant-resolver.ts';

/** What every worker is started with. */
export interface WorkerSetup {
  readonly limits: ItemLimits;
  /** Whether the gateway has tenant settings (retention per tenant); without, the process's retention applies. */
  readonly withSettings: boolean;
  /** The log id prefix of this worker (10 hex digits); random when absent (tests pin it). */
  readonly logIdProcess?: string | undefined;
  /** Int32Array[1] over this buffer: the main thread stores 1 and notifies once it has answered a question. */
  readonly signal: SharedArrayBuffer;
  /** The port questions go out on and answers come back on (read with receiveMessageOnPort). */
  readonly port: MessagePort;
}

/** One body to convert, as the main thread's converter would. */
export interface ConvertJob {
  readonly id: number;
  readonly signal: SignalName;
  readonly format: WireFormat;
  /** The body in parts, joined by the worker: whole buffers moved from the main thread, slices copied. */
  readonly parts: readonly Uint8Array[];
  /** The main thread's clock at dispatch: the request's time window, as inline conversion reads it. */
  readonly nowMs: number;
  readonly principal: Principal;
  /** Set for a decompressed remote write body (signal metrics, format protobuf): the tenant the request named. */
  readonly remoteWrite?: { readonly tenant: string } | undefined;
}

/** What a remote write job returns beside its rows. */
export interface RemoteWriteExtras {
  readonly metadata: readonly MetricMetadata[];
  readonly skippedHistograms: number;
}

/** The tenants a worker's resolver found, in order of appearance. */
export type FoundTenants = readonly (readonly [string, TenantItems])[];

/** A worker's answer to a job: rows, an invalid body, or an exception (a bug, rethrown on the main thread). */
export type JobAnswer =
  | {
      readonly id: number;
      readonly kind: 'rows';
      readonly table: TableName;
      readonly rows: Uint8Array;
      readonly rowCount: number;
      readonly tally: TallyState;
      readonly tenants: FoundTenants;
      /** Present for a remote write job. */
      readonly remoteWrite?: RemoteWriteExtras | undefined;
    }
  | { readonly id: number; readonly kind: 'invalid'; readonly error: string; readonly tenants: FoundTenants }
  | { readonly id: number; readonly kind: 'thrown'; readonly message: string };

/** A question a worker asks about the job it is converting. */
export type Question =
  { readonly job: number; readonly ask: 'admits'; readonly tenant: string } | { readonly job: number; readonly ask: 'effective'; readonly tenant: string };

/** The main thread's answer to a question. */
export type Reply = { readonly admits: boolean } | { readonly effective: EffectiveSettings };
