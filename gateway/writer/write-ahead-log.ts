// The gateway's write-ahead log (docs/adr/0006-write-ahead-log.md). Rows are
// acknowledged once they are written here (and fsynced, with sync 'fsync'),
// not once ClickHouse has them, so the size of a ClickHouse part no longer
// depends on how many requests are in flight. Each table has its own
// segments; concurrent appends to a table share one write (and one
// fdatasync: group commit). A segment is cut (sealed)
// when it holds enough rows or bytes, or when its first rows are old enough;
// a sealed segment becomes exactly one INSERT, with the segment's name as the
// deduplication token, and is deleted only after that INSERT succeeded (a
// block split by request, block-inserter.ts, is recorded in the segment's
// splits file so that a replay splits it the same way).
// A segment's rows file holds nothing but its RowBinary rows, so that the
// INSERT reads the file itself; each append's length, row count and checksum
// go to the segment's index file (wal-records.ts).
// Each table has two filling segments (lanes): appends of at least
// `bulkAppendBytes` go to the bulk one, the others to the normal one, so a
// small append's write never waits for a large one's (issue 35: another
// tenant's 15 MB appends held 100-row appends 20-100 ms on a busy disk).
// Lanes are only about which segment fills; sealed segments of both queue
// for their INSERTs alike.
// Segments found on start are the previous process's unfinished work.
// Its timers (a segment's cut delay, an early cut, the disk probe) run on the
// injected clock, as the pacer's do.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, stat, truncate, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../src/clock.ts';
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';
import type { TableName } from '../rowbinary/row-batch.ts';
import type { WriteFailure } from './row-sink.ts';
import { indexEntries, readIndexed } from './wal-records.ts';
import type { WalRecord } from './wal-records.ts';

const walTables: readonly TableName[] = ['spans', 'logs', 'metrics'];

export interface CutPolicy {
  /** A segment holding this many rows is sealed. */
  readonly maxRows: number;
  readonly maxBytes: number;
  /** A segment is sealed at the latest this long after its first rows were appended. */
  readonly maxDelayMs: number;
}

export interface WalOptions {
  readonly dir: string;
  /** Bytes of all segments beyond which appends are refused (the caller answers 429). */
  readonly maxBytes: number;
  readonly cut: CutPolicy;
  /**
   * 'write': an append is acknowledged once written (the kernel has it: it
   * survives the process being killed), and a segment is fsynced when sealed,
   * off the acknowledgement's path. 'fsync': acknowledged once fdatasync'ed,
   * and new segments' names are synced too (it survives a power loss).
   */
  readonly sync: 'write' | 'fsync';
}

/** A sealed segment: one future INSERT. */
export interface Segment {
  readonly table: TableName;
  /** The index file. */
  readonly path: string;
  /** The rows file. */
  readonly rowsPath: string;
  /** Unique per segment across restarts: the INSERT's deduplication token. */
  readonly token: string;
  /** Bytes acknowledged, both files (a failed append may leave bytes after them that were never acknowledged). */
  readonly bytes: number;
  /** Bytes of the rows file acknowledged, and their rows; for a segment left by a previous process, what its files hold (checked when read). */
  readonly rowBytes: number;
  readonly rows: number;
  /** Left by a previous process: its records are checked for a torn or corrupt tail when read. */
  readonly recovered: boolean;
  /** Rows per flow (tenant) appended by this process (the pacer's accounting); absent for a previous process's segment. */
  readonly flows?: ReadonlyMap<string, number>;
}

/** A segment's rows as one file ClickHouse can read, holding exactly its acknowledged rows. */
export interface RowsFile {
  readonly path: string;
  readonly rows: number;
  readonly bytes: number;
}

/** Why the log refused an append. */
export type AppendFailure = WriteFailure<'overloaded' | 'stopped' | 'unavailable'>;

export interface WalEvents {
  /** A segment was sealed and waits for its INSERT. */
  sealed(segment: Segment): void;
  /** An append failed for a local reason (disk full, read-only, I/O error), or the log works again. */
  diskHealth(healthy: boolean, message: string): void;
}

/** What a previous process left: its segments, oldest first per table, and the next segment number. */
export interface Recovery {
  readonly segments: readonly Segment[];
  readonly nextSeq: number;
}

interface Pending {
  readonly rows: Buffer;
  readonly rowCount: number;
  readonly flow: string;
  readonly resolve: (result: Result<void, AppendFailure>) => void;
}

