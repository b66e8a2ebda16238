// The Loki HTTP API under /loki (DESIGN.md section 9). Placeholder until its
// routes land: every path answers 404 in Loki's error shape.
import type { CompatApi } from '../compat-api.ts';

export const lokiApi: CompatApi = {
  prefix: '/loki',
  register: () => undefined,
  fail: (ctx, status, message) => {
    ctx.status = status;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = `${message}\n`;
  },
};
