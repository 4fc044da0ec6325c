/**
 * Runs tasks one after another, in the order they were queued: each starts once the one before it has
 * settled. A task that fails rejects its own promise only; the tasks after it still run.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Queue `task`; the promise settles as the task does. */
  run<T>(task: () => T | Promise<T>): Promise<T> {
    const next = this.tail.then(task);
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** Resolves once everything queued so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
