interface Entry {
  readonly due: number;
  readonly key: string;
  /** The key's schedule this entry was made for; an older one is skipped (lazy deletion). */
  readonly generation: number;
}

/**
 * Keys by due time, earliest first: a binary heap, so that each of 10,000 webhooks is rescheduled
 * in O(log n). A key rescheduled or removed leaves its old entry behind, skipped when it surfaces.
 */
export class DueQueue {
  private readonly heap: Entry[] = [];
  private readonly generations = new Map<string, number>();
  /** Unique over the queue's life, so an entry left by a removed key never matches its next schedule. */
  private counter = 0;

  get size(): number {
    return this.generations.size;
  }

  has(key: string): boolean {
    return this.generations.has(key);
  }

  /** Schedules `key` at `due`, replacing any earlier schedule of it. */
  schedule(key: string, due: number): void {
    const generation = ++this.counter;
    this.generations.set(key, generation);
    this.push({ due, key, generation });
  }

  /** Unschedules `key`. */
  remove(key: string): void {
    this.generations.delete(key);
  }

  /** The earliest due time, or undefined when nothing is scheduled. */
  nextDue(): number | undefined {
    this.dropStale();
    return this.heap[0]?.due;
  }

  /** Takes the earliest key due at `now` or before; it is no longer scheduled. */
  takeDue(now: number): string | undefined {
    this.dropStale();
    const top = this.heap[0];
    if (top === undefined || top.due > now) return undefined;
    this.pop();
    this.generations.delete(top.key);
    return top.key;
  }

  private dropStale(): void {
    for (let top = this.heap[0]; top !== undefined && this.generations.get(top.key) !== top.generation; top = this.heap[0]) this.pop();
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.due <= entry.due) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]!.due < heap[left]!.due ? right : left;
      if (heap[child]!.due >= last.due) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
  }
}
