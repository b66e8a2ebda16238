// The Tempo HTTP API under /tempo (DESIGN.md section 9). Placeholder until its
// routes land: every path answers 404 in Tempo's error shape.
import type { CompatApi } from '../compat-api.ts';

export const tempoApi: CompatApi = {
  prefix: '/tempo',
  register: () => undefined,
  fail: (ctx, status, message) => {
    ctx.status = status;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = `${message}\n`;
  },
};
