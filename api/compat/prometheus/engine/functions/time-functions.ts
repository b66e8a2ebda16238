// The calendar functions: each float element read as Unix seconds (UTC),
// or the step's time when called without an argument.
import type { VectorElement } from '../values.ts';
import type { FunctionDef } from './function-types.ts';
import { answer, vectorArg } from './step-args.ts';

/** A calendar function of a Unix time in seconds, truncated to whole seconds as Go's time.Unix(int64(v), 0). */
function dateFunc(name: string, f: (d: Date) => number): FunctionDef {
  const of = (seconds: number): number => {
    const d = new Date(Math.trunc(seconds) * 1000);
    return Number.isNaN(d.getTime()) ? NaN : f(d);
  };
  return {
    name,
    argTypes: ['vector'],
    optional: 1,
    returnType: 'vector',
    call: (args, context) => {
      if (args.length === 0) return answer([{ labels: [], t: context.t, f: of(Math.trunc(context.t / 1000)) }]);
      const out: VectorElement[] = [];
      for (const el of vectorArg(args, 0)) if (el.h === undefined) out.push({ labels: el.labels, t: el.t, f: of(el.f), dropName: true });
      return answer(out);
    },
  };
}

function dayOfYear(d: Date): number {
  return Math.round((Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
}

/** day_of_month, day_of_week, day_of_year, days_in_month, hour, minute, month and year. */
export const timeFunctions: readonly FunctionDef[] = [
  dateFunc('day_of_month', (d) => d.getUTCDate()),
  dateFunc('day_of_week', (d) => d.getUTCDay()),
  dateFunc('day_of_year', dayOfYear),
  dateFunc('days_in_month', (d) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate()),
  dateFunc('hour', (d) => d.getUTCHours()),
  dateFunc('minute', (d) => d.getUTCMinutes()),
  dateFunc('month', (d) => d.getUTCMonth() + 1),
  dateFunc('year', (d) => d.getUTCFullYear()),
];
