// Turns io-ts decode errors into sentences that name the offending path and
// value, for API 400s and configuration errors alike.
import type * as t from 'io-ts';
import { IntersectionType, UnionType } from 'io-ts';

function pathOf(context: t.Context): string {
  let path = '';
  for (const [i, entry] of context.entries()) {
    const parent = context[i - 1]?.type;
    // Union and intersection members are keyed by member index: not part of the data path.
    if (entry.key === '' || parent instanceof UnionType || parent instanceof IntersectionType) continue;
    path += /^\d+$/.test(entry.key) ? `[${entry.key}]` : `.${entry.key}`;
  }
  return path.replace(/^\./, '');
}

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** One sentence per error, deduplicated; unions report their own description once. */
export function formatDecodeErrors(errors: t.Errors): string[] {
  const sentences = errors.map((error) => {
    if (error.message !== undefined) return error.message;
    const expected = error.context[error.context.length - 1]?.type.name ?? 'a valid value';
    const at = pathOf(error.context);
    return `${at === '' ? 'value' : at} is ${describe(error.value)}: expected ${expected}`;
  });
  return [...new Set(sentences)];
}
