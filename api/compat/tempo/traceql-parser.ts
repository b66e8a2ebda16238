// TraceQL parsed with Grafana's grammar (@grafana/lezer-traceql) into the
// small AST this API executes: spanset filters over intrinsics and
// attributes joined by && and || inside a spanset, spansets joined by && and
// ||, and `| select(...)`. Everything else the grammar knows (structural
// operators, aggregates, by(), metrics functions, hints) is refused with a
// message naming it, and a syntax error carries the parser's position, as
// Tempo reports them (line and column). A query has bounds (issue 33): its
// length, how deep its parentheses and braces nest, how many spansets and
// comparisons it holds, and the range of every number and duration in it;
// beyond one, a message for a 400.
import type { SyntaxNode } from '@lezer/common';
import { parser } from '@grafana/lezer-traceql';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import { parseGoDuration } from '../../query/durations.ts';
import { maxDurationNs } from './tempo-params.ts';

/** The longest query, in characters (a URL carries at most about 16 KiB anyway). */
export const maxQueryLength = 8192;
/** How deep parentheses and braces may nest. */
export const maxNesting = 32;
/** Most spanset filters in one query (each is a column of the search's statement). */
export const maxSpansets = 32;
/** Most comparisons and selected fields in one query (each is an expression of the statement, some twice). */
export const maxComparisons = 128;

/** Intrinsics of a span, by their canonical name. */
export type SpanIntrinsic = 'name' | 'status' | 'kind' | 'duration' | 'statusMessage';
/** Intrinsics of the whole trace. */
export type TraceIntrinsic = 'rootName' | 'rootServiceName' | 'traceDuration';

export type Field =
  | { readonly kind: 'intrinsic'; readonly name: SpanIntrinsic | TraceIntrinsic }
  | { readonly kind: 'attribute'; readonly scope: 'span' | 'resource' | 'any'; readonly name: string };

export type Value =
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'int'; readonly value: number }
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'duration'; readonly ns: bigint }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'keyword'; readonly value: string }
  | { readonly type: 'nil' };

export type CompareOp = '=' | '!=' | '>' | '>=' | '<' | '<=' | '=~' | '!~';

export type Condition =
  | { readonly kind: 'compare'; readonly field: Field; readonly op: CompareOp; readonly value: Value }
  | { readonly kind: 'and' | 'or'; readonly left: Condition; readonly right: Condition }
  | { readonly kind: 'true' };

export type Spansets =
  { readonly kind: 'filter'; readonly condition: Condition } | { readonly kind: 'and' | 'or'; readonly left: Spansets; readonly right: Spansets };

export interface TraceQuery {
  readonly spansets: Spansets;
  /** Fields of `| select(...)`, in order. */
  readonly select: readonly Field[];
}

/** Why a query was refused: a syntax error (with its position) or a construct this API does not run. */
export interface TraceQlError {
  readonly message: string;
}

const intrinsicNames: Readonly<Record<string, SpanIntrinsic | TraceIntrinsic>> = {
  name: 'name',
  status: 'status',
  kind: 'kind',
  duration: 'duration',
  statusMessage: 'statusMessage',
  'span:name': 'name',
  'span:status': 'status',
  'span:kind': 'kind',
  'span:duration': 'duration',
  'span:statusMessage': 'statusMessage',
  rootName: 'rootName',
  rootServiceName: 'rootServiceName',
  traceDuration: 'traceDuration',
  'trace:rootName': 'rootName',
  'trace:rootService': 'rootServiceName',
  'trace:duration': 'traceDuration',
};

const keywords = new Set(['error', 'ok', 'unset', 'server', 'client', 'producer', 'consumer', 'internal', 'unspecified']);

/** What a refused construct is called in the error message. */
const unsupportedNodes: Readonly<Record<string, string>> = {
  Gt: 'the structural operator ">" (child)',
  Lt: 'the structural operator "<" (parent)',
  Desc: 'the structural operator ">>" (descendant)',
  Anc: 'the structural operator "<<" (ancestor)',
  ExperimentalOp: 'the structural operator "~" (sibling) and the negated structural operators',
  UnionStructuralOp: 'the union structural operators ("&>>", "&>", "&~"...)',
  ScalarFilter: 'aggregate filters (count(), avg(), min(), max(), sum())',
  Aggregate: 'aggregates (count(), avg(), min(), max(), sum())',
  GroupOperation: '"| by(...)"',
  CoalesceOperation: '"| coalesce()"',
  MetricsOperation: 'metrics functions (rate(), count_over_time()...)',
  MetricsExpression: 'metrics functions (rate(), count_over_time()...)',
  WithHint: 'query hints (with(...))',
  Parent: 'the "parent." scope',
  Event: 'the "event." scope',
  Link: 'the "link." scope',
  Instrumentation: 'the "instrumentation." scope',
  TemplateVariable: 'template variables',
};

