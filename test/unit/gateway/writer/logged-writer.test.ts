// The write-ahead log, the block inserter and the writer over them, against
// a fake ClickHouse at the sink port that deduplicates by token as
// ClickHouse does. Real files in a temp folder: fsync, torn tails and
// replays are the point.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { TableName } from '../../../../gateway/rowbinary/row-batch.ts';
import { LoggedWriter, backpressure, stopTimeoutMs } from '../../../../gateway/writer/logged-writer.ts';
import type { WriterObserver } from '../../../../gateway/writer/logged-writer.ts';
import type { RowSink, RowSource, WriteFailure } from '../../../../gateway/writer/row-sink.ts';
import { WriteAheadLog, bulkAppendBytes } from '../../../../gateway/writer/write-ahead-log.ts';
import type { Segment } from '../../../../gateway/writer/write-ahead-log.ts';
import { systemClock } from '../../../../src/clock.ts';
import type { WriterConfig } from '../../../../src/config/config.ts';
import { fail, ok } from '../../../../src/result.ts';
import type { Result } from '../../../../src/result.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

/** ClickHouse at the port: rows per table, a block skipped when its token was stored before. */
class FakeClickHouse implements RowSink {
  readonly rows = new Map<TableName, string[]>();
  readonly tokens = new Set<string>();
  readonly inserts: { table: TableName; rows: number; token: string }[] = [];
  /** Answers instead of storing, when set; a function decides per insert. */
  fail: ((rows: readonly string[]) => Result<void, WriteFailure> | undefined) | undefined;
  /** Inserts wait for this before answering (after storing). */
  hold: Promise<void> | undefined;
  insertStarted: () => void = () => undefined;

  /** Of each insert, whether the rows came as a file (a segment's rows file, read in place) or as chunks. */
  readonly sources: ('file' | 'chunks')[] = [];

  async insert(table: TableName, source: RowSource, token: string): Promise<Result<void, WriteFailure>> {
    // ClickHouse reads a file when the INSERT runs, as this does.
    const chunks = 'file' in source ? [readFileSync(source.file)] : source.chunks;
    this.sources.push('file' in source ? 'file' : 'chunks');
    const rows = chunks.flatMap((c) =>
      c
        .toString()
        .split('\n')
        .filter((r) => r !== ''),
    );
    this.insertStarted();
    const failure = this.fail?.(rows);
    if (failure !== undefined) return failure;
    this.inserts.push({ table, rows: rows.length, token });
    if (!this.tokens.has(token)) {
      this.tokens.add(token);
      this.rows.set(table, [...(this.rows.get(table) ?? []), ...rows]);
    }
    if (this.hold !== undefined) await this.hold;
    return ok(undefined);
  }
}

class RecordingObserver implements WriterObserver {
  readonly health: WriterObserver['health'];
  readonly changes: string[] = [];
  readonly dead: { table: TableName; rows: number; reason: string }[] = [];
  constructor() {
    this.health = (condition, healthy) => {
      this.changes.push(`${condition}: ${healthy ? 'ok' : 'failing'}`);
    };
  }
  inserted(): void {
    /* counted by the fake */
  }
  submitted(): void {
    /* timings are the metrics' business */
  }
  deadLettered(table: TableName, rows: number, reason: string): void {
    this.dead.push({ table, rows, reason });
  }
}

const rows = (...names: string[]): Buffer => Buffer.from(names.map((n) => `${n}\n`).join(''));

/** Moves the clock on in steps until `done` settles; the log's and ClickHouse's real I/O runs between steps. */
async function driveUntil<T>(clock: ManualClock, done: Promise<T>, stepMs = 50): Promise<T> {
  const state = { settled: false };
  done.then(
    () => {
      state.settled = true;
    },
    () => {
      state.settled = true;
    },
  );
  while (!state.settled) await clock.advance(stepMs);
  return done;
}

