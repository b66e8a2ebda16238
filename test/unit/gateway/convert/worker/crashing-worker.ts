// A conversion worker that exits when a job's body is the bytes "crash",
// never answers one of "hang", and otherwise is the real one
// (convert-pool.test.ts): its listener runs before the real worker's, so the
// pool sees a worker die or hang mid-job.
import { parentPort } from 'node:worker_threads';

parentPort?.on('message', (job: { readonly parts: readonly Uint8Array[] }) => {
  const text = Buffer.concat(job.parts).toString();
  if (text === 'crash') process.exit(3);
  // A converter that never returns: only terminate() ends it.
  if (text === 'hang') for (;;);
});
await import('../../../../../gateway/convert/worker/convert-worker.ts');