class Refusal extends Error {}

/** Line and column (1-based) of offset `at` in `text`. */
function position(text: string, at: number): string {
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  return `line ${line}, col ${at - before.lastIndexOf('\n')}`;
}

/** Visits `node` and its descendants depth first; `enter` returning false skips a node's children. */
function walk(node: SyntaxNode, enter: (n: SyntaxNode) => boolean | undefined): void {
  if (enter(node) === false) return;
  for (let c = node.firstChild; c !== null; c = c.nextSibling) walk(c, enter);
}

function firstError(text: string, node: SyntaxNode): string | undefined {
  let found: number | undefined;
  walk(node, (n) => {
    if (found === undefined && n.type.isError) found = n.from;
    return found === undefined;
  });
  if (found === undefined) return undefined;
  const near = text.slice(found, found + 12).trim();
  return `invalid TraceQL query: parse error at ${position(text, found)}: syntax error${near === '' ? ': unexpected end of query' : `: unexpected ${JSON.stringify(near)}`}`;
}

const children = (node: SyntaxNode): SyntaxNode[] => {
  const out: SyntaxNode[] = [];
  for (let c = node.firstChild; c !== null; c = c.nextSibling) out.push(c);
  return out;
};

function refuseUnsupported(node: SyntaxNode): void {
  walk(node, (n) => {
    const what = unsupportedNodes[n.name];
    if (what !== undefined) throw new Refusal(`unsupported TraceQL: ${what} is not supported by this Tempo API (docs/tempo.md)`);
    return true;
  });
}

/**
 * A string literal's text. A double-quoted one reads as JSON once `\'` (legal
 * in TraceQL, not in JSON) is turned into `'`; the scan takes escapes in pairs,
 * so the `\'` in `\\'` (an escaped backslash, then a quote) is left alone.
 */
