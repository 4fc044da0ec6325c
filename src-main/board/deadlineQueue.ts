import { IndexedHeap } from './indexedHeap.js';

/**
 * Lease deadlines, earliest first, for the one timer that lapses claims.
 *
 * Nearly every deadline is `now + leaseMs` with a monotonic `now` and one lease length per Thread, so new
 * and renewed deadlines arrive in order: an insertion-ordered Map holds them as a queue where a renewal is
 * delete + append, O(1) at any board size. A deadline that would break the order (the lease was shortened,
 * or claims came back from disk) goes to a heap instead, so correctness never depends on that pattern and
 * the cost falls back to O(log n) only for those claims.
 */
interface Node {
  readonly key: string;
  deadline: number;
  prev: Node | null;
  next: Node | null;
  /** In the list now. A node stays in the map after it leaves the list, so a task claimed again reuses it:
   *  deleting and re-adding thousands of map keys per round made the map rehash, which cost more on a large
   *  board than all the list work. */
  linked: boolean;
}

export class DeadlineQueue {
  // A linked list rather than a Map's insertion order: V8 leaves deleted Map entries as holes at the front
  // until it rehashes, so "first entry" after many renewals walks over thousands of holes.
  private readonly nodes = new Map<string, Node>();
  private head: Node | null = null;
  private tail: Node | null = null;
  private readonly heap = new IndexedHeap<string>();

  private linkedCount = 0;

  get size(): number {
    return this.linkedCount + this.heap.size;
  }

  set(key: string, deadline: number): void {
    let node = this.nodes.get(key);
    if (node?.linked) this.unlink(node);
    else this.heap.delete(key);
    if (this.tail === null || deadline >= this.tail.deadline) {
      if (!node) {
        node = { key, deadline, prev: null, next: null, linked: false };
        this.nodes.set(key, node);
      }
      node.deadline = deadline;
      node.prev = this.tail;
      node.next = null;
      node.linked = true;
      this.linkedCount++;
      if (this.tail) this.tail.next = node;
      else this.head = node;
      this.tail = node;
    } else {
      this.heap.set(key, deadline);
    }
  }

  delete(key: string): void {
    const node = this.nodes.get(key);
    if (node?.linked) this.unlink(node);
    else this.heap.delete(key);
  }

  private unlink(node: Node): void {
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = node.next = null;
    node.linked = false;
    this.linkedCount--;
  }

  peek(): { key: string; priority: number } | undefined {
    const h = this.heap.peek();
    const first = this.head;
    if (first === null) return h;
    return h && h.priority < first.deadline ? h : { key: first.key, priority: first.deadline };
  }
}
