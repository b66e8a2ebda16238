// Waiting requests in deficit round robin over flows (tenants): each flow
// with something waiting gets a quantum of rows per round, so a tenant
// sending ten times more rows does not make another one wait behind its
// requests, and a large request is still served once its flow has saved
// up enough quantum (Shreedhar and Varghese's DRR, as network schedulers
// and Loki's per-tenant query queues do it).
//
// Not one queue with the tree's other fair schedulers, on purpose: here a
// request's cost (its rows) is known before it is served, so deficit round
// robin serves it exactly; the decode gate (gateway/limits/decode-gate.ts)
// and the store gate (src/clickhouse/store-gate.ts) learn a cost only after
// the work (decoded bytes, store time), so they order flows by what each was
// served (start-time fair queuing), and the store gate also pauses and
// preempts. The operator's key queue (operator/reconcile/key-queue.ts) is
// not a fair scheduler at all: it serialises and coalesces work per key.

interface Flow<T> {
  readonly items: T[];
  /** Rows this flow may still take in the current round. */
  deficit: number;
}

export class FairQueue<T extends { readonly rows: number }> {
  readonly #quantum: number;
  readonly #flows = new Map<string, Flow<T>>();
  /** Flows with items, in service order; #cursor is the one being served. */
  readonly #ring: string[] = [];
  #cursor = 0;
  #size = 0;

  constructor(quantumRows: number) {
    this.#quantum = quantumRows;
  }

  /** Items waiting, all flows together. */
  get size(): number {
    return this.#size;
  }

  push(flow: string, item: T): void {
    let f = this.#flows.get(flow);
    if (f === undefined) {
      f = { items: [], deficit: 0 };
      this.#flows.set(flow, f);
      this.#ring.push(flow);
    }
    f.items.push(item);
    this.#size++;
  }

  /** Whether `flow` has something waiting. */
  has(flow: string): boolean {
    return this.#flows.has(flow);
  }

  /** Each waiting flow with its first item, in ring order (for a scheduler that may serve a flow out of turn). */
  heads(): [string, T][] {
    const heads: [string, T][] = [];
    for (const name of this.#ring) {
      const head = this.#flows.get(name)?.items[0];
      if (head !== undefined) heads.push([name, head]);
    }
    return heads;
  }

  /** Removes an item wherever it is (it gave up waiting, or was served out of turn). */
  remove(flow: string, item: T): void {
    const f = this.#flows.get(flow);
    const at = f?.items.indexOf(item) ?? -1;
    if (f === undefined || at < 0) return;
    f.items.splice(at, 1);
    this.#size--;
    if (f.items.length === 0) this.#drop(flow);
  }

  /** The item to serve next: the current flow's first, once its deficit covers it; moves the round on as needed. */
  peek(): T | undefined {
    if (this.#size === 0) return undefined;
    for (;;) {
      const name = this.#ring[this.#cursor] ?? '';
      const f = this.#flows.get(name);
      const head = f?.items[0];
      if (f === undefined || head === undefined) throw new Error('bug: a flow in the ring has nothing waiting');
      if (f.deficit >= head.rows) return head;
      f.deficit += this.#quantum;
      if (f.deficit >= head.rows) return head;
      this.#cursor = (this.#cursor + 1) % this.#ring.length;
    }
  }

  /** Takes the item peek() answered. */
  take(): T | undefined {
    const head = this.peek();
    if (head === undefined) return undefined;
    const name = this.#ring[this.#cursor] ?? '';
    const f = this.#flows.get(name);
    if (f === undefined) return undefined;
    f.items.shift();
    f.deficit -= head.rows;
    this.#size--;
    if (f.items.length === 0) this.#drop(name);
    else if (f.deficit < (f.items[0]?.rows ?? 0)) this.#cursor = (this.#cursor + 1) % this.#ring.length; // its turn is used up
    return head;
  }

  #drop(flow: string): void {
    this.#flows.delete(flow);
    const at = this.#ring.indexOf(flow);
    this.#ring.splice(at, 1);
    if (at < this.#cursor) this.#cursor--;
    if (this.#cursor >= this.#ring.length) this.#cursor = 0;
  }
}
