// Collects query parameters while a statement is built: every user value is
// bound through here and appears in SQL only as a `{pN:Type}` placeholder.

export type ParamType = 'String' | 'Int64' | 'UInt64' | 'Float64' | 'Date' | 'Array(String)' | 'UInt8';

export class SqlParams {
  readonly #values: Record<string, unknown> = {};
  #next = 0;

  /** Binds a value and returns its placeholder. */
  bind(value: unknown, type: ParamType): string {
    const name = `p${this.#next++}`;
    this.#values[name] = value;
    return `{${name}:${type}}`;
  }

  /** The bound values, for the client's `query_params`. */
  get values(): Readonly<Record<string, unknown>> {
    return this.#values;
  }
}
