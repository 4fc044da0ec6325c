import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../base/atomicWrite.js';
import { Emitter, type Disposable } from '../../src-shared/lifecycle/emitter.js';

/**
 * The events a host read from its board's store and did not apply (src-shared/board/storedEvents.ts says why
 * one is not applied): kept aside in the Thread's folder, one file, so a person can see what was skipped and
 * why, and so each is told to the person once, when it is first found, not at every start. The event's text
 * is kept too (bounded): a journal's compaction or a database's administrator may remove it from the store.
 */
export const QUARANTINE_FILE = 'quarantined-events.json';

/** An event's stored text kept here at most: board events are a few KiB (a task body up to 64 KiB); an
 *  event written past that by hand is kept by its head, enough to see what it was. */
const MAX_KEPT_BODY = 70_000;
/** Entries kept at most: a store flooded with bad events keeps the first ones, each still skipped. */
const MAX_ENTRIES = 1000;

export interface QuarantinedEvent {
  /** Its position in the board's order (a range's first, for positions missing from a shared board). */
  readonly seq: number;
  /** The kind it claims to be, or null when it names none. */
  readonly kind: string | null;
  readonly why: string;
  /** Where it was read: `journal` (the Thread's files on this host) or `database` (a shared board). */
  readonly store: 'journal' | 'database';
  /** Its text as stored, cut at MAX_KEPT_BODY; null where there was none (a position missing). */
  readonly body: string | null;
  /** When this host set it aside (wall clock ms). */
  readonly at: number;
}

const EntrySchema = z.object({
  seq: z.number().int().nonnegative(),
  kind: z.string().nullable(),
  why: z.string(),
  store: z.enum(['journal', 'database']),
  body: z.string().nullable(),
  at: z.number(),
});
const FileSchema = z.object({ version: z.literal(1), events: z.array(EntrySchema) });

export class Quarantine {
  private readonly path: string;
  private readonly entries: QuarantinedEvent[];
  private readonly fresh: QuarantinedEvent[] = [];
  private readonly added = new Emitter<QuarantinedEvent>();

  constructor(
    dir: string,
    private readonly warn: (message: string) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.path = join(dir, QUARANTINE_FILE);
    this.entries = this.read();
  }

  /**
   * Set an event aside. Returns whether it is news: one this host had not set aside before (it is then kept,
   * told to the listeners, and listed by `found` until a person was shown it).
   */
  add(q: Omit<QuarantinedEvent, 'at'>): boolean {
    if (this.entries.some((e) => e.seq === q.seq && e.store === q.store)) return false;
    const entry: QuarantinedEvent = { ...q, body: q.body === null ? null : q.body.slice(0, MAX_KEPT_BODY), at: this.now() };
    this.warn(`forkbench: ${describeQuarantined(entry)}; kept in ${this.path}`);
    if (this.entries.length < MAX_ENTRIES) {
      this.entries.push(entry);
      this.write();
    }
    this.fresh.push(entry);
    this.added.fire(entry);
    return true;
  }

  /** The events set aside for the first time since this board opened: each is told to a person once. */
  found(): readonly QuarantinedEvent[] {
    return this.fresh;
  }

  /** Every event this host ever set aside on this board, oldest first. */
  all(): readonly QuarantinedEvent[] {
    return this.entries;
  }

  onAdded(fn: (q: QuarantinedEvent) => void): Disposable {
    return this.added.event(fn);
  }

  dispose(): void {
    this.added.dispose();
  }

  private read(): QuarantinedEvent[] {
    let text: string;
    try {
      text = fs.readFileSync(this.path, 'utf8');
    } catch {
      return [];
    }
    try {
      return FileSchema.parse(JSON.parse(text)).events;
    } catch {
      // Damaged: the events it listed are found again as they are read (and told again), which loses nothing.
      this.warn(`forkbench: the list of events set aside (${this.path}) is damaged; it is started again`);
      return [];
    }
  }

  private write(): void {
    try {
      fs.mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      writeFileAtomic(this.path, `${JSON.stringify({ version: 1, events: this.entries })}\n`, { mode: 0o600 });
    } catch (err) {
      // Not kept: the event is still skipped (it is checked at every read), and will be told again next time.
      this.warn(`forkbench: could not keep the list of events set aside in ${this.path}: ${(err as Error).message}`);
    }
  }
}

/** One line for a log or a notice: which event, of what kind, and why it was not applied. */
export function describeQuarantined(q: Pick<QuarantinedEvent, 'seq' | 'kind' | 'why' | 'store'>): string {
  const where = q.store === 'journal' ? "the board's journal" : "the shared board's database";
  return `event #${q.seq}${q.kind ? ` (${q.kind})` : ''} in ${where} was set aside, not applied: ${q.why}`;
}
