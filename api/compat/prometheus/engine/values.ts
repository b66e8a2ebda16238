// The values the PromQL engine computes with, step by step as Prometheus'
// engine does: an instant vector per step, the points of a series inside a
// range window, scalars and strings. Timestamps are Unix milliseconds.
import type { FloatHistogram, LabelMatcher, Labels } from './sample-source.ts';

/** One element of an instant vector: a series' labels and its value at `t`, a float `f` or a native histogram `h`. */
export interface VectorElement {
  readonly labels: Labels;
  readonly t: number;
  readonly f: number;
  readonly h?: FloatHistogram;
  /**
   * Prometheus 3 keeps `__name__` in `labels` while a function that drops it
   * has only marked it (delayed name removal); the engine removes it when the
   * element leaves the function or operator chain.
   */
  readonly dropName?: boolean;
}

export type Vector = readonly VectorElement[];

/** A float point of a series. */
export interface FPoint {
  readonly t: number;
  readonly f: number;
}

/** A native-histogram point of a series. */
export interface HPoint {
  readonly t: number;
  readonly h: FloatHistogram;
}

/**
 * The points of one series inside one step's range window (t - range, t]
 * (Prometheus 3: left-open), staleness markers removed, ascending by time.
 */
export interface WindowSeries {
  readonly labels: Labels;
  readonly floats: readonly FPoint[];
  readonly histograms: readonly HPoint[];
  /** Set when the series comes from a subquery whose elements were marked `dropName`: last_over_time keeps the mark. */
  readonly dropName?: boolean;
}

/** A range vector at one step: each selected series' points in the window. */
export type WindowMatrix = readonly WindowSeries[];

/** A series of a range query's answer (or an instant query of a range selector). */
export interface ResultSeries {
  readonly labels: Labels;
  readonly floats: readonly FPoint[];
  readonly histograms: readonly HPoint[];
}

/** What a query answers, in Prometheus' four result types. */
export type QueryValue =
  | { readonly resultType: 'vector'; readonly result: Vector }
  | { readonly resultType: 'matrix'; readonly result: readonly ResultSeries[] }
  | { readonly resultType: 'scalar'; readonly result: FPoint }
  | { readonly resultType: 'string'; readonly result: { readonly t: number; readonly s: string } };

/** Where one step's function call stands: the evaluation time and, for range functions, the window. */
export interface CallContext {
  /**
   * The step's evaluation time, as Prometheus' enh.Ts: NOT moved by the
   * selector's offset or @ (predict_linear regresses around it, time() and
   * the date functions read it); the window below carries offset and @.
   */
  readonly t: number;
  /** The range function's window (t - range, t]: its exclusive start and inclusive end. */
  readonly windowStart: number;
  readonly windowEnd: number;
  /**
   * The label matchers of the call's first argument when it is a vector or
   * matrix selector (not a subquery or any other expression): absent() and
   * absent_over_time() build their answer's labels from its `=` matchers.
   */
  readonly selectorMatchers?: readonly LabelMatcher[];
  /** Prometheus' delayed name removal is on: the histogram functions then name the metric in their annotations. */
  readonly delayedNameRemoval?: boolean;
}
