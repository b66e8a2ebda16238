// A conversion worker that exits when a job's body is the bytes "crash",
// and otherwise is the real one (convert-pool.test.ts): its listener runs
// before the real worker's, so the pool sees a worker die mid-job.
import { parentPort } from 'node:worker_threads';

parentPort?.on('message', (job: { readonly parts: readonly Uint8Array[] }) => {
  if (Buffer.concat(job.parts).toString() === 'crash') process.exit(3);
});
await import('../../../../../gateway/convert/worker/convert-worker.ts');