interface Active {
  readonly path: string;
  readonly rowsPath: string;
  readonly token: string;
  /** The index file's handle, and the rows file's. */
  readonly fd: FileHandle;
  readonly rowsFd: FileHandle;
  /** Bytes acknowledged in the index file and in the rows file. */
  indexBytes: number;
  rowBytes: number;
  rows: number;
  /** Acknowledged rows per flow. */
  readonly flows: Map<string, number>;
  /** The clock's now() when the segment was opened. */
  readonly openedAt: number;
}

class TableLog {
  pending: Pending[] = [];
  pendingBytes = 0;
  active: Active | undefined;
  /** The running loop of appends and seals, if any. */
  loop: Promise<void> | undefined;
  cutRequested = false;
  timer: { cancel(): void } | undefined;
}

/** Appends of at least this many bytes of rows fill the table's bulk segment (see the header). */
export const bulkAppendBytes = 1024 * 1024;

const probeIntervalMs = 1000;
const probeBytes = 64 * 1024;

const segmentName = /^(\d{12})-([0-9a-f]{16})\.wal$/;
const rowsSuffix = '.rows';
const splitsSuffix = '.splits';
/** The rows file of the segment whose index file is `path`. */
const rowsPathOf = (path: string): string => `${path.slice(0, -'.wal'.length)}${rowsSuffix}`;
/** The file listing the tokens of the segment's blocks that were split, one a line. */
const splitsPathOf = (path: string): string => `${path.slice(0, -'.wal'.length)}${splitsSuffix}`;

/** Why an fs call failed, without the server's paths (the message reaches clients). */
function diskMessage(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return "the write-ahead log's disk is full";
    case 'EROFS':
    case 'EACCES':
    case 'EPERM':
      return "the write-ahead log's disk is read-only";
    default:
      return `the write-ahead log cannot be written (${code ?? 'I/O error'})`;
  }
}

/**
 * Both results once both calls have ended; the first failure if either failed.
 * Unlike Promise.all it does not return while the other write still runs: a
 * failed append is cut off the files only after nothing of it can land later.
 */
async function both<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [ra, rb] = await Promise.allSettled([a, b]);
  if (ra.status === 'rejected') throw ra.reason;
  if (rb.status === 'rejected') throw rb.reason;
  return [ra.value, rb.value];
}

export class WriteAheadLog {
  readonly #options: WalOptions;
  readonly #events: WalEvents;
  /** Each table's lanes: the normal one first, then the bulk one. */
  readonly #tables = new Map<TableName, readonly [TableLog, TableLog]>();
  /** One per process start: segment names and tokens never repeat across restarts. */
  readonly #instance = randomBytes(8).toString('hex');
  #nextSeq: number;
  #bytes = 0;
  #stopped = false;
  readonly #clock: Clock;
  /** Appends failed for a local reason and none has succeeded since. */
  #diskFailing = false;
  /** While the disk fails, a probe write checks every second whether it takes writes again. */
  #probe: { cancel(): void } | undefined;

  /** A log in `options.dir` that goes on from what recover() found there. */
  constructor(options: WalOptions, events: WalEvents, found: Recovery, clock: Clock) {
    this.#options = options;
    this.#events = events;
    this.#clock = clock;
    this.#nextSeq = found.nextSeq;
    this.#bytes = found.segments.reduce((n, s) => n + s.bytes, 0);
    for (const table of walTables) this.#tables.set(table, [new TableLog(), new TableLog()]);
  }

  /**
   * The segments a previous process left in `dir`, oldest first per table,
   * to be inserted before anything new, and where numbering goes on.
   */
  static async recover(dir: string): Promise<Recovery> {
    const segments: Segment[] = [];
    let maxSeq = 0;
    for (const table of walTables) {
      const tableDir = join(dir, table);
      await mkdir(tableDir, { recursive: true, mode: 0o700 });
      const files = await readdir(tableDir);
      const names = files.filter((n) => segmentName.test(n)).sort();
      for (const name of names) {
        const [, seq = '0', instance = ''] = segmentName.exec(name) ?? [];
        maxSeq = Math.max(maxSeq, Number(seq));
        const path = join(tableDir, name);
        const rowsPath = rowsPathOf(path);
        if (!files.includes(`${name.slice(0, -'.wal'.length)}${rowsSuffix}`)) {
          // The process died between creating the segment's two files: nothing was appended, let alone acknowledged.
          await unlink(path);
          continue;
        }
        // Not read here: the inserter reads each segment once, when its turn comes, and skips a torn tail then.
        const [index, rows] = [await stat(path), await stat(rowsPath)];
        segments.push({
          table,
          path,
          rowsPath,
          token: `${table}-${instance}-${seq}`,
          bytes: index.size + rows.size,
          rowBytes: rows.size,
          rows: 0,
          recovered: true,
        });
      }
      // A rows or splits file without its index: the segment was inserted and released, and the process died between the deletions.
      for (const suffix of [rowsSuffix, splitsSuffix]) {
        for (const name of files.filter((n) => n.endsWith(suffix) && !files.includes(`${n.slice(0, -suffix.length)}.wal`))) {
          await unlink(join(tableDir, name));
        }
      }
    }
    return { segments, nextSeq: maxSeq + 1 };
  }

