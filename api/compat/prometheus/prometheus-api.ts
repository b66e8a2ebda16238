// The Prometheus HTTP API under /prometheus (DESIGN.md section 9). Placeholder until its
// routes land: every path answers 404 in Prometheus's error shape.
import type { CompatApi } from '../compat-api.ts';

export const prometheusApi: CompatApi = {
  prefix: '/prometheus',
  register: () => undefined,
  fail: (ctx, status, message) => {
    ctx.status = status;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = `${message}\n`;
  },
};