describe('logged writer', () => {
  let dir: string;
  let config: WriterConfig;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tenantry-wal-unit-'));
    config = { maxBatchRows: 1000, maxBatchBytes: 1 << 20, maxBatchDelayMs: 60_000, maxLogBytes: 1 << 20, logDir: dir };
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('acknowledges concurrent submissions from the log and inserts them later as one block per table', async () => {
    const ch = new FakeClickHouse();
    const writer = await LoggedWriter.open(ch, config, new RecordingObserver());
    const answers = await Promise.all([writer.submit('spans', rows('a', 'b'), 2), writer.submit('spans', rows('c'), 1), writer.submit('logs', rows('l'), 1)]);
    expect(answers).to.deep.equal([ok(undefined), ok(undefined), ok(undefined)]);
    expect(ch.inserts).to.deep.equal([]); // acknowledged before any INSERT: the block is not due yet
    await writer.flush();
    expect(ch.inserts.map((i) => [i.table, i.rows])).to.have.deep.members([
      ['spans', 3],
      ['logs', 1],
    ]);
    expect(ch.rows.get('spans')).to.deep.equal(['a', 'b', 'c']);
    expect(writer.logBytes).to.equal(0);
    expect(readdirSync(join(dir, 'spans'))).to.deep.equal([]);
    await writer.stop();
  });

  it("writes an append of at least 1 MiB to the table's bulk segment, so a small append beside it does not wait for its write", async () => {
    const ch = new FakeClickHouse();
    const writer = await LoggedWriter.open(ch, { ...config, maxBatchRows: 100_000, maxBatchBytes: 16 << 20, maxLogBytes: 16 << 20 }, new RecordingObserver());
    const large = Array.from({ length: 20_000 }, (_, i) => `large-${i}-${'x'.repeat(100)}`);
    expect(rows(...large).length).to.be.at.least(bulkAppendBytes);
    const answers = await Promise.all([writer.submit('spans', rows(...large), large.length), writer.submit('spans', rows('s1', 's2'), 2)]);
    expect(answers).to.deep.equal([ok(undefined), ok(undefined)]);
    await writer.flush();
    // Two segments, one per lane: the small append was not queued behind the large one's write.
    expect(ch.inserts.map((i) => i.rows).sort((a, b) => a - b)).to.deep.equal([2, 20_000]);
    expect(ch.rows.get('spans')?.length).to.equal(20_002);
    expect(writer.logBytes).to.equal(0);
    await writer.stop();
  });

  it('cuts a block when it reaches maxBatchRows, and when its first rows are maxBatchDelayMs old', async () => {
    const ch = new FakeClickHouse();
    const inserted = new Promise<void>((resolve) => {
      ch.insertStarted = resolve;
    });
    const byRows = await LoggedWriter.open(ch, { ...config, maxBatchRows: 3 }, new RecordingObserver(), new ManualClock());
    await byRows.submit('spans', rows('1', '2', '3'), 3);
    await inserted; // no flush, no time passing: the row bound cut it
    await byRows.stop();

    const aged = new FakeClickHouse();
    const clock = new ManualClock();
    const agedInserted = new Promise<void>((resolve) => {
      aged.insertStarted = resolve;
    });
    const byAge = await LoggedWriter.open(aged, { ...config, logDir: join(dir, 'aged'), maxBatchDelayMs: 20 }, new RecordingObserver(), clock);
    await byAge.submit('spans', rows('x'), 1);
    await clock.advance(19);
    expect(aged.inserts, 'not due yet').to.deep.equal([]);
    await clock.advance(1);
    await agedInserted;
    await byAge.stop();
    expect(aged.rows.get('spans')).to.deep.equal(['x']);
  });

  it('sends one INSERT per table per maxBatchDelayMs however many clients submit (the server-mode bound)', async () => {
    const ch = new FakeClickHouse();
    const clock = new ManualClock();
    const writer = await LoggedWriter.open(ch, { ...config, maxBatchDelayMs: 200, maxBatchRows: 1_000_000 }, new RecordingObserver(), clock);
    let submitted = 0;
    const clients = Promise.all(
      Array.from({ length: 64 }, async (_, client) => {
        // Past 700 ms of the clock and at least three requests each: on a slow disk the clock can pass 700 ms before
        // the first appends finish, and the test is about many submissions per window.
        for (let i = 0; clock.now() < 700 || i < 3; i++) {
          const answer = await writer.submit(client % 2 === 0 ? 'spans' : 'logs', rows(`c${client}-${i}`), 1);
          expect(answer).to.deep.equal(ok(undefined));
          submitted++;
        }
      }),
    );
    await driveUntil(clock, clients, 10);
    await writer.flush();
    expect(submitted).to.be.at.least(64 * 3);
    for (const table of ['spans', 'logs'] as const) {
      const inserts = ch.inserts.filter((i) => i.table === table).length;
      // One per 200 ms window that saw rows, plus the flush's final cut.
      expect(inserts, table).to.be.at.most(Math.ceil(clock.now() / 200) + 1);
    }
    expect((ch.rows.get('spans')?.length ?? 0) + (ch.rows.get('logs')?.length ?? 0)).to.equal(submitted);
    await writer.stop();
  });

  it('paces requests at the rate ClickHouse takes rows while it is healthy, letting them in as an INSERT progresses', async () => {
    const ch = new FakeClickHouse();
    const clock = new ManualClock();
    const writer = await LoggedWriter.open(ch, { ...config, maxBatchRows: 10 }, new RecordingObserver(), clock);
    const names = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    /** Holds ClickHouse's next INSERT; resolves with its release once the INSERT has begun. */
    const holdNextInsert = (): Promise<() => void> => {
      let release: () => void = () => undefined;
      ch.hold = new Promise((resolve) => {
        release = resolve;
      });
      return new Promise((resolve) => {
        ch.insertStarted = () => {
          ch.insertStarted = () => undefined;
          resolve(release);
        };
      });
    };

    // One INSERT of 10 rows taking 100 ms: ClickHouse takes 100 rows a second; half a second's worth may enter at once, one second's be waiting.
    let held = holdNextInsert();
    expect(await writer.submit('spans', rows(...names('a', 10)), 10)).to.deep.equal(ok(undefined));
    let release = await held;
    await clock.advance(100);
    ch.hold = undefined;
    release();
    await writer.flush();

    held = holdNextInsert();
    expect(await writer.submit('spans', rows(...names('b', 70)), 70)).to.deep.equal(ok(undefined));
    release = await held; // 70 rows being inserted, none done yet
    let answered = false;
    const paced = writer.submit('spans', rows(...names('c', 10)), 10).then((r) => {
      answered = true;
      return r;
    });
    expect(await writer.submit('logs', rows('another table'), 1)).to.deep.equal(ok(undefined));
    expect(answered).to.equal(false);
    await clock.advance(1500); // 30 rows over the half second's worth, drained at the measured pace (slowed by the backlog) while the INSERT still runs
    expect(await paced).to.deep.equal(ok(undefined));
    ch.hold = undefined;
    release();
    await writer.flush();
    expect(ch.rows.get('spans')).to.have.length(90);
    await writer.stop();
  });

  it("cuts a waiting table's segment early when ClickHouse would otherwise idle until it is due", async () => {
    const ch = new FakeClickHouse();
    const clock = new ManualClock();
    // A cut delay no test waits for: only the pacer's early cut can start the second INSERT.
    const writer = await LoggedWriter.open(ch, { ...config, maxBatchDelayMs: 600_000 }, new RecordingObserver(), clock);
    let release: () => void = () => undefined;
    ch.hold = new Promise((resolve) => {
      release = resolve;
    });
    const started = new Promise<void>((resolve) => {
      ch.insertStarted = () => {
        ch.insertStarted = () => undefined;
        resolve();
      };
    });
    expect(await writer.submit('spans', rows('a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9', 'a10'), 10)).to.deep.equal(ok(undefined));
    void writer.seal();
    await started;
    await clock.advance(100); // 10 rows in 100 ms: 100 rows a second, 150 may wait
    ch.hold = undefined;
    release();
    await writer.flush();

    expect(await writer.submit('spans', rows('b'), 150)).to.deep.equal(ok(undefined)); // 150 rows by count: over a second's worth
    const cutEarly = new Promise<void>((resolve) => {
      ch.insertStarted = () => {
        ch.insertStarted = () => undefined;
        resolve();
      };
    });
    // Waits; no INSERT runs, so the segment is cut once it is half a second old (the early cut's bound), not in 600 s.
    const waiting = writer.submit('spans', rows('c'), 1);
    await clock.advance(499);
    expect(
      ch.inserts.map((i) => i.rows),
      'not half a second old yet',
    ).to.deep.equal([10]);
    await clock.advance(1);
    await cutEarly;
    await clock.advance(1000);
    expect(await waiting).to.deep.equal(ok(undefined));
    await writer.flush();
    expect(ch.inserts.map((i) => i.rows)).to.deep.equal([10, 1, 1]);
    await writer.stop();
  });

  it('inserts two sealed segments of a table at once, and starts a third only when one of them ends', async () => {
    const ch = new FakeClickHouse();
    const writer = await LoggedWriter.open(ch, config, new RecordingObserver());
    let release: () => void = () => undefined;
    ch.hold = new Promise((resolve) => {
      release = resolve;
    });
    let starts = 0;
    let twoStarted: () => void = () => undefined;
    const bothRunning = new Promise<void>((resolve) => {
      twoStarted = resolve;
    });
    ch.insertStarted = () => {
      if (++starts === 2) twoStarted();
    };
    for (const name of ['s1', 's2', 's3']) {
      expect(await writer.submit('spans', rows(name), 1)).to.deep.equal(ok(undefined));
      await writer.seal(); // a segment each; seal() resolves once it is queued for its INSERT
    }
    await bothRunning;
    // An inserter that let the third segment go too would have queued its read before this one of the same files.
    for (const name of readdirSync(join(dir, 'spans'))) await readFile(join(dir, 'spans', name));
    await new Promise((resolve) => {
      setImmediate(resolve);
    });
    expect(
      ch.inserts.map((i) => i.token),
      'two INSERTs run; the third waits for one of them',
    ).to.have.length(2);
    ch.hold = undefined;
    release();
    await writer.flush();
    expect(ch.rows.get('spans')).to.have.members(['s1', 's2', 's3']);
    expect(new Set(ch.inserts.map((i) => i.token)).size).to.equal(3);
    await writer.stop();
  });

  it('refuses with "overloaded" past maxLogBytes, counting rows the log holds until ClickHouse has them', async () => {
    const ch = new FakeClickHouse();
    let release: () => void = () => undefined;
    ch.hold = new Promise((resolve) => {
      release = resolve;
    });
    const writer = await LoggedWriter.open(ch, { ...config, maxLogBytes: 100 }, new RecordingObserver());
    expect(await writer.submit('spans', Buffer.alloc(60, 'a'), 1)).to.deep.equal(ok(undefined));
    const refused = await writer.submit('spans', Buffer.alloc(60, 'b'), 1);
    expect(refused).to.nested.include({ ok: false, 'error.kind': 'overloaded' });
    const flushing = writer.flush();
    release();
    await flushing;
    expect(await writer.submit('spans', Buffer.alloc(60, 'c'), 1)).to.deep.equal(ok(undefined));
    await writer.stop();
  });

  it('replays what a killed process left, with the same tokens, so a block inserted before the crash is not stored twice', async () => {
    const ch = new FakeClickHouse();
    // The crash point: the INSERT succeeded, the process dies before deleting the segment.
    ch.hold = new Promise<void>(() => undefined);
    const crashed = await LoggedWriter.open(ch, config, new RecordingObserver());
    await crashed.submit('spans', rows('before-crash-1', 'before-crash-2'), 2);
    await crashed.submit('logs', rows('never-inserted'), 1);
    let started = 0;
    const bothReached = new Promise<void>((resolve) => {
      ch.insertStarted = () => {
        if (++started === 2) resolve();
      };
    });
    void crashed.flush(); // never resolves: both INSERTs are held after storing
    await bothReached;
    // A torn append at the end of a segment, in both of its files: never acknowledged, so never replayed.
    const logsDir = join(dir, 'logs');
    const segmentFiles = readdirSync(logsDir).sort();
    expect(segmentFiles.map((n) => n.replace(/^.*\./, ''))).to.deep.equal(['rows', 'wal']);
    for (const [name, torn] of segmentFiles.map((n, i) => [n, i === 0 ? 'torn-row\n' : 'TLW2 torn'] as const)) {
      writeFileSync(join(logsDir, name), Buffer.concat([readFileSync(join(logsDir, name)), Buffer.from(torn)]));
    }

    ch.hold = undefined;
    const restarted = await LoggedWriter.open(ch, config, new RecordingObserver());
    await restarted.flush();
    expect(ch.rows.get('spans')).to.deep.equal(['before-crash-1', 'before-crash-2']);
    expect(ch.rows.get('logs')).to.deep.equal(['never-inserted']);
    const spanInserts = ch.inserts.filter((i) => i.table === 'spans');
    expect(spanInserts).to.have.length(2);
    expect(spanInserts[0]?.token).to.equal(spanInserts[1]?.token);
    // The replayed segments' rows files were read in place, the torn one cut back to its acknowledged rows first.
    expect(ch.sources).to.deep.equal(['file', 'file', 'file', 'file']);
    await restarted.stop();
    expect(readdirSync(logsDir), 'both files of an inserted segment are deleted').to.deep.equal([]);
  });

  it('deletes on start what a crash left of segments that hold nothing to insert, and numbers new segments after them', async () => {
    const spansDir = join(dir, 'spans');
    mkdirSync(spansDir, { recursive: true });
    // Released (its index deleted) just before the process died: already in ClickHouse.
    writeFileSync(join(spansDir, '000000000006-00112233aabbccdd.rows'), rows('already-stored'));
    writeFileSync(join(spansDir, '000000000006-00112233aabbccdd.splits'), 'spans-00112233aabbccdd-000000000006\n');
    // Created, then the process died before its rows file was: nothing was appended to it.
    writeFileSync(join(spansDir, '000000000007-00112233aabbccdd.wal'), '');
    const ch = new FakeClickHouse();
    const writer = await LoggedWriter.open(ch, config, new RecordingObserver());
    expect(readdirSync(spansDir)).to.deep.equal([]);
    await writer.submit('spans', rows('after'), 1);
    await writer.flush();
    expect(ch.rows.get('spans')).to.deep.equal(['after']);
    expect(
      ch.inserts.map((i) => i.token),
      'numbering goes on after the segments found',
    ).to.match(/^spans-[0-9a-f]{16}-000000000008$/);
    await writer.stop();
  });

  it('gives up on stop after stopTimeoutMs while ClickHouse fails, leaving the segment for the next start', async () => {
    const ch = new FakeClickHouse();
    ch.fail = () => fail({ kind: 'unavailable', message: 'connection refused' });
    const clock = new ManualClock();
    const writer = await LoggedWriter.open(ch, config, new RecordingObserver(), clock);
    expect(await writer.submit('logs', rows('kept'), 1)).to.deep.equal(ok(undefined));
    let stopped = false;
    const stopping = writer.stop().then(() => {
      stopped = true;
    });
    await clock.advance(stopTimeoutMs - 1);
    expect(stopped, 'still retrying').to.equal(false);
    await clock.advance(1);
    await stopping;
    ch.fail = undefined;
    const restarted = await LoggedWriter.open(ch, config, new RecordingObserver());
    await restarted.flush();
    expect(ch.rows.get('logs')).to.deep.equal(['kept']);
    await restarted.stop();
  });

  it('retries a block while ClickHouse fails, reporting the failure and the recovery once each', async () => {
    const ch = new FakeClickHouse();
    let failures = 3;
    ch.fail = () => (failures-- > 0 ? fail({ kind: 'unavailable', message: 'connection refused' }) : undefined);
    const observer = new RecordingObserver();
    const clock = new ManualClock();
    const writer = await LoggedWriter.open(ch, config, observer, clock);
    await writer.submit('metrics', rows('m1'), 1);
    await driveUntil(clock, writer.flush());
    expect(clock.now(), 'backed off 0.1 + 0.2 + 0.4 s').to.be.at.least(700);
    expect(ch.rows.get('metrics')).to.deep.equal(['m1']);
    expect(observer.changes).to.deep.equal(['ClickHouse accepting writes: failing', 'ClickHouse accepting writes: ok']);
    await writer.stop();
  });

  it('lets in the requests that waited for the first INSERT when it fails, as it lets in those that come after', async () => {
    // Before an INSERT has measured the rate, the pacer keeps one block (maxBatchRows) admitted and not inserted:
    // b waits for a's INSERT. That INSERT fails; ClickHouse being down, the log takes b instead of refusing it after 5 s.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started: () => void = () => undefined;
    const firstStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const stored: string[] = [];
    let down = true;
    const sink: RowSink = {
      insert: async (_table, source) => {
        if (down) {
          started();
          await gate;
          return fail({ kind: 'unavailable', message: 'connection refused' });
        }
        const chunks = 'file' in source ? [readFileSync(source.file)] : source.chunks;
        stored.push(
          ...chunks.flatMap((c) =>
            c
              .toString()
              .split('\n')
              .filter((r) => r !== ''),
          ),
        );
        return ok(undefined);
      },
    };
    const clock = new ManualClock();
    const observer = new RecordingObserver();
    const writer = await LoggedWriter.open(sink, { ...config, maxBatchRows: 2 }, observer, clock);
    expect(await writer.submit('spans', rows('a1', 'a2'), 2)).to.deep.equal(ok(undefined));
    await firstStarted; // the block was cut at 2 rows; its INSERT runs
    let answered = false;
    const waiting = writer.submit('spans', rows('b'), 1).then((r) => {
      answered = true;
      return r;
    });
    await clock.advance(1);
    expect(answered, 'b waits for the first INSERT').to.equal(false);
    release();
    // The failure is handled in promise reactions, which advance() lets run before any timer: a request still
    // waiting then is refused when its maxWaitMs runs out here. Its append's file I/O needs no more clock.
    await clock.advance(backpressure.maxWaitMs);
    expect(await waiting).to.deep.equal(ok(undefined));
    expect(observer.changes).to.deep.equal(['ClickHouse accepting writes: failing']);
    expect(await writer.submit('spans', rows('c'), 1)).to.deep.equal(ok(undefined));
    down = false;
    await driveUntil(clock, writer.flush());
    expect(stored.sort()).to.deep.equal(['a1', 'a2', 'b', 'c']);
    await writer.stop();
  });

  it('splits a block ClickHouse refuses for its rows until the refusing request is alone, keeps that one aside, and stores the rest', async () => {
    const ch = new FakeClickHouse();
    ch.fail = (r) => (r.includes('poison') ? fail({ kind: 'invalid_query', message: 'Cannot parse input' }) : undefined);
    const observer = new RecordingObserver();
    const clock = new ManualClock();
    const writer = await LoggedWriter.open(ch, config, observer, clock);
    await Promise.all(['a', 'b', 'poison', 'c', 'd'].map((name) => writer.submit('spans', rows(name, `${name}-2`), 2)));
    await driveUntil(clock, writer.flush());
    expect([...(ch.rows.get('spans') ?? [])].sort()).to.deep.equal(['a', 'a-2', 'b', 'b-2', 'c', 'c-2', 'd', 'd-2']);
    expect(observer.dead).to.deep.equal([{ table: 'spans', rows: 2, reason: 'Cannot parse input' }]);
    const kept = readdirSync(join(dir, 'dead-letter')).sort();
    expect(kept).to.have.length(2);
    expect(readFileSync(join(dir, 'dead-letter', kept.find((n) => n.endsWith('.rowbinary')) ?? ''), 'utf8')).to.equal('poison\npoison-2\n');
    await writer.stop();
  });

  it('splits a replayed block at once when it was split before the crash, so a half stored then is not stored again', async () => {
    const ch = new FakeClickHouse();
    // The crash point: ClickHouse refused the whole block for its rows, took the first half, and the process died before its answer.
    ch.fail = (r) => (r.length === 4 ? fail({ kind: 'invalid_query', message: 'Cannot parse input' }) : undefined);
    const firstHalf = new Promise<void>((resolve) => {
      ch.insertStarted = () => {
        if (ch.inserts.length === 0 && ch.sources.length > 3) resolve();
      };
    });
    const clock = new ManualClock();
    const crashed = await LoggedWriter.open(ch, config, new RecordingObserver(), clock);
    await Promise.all(['r1', 'r2', 'r3', 'r4'].map((name) => crashed.submit('spans', rows(name), 1)));
    ch.hold = new Promise<void>(() => undefined);
    void crashed.seal();
    await driveUntil(clock, firstHalf);
    expect(
      readdirSync(join(dir, 'spans')).filter((n) => n.endsWith('.splits')),
      'the split is recorded before the half is inserted',
    ).to.have.length(1);

    const replay = new FakeClickHouse();
    replay.tokens.add(ch.inserts[0]?.token ?? '');
    replay.rows.set('spans', ch.rows.get('spans') ?? []);
    const restarted = await LoggedWriter.open(replay, config, new RecordingObserver());
    await restarted.flush();
    expect([...(replay.rows.get('spans') ?? [])].sort()).to.deep.equal(['r1', 'r2', 'r3', 'r4']);
    expect(replay.inserts.map((i) => i.token.replace(/^.*-\d{12}/, ''))).to.deep.equal(['-a', '-b']);
    await restarted.stop();
    expect(readdirSync(join(dir, 'spans')), 'the segment and its split record are gone').to.deep.equal([]);
  });

  it('inserts on stop what the log holds, and refuses submissions after', async () => {
    const ch = new FakeClickHouse();
    const writer = await LoggedWriter.open(ch, config, new RecordingObserver());
    await writer.submit('logs', rows('last'), 1);
    await writer.stop();
    expect(ch.rows.get('logs')).to.deep.equal(['last']);
    expect(await writer.submit('logs', rows('late'), 1)).to.nested.include({ ok: false, 'error.kind': 'stopped' });
  });
});