  /** Bytes held by the log (acknowledged, not yet inserted). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Appends rows to the table's segment; resolves once they are written (and fsynced, per the sync option), or at once when refused. */
  append(table: TableName, rows: Buffer, rowCount: number, flow = ''): Promise<Result<void, AppendFailure>> {
    if (this.#stopped) return Promise.resolve(fail({ kind: 'stopped', message: 'the gateway is shutting down' }));
    const [normal, bulk] = this.#lanes(table);
    const log = rows.length >= bulkAppendBytes ? bulk : normal;
    const queued = this.#bytes + this.#queuedBytes();
    if (queued + rows.length > this.#options.maxBytes) {
      return Promise.resolve(
        fail({ kind: 'overloaded', message: `the write-ahead log is full (${queued} of ${this.#options.maxBytes} bytes waiting for ClickHouse)` }),
      );
    }
    log.pendingBytes += rows.length;
    const done = new Promise<Result<void, AppendFailure>>((resolve) => {
      log.pending.push({ rows, rowCount, flow, resolve });
    });
    this.#run(table, log);
    return done;
  }

  /** Seals every segment and resolves once the appends queued before were answered and the segments handed on. */
  async sealAll(): Promise<void> {
    for (const [table, lanes] of this.#tables) {
      for (const log of lanes) {
        log.cutRequested = true;
        this.#run(table, log);
      }
    }
    await Promise.all([...this.#tables.values()].flat().map((log) => this.#idle(log)));
  }

  /**
   * Seals the table's filling segments (both lanes) before they are due, once at least
   * `minAgeMs` old (at once if they are), so a lane still gets at most one
   * INSERT per `minAgeMs`.
   */
  sealEarly(table: TableName, minAgeMs: number): void {
    for (const log of this.#lanes(table)) {
      const active = log.active;
      if (active === undefined || log.cutRequested) continue;
      this.#cutAfter(table, log, active.openedAt + minAgeMs - this.#clock.now());
    }
  }

  /** Refuses new appends; finishes the appends already queued and seals every segment. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#probe?.cancel();
    this.#probe = undefined;
    await this.sealAll();
  }

  /** Reads a sealed segment's acknowledged records. */
  static async read(segment: Segment): Promise<WalRecord[]> {
    const index = await readFile(segment.path);
    const rows = await readFile(segment.rowsPath);
    return readIndexed(index, rows.subarray(0, segment.rowBytes), segment.recovered).records;
  }

  /**
   * The segment's rows file, once it holds exactly the acknowledged rows, for
   * an INSERT to read in place; undefined when it cannot (bytes after the
   * acknowledged ones that could not be cut off): the caller reads the
   * records instead. A previous process's segment is checked first, and a
   * torn tail is cut off its rows file.
   */
  static async rowsFile(segment: Segment): Promise<RowsFile | undefined> {
    const path = segment.rowsPath;
    let acknowledged = { bytes: segment.rowBytes, rows: segment.rows };
    if (segment.recovered) {
      const read = readIndexed(await readFile(segment.path), await readFile(path));
      acknowledged = { bytes: read.validRowBytes, rows: read.rowCount };
    }
    const { size } = await stat(path);
    if (size !== acknowledged.bytes) {
      try {
        await truncate(path, acknowledged.bytes);
      } catch {
        return undefined;
      }
    }
    return { path, ...acknowledged };
  }

  /**
   * The tokens of the segment's blocks that were split (by a process before
   * this one too): a replay splits them again before inserting, so that a
   * half stored under its own token is not stored again within its parent.
   */
  static async splits(segment: Segment): Promise<ReadonlySet<string>> {
    try {
      return new Set((await readFile(splitsPathOf(segment.path), 'utf8')).split('\n').filter((t) => t !== ''));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Set();
      throw error;
    }
  }

  /** Records durably, before any of its halves is inserted, that the block with `token` is split. */
  static async recordSplit(segment: Segment, token: string): Promise<void> {
    const fd = await open(splitsPathOf(segment.path), 'a', 0o600);
    try {
      await fd.write(`${token}\n`);
      await fd.datasync();
    } finally {
      await fd.close();
    }
  }

  /** Deletes a segment whose rows are in ClickHouse: its index first, so that a crash in between leaves no segment to replay. */
  async release(segment: Segment): Promise<void> {
    const gone = (error: unknown): void => {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    };
    await unlink(segment.path).catch(gone);
    await unlink(segment.rowsPath).catch(gone);
    await unlink(splitsPathOf(segment.path)).catch(gone);
    this.#bytes -= segment.bytes;
  }

  #lanes(table: TableName): readonly [TableLog, TableLog] {
    const lanes = this.#tables.get(table);
    if (lanes === undefined) throw new Error(`bug: no write-ahead log for table ${table}`);
    return lanes;
  }

  #queuedBytes(): number {
    let n = 0;
    for (const lanes of this.#tables.values()) for (const log of lanes) n += log.pendingBytes;
    return n;
  }

  async #idle(log: TableLog): Promise<void> {
    while (log.loop !== undefined) await log.loop;
  }

  /** One loop per table at a time: appends and seals never interleave. */
  #run(table: TableName, log: TableLog): void {
    if (log.loop !== undefined) return;
    const loop = async (): Promise<void> => {
      try {
        while (log.pending.length > 0 || log.cutRequested) {
          if (log.pending.length > 0) await this.#commit(table, log);
          if (log.cutRequested || this.#due(log)) await this.#seal(table, log);
        }
      } catch (error) {
        // #commit answers its own failures; this is a seal that could not close its file.
        for (const p of log.pending.splice(0)) p.resolve(fail({ kind: 'unavailable', message: diskMessage(error) }));
        log.pendingBytes = 0;
      }
    };
    // .finally runs after the assignment even when the loop has nothing to do; work queued meanwhile starts a new loop.
    log.loop = loop().finally(() => {
      log.loop = undefined;
      if (log.pending.length > 0 || log.cutRequested) this.#run(table, log);
    });
  }

  #due(log: TableLog): boolean {
    const a = log.active;
    return a !== undefined && (a.rows >= this.#options.cut.maxRows || a.rowBytes >= this.#options.cut.maxBytes);
  }

  /** Writes every pending append in one write per file (+ one fdatasync each), then answers them all. */
  async #commit(table: TableName, log: TableLog): Promise<void> {
    const batch = log.pending;
    log.pending = [];
    const batchBytes = batch.reduce((n, p) => n + p.rows.length, 0);
    let active: Active | undefined;
    try {
      active = log.active ?? (await this.#openSegment(table, log));
      const index = indexEntries(batch);
      // At the acknowledged ends, not the files' offsets: a failed write's bytes are cut off and written over.
      const { rowsFd, fd } = active;
      const [rowsWritten, indexWritten] = await both(
        rowsFd
          .writev(
            batch.map((p) => p.rows),
            active.rowBytes,
          )
          .then((r) => r.bytesWritten),
        fd.write(index, 0, index.length, active.indexBytes).then((r) => r.bytesWritten),
      );
      if (rowsWritten !== batchBytes || indexWritten !== index.length) throw Object.assign(new Error('short write'), { code: 'EIO' });
      if (this.#options.sync === 'fsync') await both(rowsFd.datasync(), fd.datasync());
      active.rowBytes += batchBytes;
      active.indexBytes += index.length;
      active.rows += batch.reduce((n, p) => n + p.rowCount, 0);
      for (const p of batch) active.flows.set(p.flow, (active.flows.get(p.flow) ?? 0) + p.rowCount);
      this.#bytes += batchBytes + index.length;
      log.pendingBytes -= batchBytes;
      this.#healthy();
      for (const p of batch) p.resolve(ok(undefined));
    } catch (error) {
      log.pendingBytes -= batchBytes;
      const message = diskMessage(error);
      // Nothing of these appends may survive: a replay must not store rows whose request was answered 503.
      if (active !== undefined) await this.#discardTail(log, active);
      this.#diskFailing = true;
      this.#events.diskHealth(false, message);
      this.#scheduleProbe();
      for (const p of batch) p.resolve(fail({ kind: 'unavailable', message }));
    }
  }

  #healthy(): void {
    this.#diskFailing = false;
    this.#probe?.cancel();
    this.#probe = undefined;
    this.#events.diskHealth(true, '');
  }

  /** Probes the disk a second from now, and every second after while it fails, unless a probe is due or running already. */
  #scheduleProbe(): void {
    if (this.#probe !== undefined || this.#stopped) return;
    this.#probe = this.#clock.setTimeout(() => {
      void this.#probeDisk().then((works) => {
        this.#probe = undefined;
        if (!this.#diskFailing) return; // an append succeeded meanwhile
        if (works) this.#healthy();
        else this.#scheduleProbe();
      });
    }, probeIntervalMs);
  }

  /** Writes and syncs a small file the size of a typical request, so readiness returns without waiting for traffic. */
  async #probeDisk(): Promise<boolean> {
    const path = join(this.#options.dir, '.probe');
    try {
      const fd = await open(path, 'w', 0o600);
      try {
        await fd.write(Buffer.alloc(probeBytes));
        await fd.datasync();
      } finally {
        await fd.close();
      }
      await unlink(path);
      return true;
    } catch {
      await unlink(path).catch(() => undefined);
      return false;
    }
  }

  /** Cuts a failed append off the segment's files; if even that fails, the segment is sealed at its acknowledged length. */
  async #discardTail(log: TableLog, active: Active): Promise<void> {
    try {
      await Promise.all([active.rowsFd.truncate(active.rowBytes), active.fd.truncate(active.indexBytes)]);
    } catch {
      // The segment's readers stop at its acknowledged lengths; only a crash before its INSERT could replay the unacknowledged tail.
      log.cutRequested = true;
    }
  }

  async #openSegment(table: TableName, log: TableLog): Promise<Active> {
    const seq = String(this.#nextSeq++).padStart(12, '0');
    const dir = join(this.#options.dir, table);
    const path = join(dir, `${seq}-${this.#instance}.wal`);
    const rowsPath = rowsPathOf(path);
    let fd: FileHandle;
    try {
      fd = await open(path, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      await mkdir(dir, { recursive: true, mode: 0o700 }); // removed while running
      fd = await open(path, 'wx', 0o600);
    }
    let rowsFd: FileHandle;
    try {
      rowsFd = await open(rowsPath, 'wx', 0o600);
    } catch (error) {
      await fd.close().catch(() => undefined);
      await unlink(path).catch(() => undefined);
      throw error;
    }
    if (this.#options.sync === 'fsync')
      await this.#syncNames(dir, [
        { path, fd },
        { path: rowsPath, fd: rowsFd },
      ]);
    const active: Active = {
      path,
      rowsPath,
      token: `${table}-${this.#instance}-${seq}`,
      fd,
      rowsFd,
      indexBytes: 0,
      rowBytes: 0,
      rows: 0,
      openedAt: this.#clock.now(),
      flows: new Map(),
    };
    log.active = active;
    this.#cutAfter(table, log, this.#options.cut.maxDelayMs);
    return active;
  }

  /** Seals the table's filling segment `ms` from now (at once if not positive), instead of when an earlier call said. */
  #cutAfter(table: TableName, log: TableLog, ms: number): void {
    log.timer?.cancel();
    log.timer = undefined;
    const cut = (): void => {
      log.timer = undefined;
      log.cutRequested = true;
      this.#run(table, log);
    };
    if (ms <= 0) cut();
    else log.timer = this.#clock.setTimeout(cut, ms);
  }

  /** Syncs the folder of a new segment, so its files' names survive a power loss too; on failure the segment is gone. */
  async #syncNames(dir: string, files: readonly { path: string; fd: FileHandle }[]): Promise<void> {
    try {
      const dirHandle = await open(dir, 'r');
      try {
        await dirHandle.sync();
      } finally {
        await dirHandle.close();
      }
    } catch (error) {
      for (const file of files) {
        await file.fd.close().catch(() => undefined);
        await unlink(file.path).catch(() => undefined);
      }
      throw error;
    }
  }

  async #seal(table: TableName, log: TableLog): Promise<void> {
    log.cutRequested = false;
    log.timer?.cancel();
    log.timer = undefined;
    const active = log.active;
    if (active === undefined) return;
    log.active = undefined;
    for (const fd of [active.fd, active.rowsFd]) {
      if (this.#options.sync === 'fsync') await fd.close().catch(() => undefined);
      // Off the appends' path: bounds what a power loss can take from a segment that waits long for its INSERT.
      else
        void fd
          .datasync()
          .catch(() => undefined)
          .finally(() => fd.close().catch(() => undefined));
    }
    const bytes = active.indexBytes + active.rowBytes;
    if (active.rows === 0) {
      await unlink(active.path).catch(() => undefined);
      await unlink(active.rowsPath).catch(() => undefined);
      this.#bytes -= bytes;
      return;
    }
    this.#events.sealed({
      table,
      path: active.path,
      rowsPath: active.rowsPath,
      token: active.token,
      bytes,
      rowBytes: active.rowBytes,
      rows: active.rows,
      recovered: false,
      flows: active.flows,
    });
  }
}
