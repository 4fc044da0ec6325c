/**
 * Ownership of everything that must end with its owner (VS Code's DisposableStore): an owner adds its
 * timers, listeners and sub-objects to one store and disposes the store once, instead of open-coding a
 * `clearTimeout` per field and forgetting one. Disposing is idempotent; anything added to a store that is
 * already disposed is disposed at once (and, in a dev or test run, warned about), so a late callback cannot
 * re-arm a timer behind its owner's back.
 *
 * No Node, no DOM: timers come from an injected TimerSource, or from whatever `setTimeout` the global
 * object has when the timer is armed (so fake timers installed later still apply).
 */

export interface IDisposable {
  dispose(): void;
}

/** The timer functions a store arms its timers with. Handles are opaque to the store. */
export interface TimerSource {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Optional: let the timer not keep the process alive (Node's `unref`). Sources without it ignore the wish. */
  unref?(handle: unknown): void;
}

/** A timer owned by a store. Disposing it clears it; a fired or disposed timer is no longer in the store. */
export interface TimerHandle extends IDisposable {
  /** True until the timer has fired (a timeout) or was disposed. */
  readonly pending: boolean;
}

export interface TimerOptions {
  /** Do not keep the process alive for this timer (where the source supports it). */
  unref?: boolean;
}

interface GlobalTimerFunctions {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The global object's timers, looked up at each call (not captured at load). */
export const globalTimers: TimerSource = {
  setTimeout: (fn, ms) => (globalThis as unknown as GlobalTimerFunctions).setTimeout(fn, ms),
  clearTimeout: (handle) => (globalThis as unknown as GlobalTimerFunctions).clearTimeout(handle),
  unref: (handle) => {
    const h = handle as { unref?: unknown } | null;
    if (h && typeof h === 'object' && typeof h.unref === 'function') (h.unref as () => void).call(h);
  },
};

/** A disposable that runs `fn` once, on its first dispose. */
export function toDisposable(fn: () => void): IDisposable {
  let done = false;
  return {
    dispose: () => {
      if (done) return;
      done = true;
      fn();
    },
  };
}

type Warn = (message: string) => void;

/** Nobody by default: a late addition is disposed at once whoever hears of it. The test suite's set-up
 *  (test/setup/lateAdds.ts) has every worker warn on the console, where a test's leak shows. */
let warnLate: Warn | null = null;

/**
 * Who hears about additions to a store that is already disposed (a late callback that would have leaked):
 * nobody unless set. Returns the previous setting, so a test can restore it.
 */
export function setLateAddWarning(warn: Warn | null): Warn | null {
  const prev = warnLate;
  warnLate = warn;
  return prev;
}

export class DisposableStore implements IDisposable {
  private readonly items = new Set<IDisposable>();
  private disposed = false;

  constructor(private readonly timers: TimerSource = globalTimers) {}

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** What the store still holds: disposables added and timers not yet fired or disposed. */
  get size(): number {
    return this.items.size;
  }

  /** Own `d`: it is disposed with the store. Added to a disposed store, it is disposed now. */
  add<T extends IDisposable>(d: T): T {
    if ((d as unknown) === this) throw new Error('a DisposableStore cannot own itself');
    if (this.disposed) {
      this.late('a disposable');
      d.dispose();
      return d;
    }
    this.items.add(d);
    return d;
  }

  /** Own an unsubscribe function (an `onX(...)` that returns one): it runs once, with the store. */
  addListener(unsubscribe: () => void): IDisposable {
    return this.add(toDisposable(unsubscribe));
  }

  /** Dispose `d` now and stop owning it. */
  delete(d: IDisposable): void {
    if (this.items.delete(d)) d.dispose();
  }

  /** Run `fn` once after `ms`, unless the handle or the store is disposed first. */
  timeout(fn: () => void, ms: number, options: TimerOptions = {}): TimerHandle {
    return this.timer(fn, ms, false, options);
  }

  /** Run `fn` every `ms` until the handle or the store is disposed (re-armed before each run). */
  interval(fn: () => void, ms: number, options: TimerOptions = {}): TimerHandle {
    return this.timer(fn, ms, true, options);
  }

  /** Dispose everything owned, once, in the order it was added. Errors are thrown after all were disposed. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const items = [...this.items];
    this.items.clear();
    const errors: unknown[] = [];
    for (const d of items) {
      try {
        d.dispose();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} errors while disposing`);
  }

  private timer(fn: () => void, ms: number, repeat: boolean, options: TimerOptions): TimerHandle {
    let pending = !this.disposed;
    let handle: unknown;
    const t: TimerHandle = {
      get pending() {
        return pending;
      },
      dispose: () => {
        if (!pending) return;
        pending = false;
        this.items.delete(t);
        this.timers.clearTimeout(handle);
      },
    };
    if (!pending) {
      this.late('a timer');
      return t;
    }
    const arm = () => {
      handle = this.timers.setTimeout(() => {
        // A source that cannot really clear (a test's list of callbacks) still must not run a dead timer.
        if (!pending) return;
        if (repeat) arm();
        else {
          pending = false;
          this.items.delete(t);
        }
        fn();
      }, ms);
      if (options.unref) this.timers.unref?.(handle);
    };
    arm();
    this.items.add(t);
    return t;
  }

  private late(what: string): void {
    warnLate?.(`forkbench: ${what} was added to a DisposableStore that is already disposed; it was disposed at once`);
  }
}
