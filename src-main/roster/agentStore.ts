/**
 * The Thread's agents as they outlive their processes and the host: who each was (id, profile, name), where
 * it ran, and the id of its CLI's conversation, so that its tab can still offer "Resume conversation" after
 * the process is gone or the host restarted. One JSON file in the Thread's data folder, replaced atomically
 * and readable by the owner only (a record names a conversation, whose files hold the person's work).
 *
 * A file that cannot be read is moved aside with a clear message and the Thread starts with no agents to
 * resume; the board lives in its own files and is never touched.
 */
import * as fs from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { PROFILE_IDS } from '../../src-shared/agents/profileIds.js';
import { Limits } from '../../src-shared/board/limits.js';
import { AGENT_ENDINGS } from '../../src-shared/protocol/windowApi.js';
import { TerminalSize } from '../../src-shared/terminal/terminalSize.js';
import { writeFileAtomic } from '../base/atomicWrite.js';
import { readCheckedJson } from '../base/checkedJsonFile.js';

export const STORE_VERSION = 1;
/** Owner-only: the file, and the folder it sits in. */
export const STORE_FILE_MODE = 0o600;
const STORE_DIR_MODE = 0o700;
/** A task id is `T-` and at most 9 digits (TaskIdSchema). */
const MAX_TASK_ID_CHARS = 11;
/** Held tasks kept per agent: far more than an agent holds (each claim is a lease it renews), and a bound on
 *  what a damaged or hand-edited file can make the window list. */
const MAX_HELD_KEPT = 100;
/** `shared:` and a board's name (at most 200 characters of two UTF-16 units each, connection.ts), or `local:`
 *  and a thread id: far under this. */
const MAX_BOARD_CHARS = 512;

const StoredAgentSchema = z
  .object({
    id: z.string().min(1).max(200),
    profile: z.enum(PROFILE_IDS),
    name: z.string().min(1).max(200),
    cwd: z.string().min(1).max(4096),
    /** A custom pane's command line, run again as it was. */
    command: z.string().max(4096).optional(),
    /** The CLI's own conversation id (Aider: its history file); null until known. */
    sessionId: z.string().min(1).max(4096).nullable(),
    /** 'running' while a process of the agent lives: the Roster writes each move of the agent's life, and at
     *  open keeps it only for an agent its pty host kept. */
    state: z.enum(['running', 'exited']),
    /** Date.now() of the agent's first start: its CLI's sessions from before are not its own. */
    startedAt: z.number().int().min(0),
    cols: z.number().int().min(TerminalSize.minCols).max(TerminalSize.maxCols),
    rows: z.number().int().min(TerminalSize.minRows).max(TerminalSize.maxRows),
    /** How it ended and what it held then, for the next run's list of ended agents; absent while it runs. */
    ended: z
      .object({
        how: z.enum(AGENT_ENDINGS),
        held: z.array(z.string().max(MAX_TASK_ID_CHARS)).max(MAX_HELD_KEPT),
        /** The held tasks' titles on the board they were on, as it ended. */
        titles: z
          .record(z.string().max(MAX_TASK_ID_CHARS), z.string().max(Limits.maxTitleChars))
          .refine((t) => Object.keys(t).length <= MAX_HELD_KEPT, `at most ${MAX_HELD_KEPT} titles`)
          .optional(),
        /** The board they were held on (heldElsewhere.ts: `local:THREAD` or `shared:NAME`): after a move
         *  onto another board the same ids name other tasks. Absent in records from before. */
        board: z.string().max(MAX_BOARD_CHARS).optional(),
        exit: z.object({ code: z.number().int(), signal: z.number().int().nullable() }).strict().nullable(),
        /** When it ended (Date.now()), as whoever saw it end recorded it then; absent when nobody did. */
        at: z.number().int().min(0).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type StoredAgent = z.infer<typeof StoredAgentSchema>;

const StoreFileSchema = z.object({ version: z.literal(STORE_VERSION), agents: z.array(StoredAgentSchema) }).strict();

export class AgentStore {
  private readonly agents = new Map<string, StoredAgent>();

  private constructor(readonly path: string) {}

  /**
   * The records in `path` (none if it does not exist). A file that is not valid JSON or not a record file
   * is renamed to `<path>.corrupt-<time>` and reported through `warn`; the store starts empty.
   */
  static open(path: string, warn: (message: string) => void = () => undefined, now: () => number = Date.now): AgentStore {
    const store = new AgentStore(path);
    const file = readCheckedJson(path, StoreFileSchema, {
      what: 'agent records',
      consequence: 'Earlier agents cannot be resumed from this Thread; its board is untouched.',
      warn,
      now,
    });
    for (const a of file?.agents ?? []) store.agents.set(a.id, a);
    return store;
  }

  list(): StoredAgent[] {
    return [...this.agents.values()];
  }

  get(id: string): StoredAgent | undefined {
    return this.agents.get(id);
  }

  put(agent: StoredAgent): void {
    this.agents.set(agent.id, StoredAgentSchema.parse(agent));
    this.save();
  }

  /** Changes some fields of a record; nothing for an unknown id. */
  update(id: string, patch: Partial<Omit<StoredAgent, 'id'>>): void {
    const a = this.agents.get(id);
    if (!a) return;
    this.put({ ...a, ...patch });
  }

  remove(id: string): void {
    if (this.agents.delete(id)) this.save();
  }

  private save(): void {
    fs.mkdirSync(dirname(this.path), { recursive: true, mode: STORE_DIR_MODE });
    const body = JSON.stringify({ version: STORE_VERSION, agents: this.list() }, null, 2);
    // Durable: a record written as an agent starts is what a resume after a power cut has to go by.
    writeFileAtomic(this.path, `${body}\n`, { mode: STORE_FILE_MODE, durable: true });
  }
}
