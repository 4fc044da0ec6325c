import type { IDisposable } from './disposableStore.js';

/** What every owner of a timer or listener hands back: the shared lifecycle's IDisposable. */
export type Disposable = IDisposable;

/** A typed event with VS Code's shape: subscribing returns the Disposable that unsubscribes. */
export class Emitter<T> implements Disposable {
  private listeners = new Set<(value: T) => void>();

  readonly event = (listener: (value: T) => void): Disposable => {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  };

  get hasListeners(): boolean {
    return this.listeners.size > 0;
  }

  fire(value: T): void {
    // A copy, so a listener that unsubscribes (or subscribes another) while we iterate changes nothing mid-fire.
    for (const listener of [...this.listeners]) listener(value);
  }

  dispose(): void {
    this.listeners.clear();
  }
}
