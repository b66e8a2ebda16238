// Log ids for records without a log.record.uid: unique across processes and
// restarts (random per-process prefix plus a counter) and sorting by
// ingestion time (fixed-width hex of the millisecond clock first).
import { randomBytes } from 'node:crypto';

/** Generates time-ordered unique ids: 12 hex ms + 10 hex process + 8 hex counter. */
export class LogIdGenerator {
  readonly #process: string;
  #counter = 0;

  /** `processId` (10 hex digits) is random unless given (tests). */
  constructor(processId: string = randomBytes(5).toString('hex')) {
    this.#process = processId;
  }

  next(nowMs: number): string {
    this.#counter = (this.#counter + 1) >>> 0;
    return nowMs.toString(16).padStart(12, '0') + this.#process + this.#counter.toString(16).padStart(8, '0');
  }
}
