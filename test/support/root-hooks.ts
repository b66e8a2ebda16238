// Mocha root hooks: release the process-wide embedded ClickHouse at the end.
// Closing chDB waits for its background work (merges of every test
// database's parts); on a loaded 2-core machine that has been seen to take
// longer than a test's 20 s, so the hook gets its own bound, and a close that
// outlives it is reported rather than failing a run whose tests all passed
// (mocha exits the process anyway).
import { closeSharedStore } from './embedded-store.ts';

const closeBoundMs = 90_000;

export const mochaHooks = {
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(closeBoundMs + 10_000);
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<'slow'>((resolve) => {
      timer = setTimeout(() => {
        resolve('slow');
      }, closeBoundMs);
    });
    const outcome = await Promise.race([closeSharedStore().then(() => 'closed' as const), bound]);
    clearTimeout(timer);
    if (outcome === 'slow') console.log(`  (embedded ClickHouse still closing after ${closeBoundMs / 1000} s; leaving it to process exit)`);
    else if (Date.now() - started > 5000) console.log(`  (embedded ClickHouse closed in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  },
};