describe('write-ahead log segments', () => {
  it('are named so that a later start sorts after and never reuses a token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tenantry-wal-names-'));
    try {
      const sealed: Segment[] = [];
      const options = { dir, maxBytes: 1 << 20, sync: 'fsync' as const, cut: { maxRows: 1, maxBytes: 1 << 20, maxDelayMs: 60_000 } };
      const events = {
        sealed: (s: Segment) => {
          sealed.push(s);
        },
        diskHealth: () => undefined,
      };
      const first = new WriteAheadLog(options, events, await WriteAheadLog.recover(dir), systemClock);
      await first.append('spans', rows('one'), 1);
      await first.sealAll();
      const found = await WriteAheadLog.recover(dir);
      expect(found.segments.map((s) => s.token)).to.deep.equal(sealed.map((s) => s.token));
      const second = new WriteAheadLog(options, events, found, systemClock);
      await second.append('spans', rows('two'), 1);
      await second.sealAll();
      expect(sealed).to.have.length(2);
      expect(sealed[1]?.token).to.not.equal(sealed[0]?.token);
      expect([sealed[0]?.path, sealed[1]?.path].sort()).to.deep.equal([sealed[0]?.path, sealed[1]?.path]);
      expect((await WriteAheadLog.read(sealed[1] as Segment)).map((r) => r.rows.toString())).to.deep.equal(['two\n']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
