// Mocha root hooks: release the process-wide embedded ClickHouse at the end.
import { closeSharedStore } from './embedded-store.ts';

export const mochaHooks = {
  async afterAll(): Promise<void> {
    await closeSharedStore();
  },
};
