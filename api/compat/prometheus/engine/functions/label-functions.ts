// The functions that change labels rather than values: label_replace,
// label_join, and absent / absent_over_time, whose answer's labels come from
// the selector's equality matchers.
import { fail } from '../../../../../src/result.ts';
import { execution } from '../../prom-envelope.ts';
import type { LabelMatcher, Labels } from '../sample-source.ts';
import type { Vector, VectorElement } from '../values.ts';
import type { FunctionDef } from './function-types.ts';
import { compileAnchored, expandTemplate } from './go-regexp.ts';
import { labelValue, labelsKey, withLabel } from './label-set.ts';
import { answer, matrixArg, stringArg, vectorArg } from './step-args.ts';

/** Prometheus 3 accepts any non-empty UTF-8 label name. */
const validLabelName = (name: string): boolean => name.length > 0 && name.isWellFormed();

const duplicateLabelset = execution('vector cannot contain metrics with the same labelset');

function hasDuplicates(v: Vector): boolean {
  const seen = new Set<string>();
  for (const el of v) {
    const key = labelsKey(el.labels);
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

/** The element with `dst` set; writing __name__ makes the name stay, otherwise its mark is kept. */
function relabelled(el: VectorElement, dst: string, value: string): VectorElement {
  const labels = withLabel(el.labels, dst, value);
  const dropName = dst === '__name__' ? false : el.dropName === true;
  return el.h === undefined ? { labels, t: el.t, f: el.f, dropName } : { labels, t: el.t, f: el.f, h: el.h, dropName };
}

/** Compiled patterns by source (a range query asks for the same one at every step). */
const patterns = new Map<string, RegExp | undefined>();

function compiled(source: string): RegExp | undefined {
  if (patterns.has(source)) return patterns.get(source);
  const regex = compileAnchored(source);
  // Bounded: a process answering many distinct patterns compiles again rather than holding them all.
  if (patterns.size >= 256) patterns.clear();
  patterns.set(source, regex);
  return regex;
}

/**
 * label_replace's answer per input labels array and call (its arguments):
 * the same array comes back at every step of a range query, and so its
 * answer keeps one labels array, which later steps' grouping finds by identity.
 */
const replacements = new WeakMap<Labels, Map<string, Labels>>();

function replaced(labels: Labels, call: string, make: () => Labels): Labels {
  let calls = replacements.get(labels);
  if (calls === undefined) {
    calls = new Map();
    replacements.set(labels, calls);
  }
  const known = calls.get(call);
  if (known !== undefined) return known;
  const made = make();
  calls.set(call, made);
  return made;
}

const labelReplace: FunctionDef = {
  name: 'label_replace',
  argTypes: ['vector', 'string', 'string', 'string', 'string'],
  optional: 0,
  returnType: 'vector',
  call: (args) => {
    const dst = stringArg(args, 1);
    const replacement = stringArg(args, 2);
    const src = stringArg(args, 3);
    const source = stringArg(args, 4);
    const regex = compiled(source);
    if (regex === undefined) return fail(execution(`invalid regular expression in label_replace(): ${source}`));
    if (!validLabelName(dst)) return fail(execution(`invalid destination label name in label_replace(): ${dst}`));
    const call = `${dst}\u0000${replacement}\u0000${src}\u0000${source}`;
    const out = vectorArg(args, 0).map((el) => {
      const labels = replaced(el.labels, call, () => {
        const match = regex.exec(labelValue(el.labels, src));
        return match === null ? el.labels : withLabel(el.labels, dst, expandTemplate(replacement, match));
      });
      if (labels === el.labels) return el;
      const dropName = dst === '__name__' ? false : el.dropName === true;
      return el.h === undefined ? { labels, t: el.t, f: el.f, dropName } : { labels, t: el.t, f: el.f, h: el.h, dropName };
    });
    return hasDuplicates(out) ? fail(duplicateLabelset) : answer(out);
  },
};

const labelJoin: FunctionDef = {
  name: 'label_join',
  argTypes: ['vector', 'string', 'string', 'string'],
  optional: -1,
  returnType: 'vector',
  call: (args) => {
    const dst = stringArg(args, 1);
    const separator = stringArg(args, 2);
    const sources = args.slice(3).map((_, i) => stringArg(args, i + 3));
    const invalid = sources.find((s) => !validLabelName(s));
    if (invalid !== undefined) return fail(execution(`invalid source label name in label_join(): ${invalid}`));
    if (!validLabelName(dst)) return fail(execution(`invalid destination label name in label_join(): ${dst}`));
    const out = vectorArg(args, 0).map((el) => relabelled(el, dst, sources.map((s) => labelValue(el.labels, s)).join(separator)));
    return hasDuplicates(out) ? fail(duplicateLabelset) : answer(out);
  },
};

/** The labels absent() answers with: each label matched once with `=` (a label matched twice, or otherwise, is left out). */
export function absentLabels(matchers: readonly LabelMatcher[] | undefined): Labels {
  let labels: Labels = [];
  const has = new Set<string>();
  for (const m of matchers ?? []) {
    if (m.name === '__name__') continue;
    if (m.op === '=' && !has.has(m.name)) {
      labels = withLabel(labels, m.name, m.value);
      has.add(m.name);
    } else {
      labels = labels.filter(([n]) => n !== m.name);
    }
  }
  return labels;
}

/** label_replace, label_join, absent and absent_over_time. */
export const labelFunctions: readonly FunctionDef[] = [
  labelReplace,
  labelJoin,
  {
    name: 'absent',
    argTypes: ['vector'],
    optional: 0,
    returnType: 'vector',
    call: (args, context) => answer(vectorArg(args, 0).length > 0 ? [] : [{ labels: absentLabels(context.selectorMatchers), t: context.t, f: 1 }]),
  },
  {
    name: 'absent_over_time',
    argTypes: ['matrix'],
    optional: 0,
    returnType: 'vector',
    call: (args, context) => {
      const present = matrixArg(args, 0).some((s) => s.floats.length + s.histograms.length > 0);
      return answer(present ? [] : [{ labels: absentLabels(context.selectorMatchers), t: context.t, f: 1, dropName: true }]);
    },
  },
];
