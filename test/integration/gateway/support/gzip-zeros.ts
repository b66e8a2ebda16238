// A gzip bomb for the body-limit tests: gzip of `size` zero bytes, produced
// in 1 MiB steps so only the compressed output (~0.5 MiB for 512 MiB) is kept.
import { createGzip } from 'node:zlib';

export async function gzipZeros(size: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gzip.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((resolve) => gzip.on('end', resolve));
  const zeros = Buffer.alloc(1024 * 1024);
  for (let written = 0; written < size; written += zeros.length) {
    if (!gzip.write(zeros)) await new Promise((resolve) => gzip.once('drain', resolve));
  }
  gzip.end();
  await done;
  return Buffer.concat(out);
}
