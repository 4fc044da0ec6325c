/**
 * A binary min-heap of keys with priorities, where a key's priority can change in place. The board keeps
 * one for lease deadlines (so one timer, on the earliest deadline, serves every claim) and one for open
 * task numbers (so "claim the next open task" is O(log n) on a 10k-task board). One entry per key: a
 * renewal moves the key instead of leaving a stale entry behind. Entries carry their own position, so a
 * sift costs field writes, not map updates (a renewal sifts a key from the top to the bottom every time).
 */
interface Entry<K> {
  readonly key: K;
  priority: number;
  pos: number;
}

export class IndexedHeap<K> {
  private readonly heap: Entry<K>[] = [];
  private readonly byKey = new Map<K, Entry<K>>();

  get size(): number {
    return this.heap.length;
  }

  has(key: K): boolean {
    return this.byKey.has(key);
  }

  peek(): { key: K; priority: number } | undefined {
    return this.heap[0];
  }

  /** Insert, or move an existing key to a new priority. */
  set(key: K, priority: number): void {
    const e = this.byKey.get(key);
    if (e === undefined) {
      const entry: Entry<K> = { key, priority, pos: this.heap.length };
      this.heap.push(entry);
      this.byKey.set(key, entry);
      this.up(entry);
      return;
    }
    const old = e.priority;
    e.priority = priority;
    if (priority < old) this.up(e);
    else if (priority > old) this.down(e);
  }

  delete(key: K): boolean {
    const e = this.byKey.get(key);
    if (e === undefined) return false;
    this.byKey.delete(key);
    const last = this.heap.pop() as Entry<K>;
    if (last !== e) {
      last.pos = e.pos;
      this.heap[e.pos] = last;
      this.up(last);
      this.down(last);
    }
    return true;
  }

  pop(): { key: K; priority: number } | undefined {
    const top = this.heap[0];
    if (top) this.delete(top.key);
    return top;
  }

  private up(e: Entry<K>): void {
    const h = this.heap;
    let i = e.pos;
    while (i > 0) {
      const parentPos = (i - 1) >> 1;
      const parent = h[parentPos] as Entry<K>;
      if (parent.priority <= e.priority) break;
      h[i] = parent;
      parent.pos = i;
      i = parentPos;
    }
    h[i] = e;
    e.pos = i;
  }

  private down(e: Entry<K>): void {
    const h = this.heap;
    const n = h.length;
    let i = e.pos;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      let ci = l;
      let c = h[l] as Entry<K>;
      const r = l + 1;
      if (r < n && (h[r] as Entry<K>).priority < c.priority) {
        ci = r;
        c = h[r] as Entry<K>;
      }
      if (c.priority >= e.priority) break;
      h[i] = c;
      c.pos = i;
      i = ci;
    }
    h[i] = e;
    e.pos = i;
  }

  /** Every key, in no particular order (the heap's array order). */
  keys(): IterableIterator<K> {
    return this.byKey.keys();
  }
}
