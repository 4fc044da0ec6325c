import { globalTimers, type TimerSource } from '../lifecycle/disposableStore.js';

/**
 * The client side of a request/answer link, whatever carries it: the CLI's JSON-RPC to the agents' socket
 * (src-main/cli/rpcClient.ts), the board host's link to its pty host (src-main/ptyhost/ptyHostClient.ts)
 * and the page's WebSocket to serve (src-renderer/transport/wsTransport.ts). It numbers requests, keeps who
 * waits on each, gives up on one after its bound, and fails every one still waiting when the link goes.
 * What a request and an answer look like on the wire, and what error a refusal becomes, stay with each
 * client: they differ, and each is part of that client's contract. No Node, no DOM: the page uses it.
 */

export interface RequestTableOptions<Tag> {
  /** Where timeouts are armed (tests pass timers they fire by hand). */
  timers?: TimerSource;
  /** How long a request waits for its answer unless it says otherwise; null: for ever (the page's calls,
   *  which include a merge, and which fail anyway when the connection goes). */
  timeoutMs: number | null;
  /** The error a request gets when it is given up on, from its tag (say, the method) and the bound. */
  timedOut?(tag: Tag, ms: number): Error;
  /** Remember requests given up on, so a late answer to one is told from an answer to nothing (`late`). */
  keepAbandoned?: boolean;
}

/** A request taken off the table by its answer: settle it with the value or the error its caller gets. */
export interface Settle<Tag> {
  readonly tag: Tag;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Waiting<Tag> extends Settle<Tag> {
  readonly timer: unknown;
}

export class RequestTable<Tag> {
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting<Tag>>();
  private readonly abandoned = new Map<number, Tag>();
  private readonly timers: TimerSource;

  constructor(private readonly o: RequestTableOptions<Tag>) {
    this.timers = o.timers ?? globalTimers;
  }

  /** How many requests wait for an answer. */
  get size(): number {
    return this.waiting.size;
  }

  /**
   * One request: `send` puts it on the wire under its id (a throw fails the request with what was thrown),
   * and its answer's value goes through `then` as it is settled, in the reader's own turn, before whatever
   * the reader handles next: a pty host's new pane must exist before its first output is handed out.
   */
  request<T>(tag: Tag, send: (id: number) => void, then: (value: unknown) => T, timeoutMs: number | null = this.o.timeoutMs): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer =
        timeoutMs === null
          ? null
          : this.timers.setTimeout(() => {
              if (!this.waiting.delete(id)) return;
              if (this.o.keepAbandoned) this.abandoned.set(id, tag);
              reject(this.o.timedOut?.(tag, timeoutMs) ?? new Error(`no answer within ${timeoutMs} ms`));
            }, timeoutMs);
      this.waiting.set(id, {
        tag,
        timer,
        resolve: (value) => {
          try {
            resolve(then(value));
          } catch (err) {
            reject(err as Error);
          }
        },
        reject,
      });
      try {
        send(id);
      } catch (err) {
        this.take(id);
        reject(err as Error);
      }
    });
  }

  /** The request `id`, answered: no longer waiting and its timer cleared, for the caller to settle.
   *  Undefined when nothing waits on that id (given up on, answered already, or never asked). */
  take(id: number): Settle<Tag> | undefined {
    const w = this.waiting.get(id);
    if (!w) return undefined;
    this.waiting.delete(id);
    if (w.timer !== null) this.timers.clearTimeout(w.timer);
    return w;
  }

  /** An answer to nothing waiting: the tag of the request it answers if that one was given up on (once),
   *  else undefined (never asked, or answered twice). Only with `keepAbandoned`. */
  late(id: number): Tag | undefined {
    const tag = this.abandoned.get(id);
    this.abandoned.delete(id);
    return tag;
  }

  /** Every request still waiting fails with `error` (the link went, or said something for no one in
   *  particular); the table stays usable for requests made after. */
  failAll(error: Error): void {
    const all = [...this.waiting.values()];
    this.waiting.clear();
    this.abandoned.clear();
    for (const w of all) {
      if (w.timer !== null) this.timers.clearTimeout(w.timer);
      w.reject(error);
    }
  }
}
