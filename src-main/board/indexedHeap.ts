/**
 * A binary min-heap of keys with priorities, where a key's priority can change in place. The board keeps
 * one for lease deadlines (so one timer, on the earliest deadline, serves every claim) and one for open
 * task numbers (so "claim the next open task" is O(log n) on a 10k-task board). One entry per key: a
 * renewal moves the key instead of leaving a stale entry behind.
 */
export class IndexedHeap<K> {
  private readonly keys: K[] = [];
  private readonly prio: number[] = [];
  private readonly pos = new Map<K, number>();

  get size(): number {
    return this.keys.length;
  }

  has(key: K): boolean {
    return this.pos.has(key);
  }

  peek(): { key: K; priority: number } | undefined {
    return this.keys.length ? { key: this.keys[0] as K, priority: this.prio[0] as number } : undefined;
  }

  /** Insert, or move an existing key to a new priority. */
  set(key: K, priority: number): void {
    const i = this.pos.get(key);
    if (i === undefined) {
      this.keys.push(key);
      this.prio.push(priority);
      this.pos.set(key, this.keys.length - 1);
      this.up(this.keys.length - 1);
      return;
    }
    const old = this.prio[i] as number;
    this.prio[i] = priority;
    if (priority < old) this.up(i);
    else if (priority > old) this.down(i);
  }

  delete(key: K): boolean {
    const i = this.pos.get(key);
    if (i === undefined) return false;
    const last = this.keys.length - 1;
    this.swap(i, last);
    this.keys.pop();
    this.prio.pop();
    this.pos.delete(key);
    if (i < this.keys.length) {
      this.up(i);
      this.down(i);
    }
    return true;
  }

  pop(): { key: K; priority: number } | undefined {
    const top = this.peek();
    if (top) this.delete(top.key);
    return top;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((this.prio[parent] as number) <= (this.prio[i] as number)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.keys.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && (this.prio[l] as number) < (this.prio[m] as number)) m = l;
      if (r < n && (this.prio[r] as number) < (this.prio[m] as number)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }

  private swap(a: number, b: number): void {
    if (a === b) return;
    const ka = this.keys[a] as K;
    const kb = this.keys[b] as K;
    this.keys[a] = kb;
    this.keys[b] = ka;
    const pa = this.prio[a] as number;
    this.prio[a] = this.prio[b] as number;
    this.prio[b] = pa;
    this.pos.set(kb, a);
    this.pos.set(ka, b);
  }
}