function unquote(raw: string): string {
  if (raw.startsWith('`')) return raw.slice(1, -1);
  try {
    return JSON.parse(raw.replace(/\\[\\']/g, (escape) => (escape === "\\'" ? "'" : escape))) as string;
  } catch {
    throw new Refusal(`invalid TraceQL query: bad string literal ${raw}`);
  }
}

function durationNs(raw: string): bigint {
  // The same exact parser as the legacy search's minDuration/maxDuration (tempo-params.ts).
  const ns = parseGoDuration(raw);
  if (ns === undefined) throw new Refusal(`invalid TraceQL query: bad duration ${JSON.stringify(raw)}`);
  if (ns > maxDurationNs)
    throw new Refusal(`invalid TraceQL query: the duration ${raw.slice(0, 100)} is longer than the longest duration (${maxDurationNs} ns, about 292 years)`);
  return ns;
}

/** An integer literal; Tenantry compares integers as exact doubles, so it reads those of up to 2^53 − 1 in magnitude (Tempo: int64). */
function integer(raw: string): number {
  const n = Number(raw);
  if (!Number.isSafeInteger(n))
    throw new Refusal(`invalid TraceQL query: the integer ${raw.slice(0, 100)} is out of range (at most ${Number.MAX_SAFE_INTEGER} in magnitude)`);
  return n;
}

/** A float literal; one that overflows a double is refused, as Go's ParseFloat refuses it. */
function float(raw: string): number {
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Refusal(`invalid TraceQL query: the number ${raw.slice(0, 100)} is out of range (a 64-bit float)`);
  return n;
}

function staticValue(text: string, node: SyntaxNode): Value {
  const inner = node.firstChild;
  const raw = text.slice(node.from, node.to).trim();
  if (inner === null) {
    if (raw === 'true' || raw === 'false') return { type: 'bool', value: raw === 'true' };
    if (raw === 'nil') return { type: 'nil' };
    if (keywords.has(raw)) return { type: 'keyword', value: raw };
    throw new Refusal(`invalid TraceQL query: unknown value ${JSON.stringify(raw)}`);
  }
  const innerRaw = text.slice(inner.from, inner.to);
  switch (inner.name) {
    case 'String':
      return { type: 'string', value: unquote(innerRaw) };
    case 'Integer':
      return { type: 'int', value: integer(innerRaw) };
    case 'Float':
      return { type: 'float', value: float(innerRaw) };
    case 'Duration':
      return { type: 'duration', ns: durationNs(innerRaw) };
    default:
      throw new Refusal(`unsupported TraceQL: the value ${JSON.stringify(innerRaw)} is not supported`);
  }
}

function field(text: string, node: SyntaxNode): Field {
  const raw = text.slice(node.from, node.to).trim();
  if (node.name === 'IntrinsicField') {
    const name = intrinsicNames[raw];
    if (name === undefined) throw new Refusal(`unsupported TraceQL: the intrinsic "${raw}" is not supported by this Tempo API (docs/tempo.md)`);
    return { kind: 'intrinsic', name };
  }
  const parts = children(node);
  const identifier = parts.find((p) => p.name === 'Identifier');
  if (identifier === undefined) throw new Refusal(`invalid TraceQL query: attribute without a name at ${position(text, node.from)}`);
  let name = text.slice(identifier.from, identifier.to);
  if (name.startsWith('"') && name.endsWith('"')) name = unquote(name);
  const scope = parts.some((p) => p.name === 'Span') ? 'span' : parts.some((p) => p.name === 'Resource') ? 'resource' : 'any';
  return { kind: 'attribute', scope, name };
}

const compareOps = new Set<string>(['=', '!=', '>', '>=', '<', '<=', '=~', '!~']);

function condition(text: string, node: SyntaxNode): Condition {
  const parts = children(node);
  if (node.name === 'FieldExpression' && parts.length === 1 && parts[0] !== undefined) {
    const only = parts[0];
    if (only.name === 'FieldExpression') return condition(text, only);
    if (only.name === 'Static') {
      const v = staticValue(text, only);
      if (v.type === 'bool' && v.value) return { kind: 'true' };
    }
    throw new Refusal(
      `unsupported TraceQL: a bare ${JSON.stringify(text.slice(node.from, node.to).trim())} is not a condition this API runs; compare it (e.g. span.x = "v")`,
    );
  }
  const [left, op, right] = parts;
  if (parts.length !== 3 || left === undefined || op === undefined || right === undefined) {
    throw new Refusal(`unsupported TraceQL: ${JSON.stringify(text.slice(node.from, node.to).trim())} is not supported (docs/tempo.md)`);
  }
  if (op.name === 'And' || op.name === 'Or') return { kind: op.name === 'And' ? 'and' : 'or', left: condition(text, left), right: condition(text, right) };
  const opText = text.slice(op.from, op.to);
  if (op.name !== 'FieldOp' || !compareOps.has(opText))
    throw new Refusal(`unsupported TraceQL: the operator ${JSON.stringify(opText)} is not supported (docs/tempo.md)`);
  const fieldNode = left.firstChild;
  const valueNode = right.firstChild;
  if (fieldNode === null || valueNode === null || !['IntrinsicField', 'AttributeField'].includes(fieldNode.name) || valueNode.name !== 'Static') {
    throw new Refusal(
      `unsupported TraceQL: ${JSON.stringify(text.slice(node.from, node.to).trim())}: only a field compared with a value is supported (docs/tempo.md)`,
    );
  }
  return { kind: 'compare', field: field(text, fieldNode), op: opText as CompareOp, value: staticValue(text, valueNode) };
}

function spansetFilter(text: string, node: SyntaxNode): Spansets {
  const expression = node.getChild('FieldExpression');
  return { kind: 'filter', condition: expression === null ? { kind: 'true' } : condition(text, expression) };
}

interface Pipeline {
  spansets?: Spansets;
  select: Field[];
}

function pipeline(text: string, node: SyntaxNode, into: Pipeline): void {
  const parts = children(node);
  if (node.name === 'SpansetPipelineExpression' || node.name === 'WrappedSpansetPipeline') {
    const [left, op, right] = parts;
    if (parts.length === 1 && left !== undefined) {
      pipeline(text, left, into);
      return;
    }
    if (parts.length === 2 && left !== undefined && op !== undefined) {
      // The grammar leaves some operators between spansets (~, !~ ...) unnamed: name them by their text.
      throw new Refusal(
        `unsupported TraceQL: the structural operator ${JSON.stringify(text.slice(left.to, op.from).trim())} is not supported by this Tempo API (docs/tempo.md)`,
      );
    }
    if (left === undefined || op === undefined || right === undefined)
      throw new Refusal(`unsupported TraceQL: ${JSON.stringify(text.slice(node.from, node.to))}`);
    if (op.name === 'Pipe') {
      pipeline(text, left, into);
      pipeline(text, right, into);
      return;
    }
    if (op.name !== 'And' && op.name !== 'Or')
      throw new Refusal(`unsupported TraceQL: ${unsupportedNodes[op.name] ?? op.name} is not supported by this Tempo API (docs/tempo.md)`);
    const a: Pipeline = { select: into.select };
    const b: Pipeline = { select: into.select };
    pipeline(text, left, a);
    pipeline(text, right, b);
    if (a.spansets === undefined || b.spansets === undefined) throw new Refusal('unsupported TraceQL: && and || join spanset filters only');
    into.spansets = { kind: op.name === 'And' ? 'and' : 'or', left: a.spansets, right: b.spansets };
    return;
  }
  if (node.name === 'SpansetPipeline') {
    for (const p of parts) pipeline(text, p, into);
    return;
  }
  if (node.name === 'SpansetFilter' || node.name === 'SpansetExpression') {
    if (into.spansets !== undefined) throw new Refusal('unsupported TraceQL: a spanset filter after a pipe is not supported (docs/tempo.md)');
    into.spansets = node.name === 'SpansetFilter' ? spansetFilter(text, node) : spansets(text, node);
    return;
  }
  if (node.name === 'SelectOperation') {
    const args = node.getChild('SelectArgs');
    if (args !== null)
      walk(args, (n) => {
        if (n.name === 'IntrinsicField' || n.name === 'AttributeField') {
          into.select.push(field(text, n));
          return false;
        }
        return true;
      });
    return;
  }
  throw new Refusal(
    `unsupported TraceQL: ${unsupportedNodes[node.name] ?? JSON.stringify(text.slice(node.from, node.to))} is not supported by this Tempo API (docs/tempo.md)`,
  );
}

function spansets(text: string, node: SyntaxNode): Spansets {
  const into: Pipeline = { select: [] };
  for (const c of children(node)) pipeline(text, c, into);
  if (into.spansets === undefined) throw new Refusal('invalid TraceQL query: no spanset filter');
  return into.spansets;
}

/** The deepest nesting of parentheses and braces outside string literals. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === '`') quote = c;
    else if (c === '(' || c === '{') deepest = Math.max(deepest, ++depth);
    else if (c === ')' || c === '}') depth--;
  }
  return deepest;
}

/** How many comparisons a condition holds. */
const comparisonCount = (c: Condition): number => (c.kind === 'compare' ? 1 : c.kind === 'true' ? 0 : comparisonCount(c.left) + comparisonCount(c.right));

/** The spanset filters of an expression. */
const filterConditions = (s: Spansets): Condition[] => (s.kind === 'filter' ? [s.condition] : [...filterConditions(s.left), ...filterConditions(s.right)]);

/** Why a query is too large to run, or undefined. */
function sizeProblem(query: TraceQuery): string | undefined {
  const filters = filterConditions(query.spansets);
  if (filters.length > maxSpansets) return `invalid TraceQL query: ${filters.length} spanset filters, more than ${maxSpansets}`;
  const comparisons = filters.reduce((n, c) => n + comparisonCount(c), 0) + query.select.length;
  if (comparisons > maxComparisons) return `invalid TraceQL query: ${comparisons} conditions and selected fields, more than ${maxComparisons}`;
  return undefined;
}

/** Parses TraceQL; a syntax error, an unsupported construct or a query past its bounds is a message for a 400. */
export function parseTraceQl(text: string): Result<TraceQuery, TraceQlError> {
  if (text.length > maxQueryLength) return fail({ message: `invalid TraceQL query: the query is ${text.length} characters long, more than ${maxQueryLength}` });
  const depth = nestingDepth(text);
  if (depth > maxNesting) return fail({ message: `invalid TraceQL query: parentheses and braces nested ${depth} deep, more than ${maxNesting}` });
  const top = parser.parse(text).topNode;
  const syntax = firstError(text, top);
  if (syntax !== undefined) return fail({ message: syntax });
  try {
    refuseUnsupported(top);
    const into: Pipeline = { select: [] };
    for (const c of children(top)) pipeline(text, c, into);
    if (into.spansets === undefined)
      return fail({ message: 'invalid TraceQL query: a query needs a spanset filter such as { } or { span.http.method = "GET" }' });
    const query = { spansets: into.spansets, select: into.select };
    const tooLarge = sizeProblem(query);
    return tooLarge === undefined ? ok(query) : fail({ message: tooLarge });
  } catch (error) {
    if (error instanceof Refusal) return fail({ message: error.message });
    throw error;
  }
}
