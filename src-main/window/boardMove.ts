/**
 * Moving a Thread from its local board (the journal in the data folder) onto a shared one (issue 45): what the
 * person chose for each shared board, kept beside the Thread's other files, and the copy itself.
 *
 * A move is `copy` (the local board is carried onto the shared one, boardCarry.ts) or `empty` (the Thread starts
 * on the shared board as it is; the local board stays on disk, whole, and comes back when the Thread goes back
 * to it). A copy is written down as pending before the Thread leaves its journal and as done once the shared
 * board took it: a host killed mid-copy finds it pending at its next start and copies again, and the copy, being
 * one transaction that carries each old task once, lands exactly once whatever was cut off where.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { Board } from '../../src-shared/board/reducer.js';
import type { CarryOutcome, CarrySource } from '../../src-shared/board/boardCarry.js';
import { USER } from '../../src-shared/board/model.js';
import { writeFileAtomic } from '../base/atomicWrite.js';
import { readCheckedJson } from '../base/checkedJsonFile.js';
import type { BoardService } from '../board/boardService.js';
import { loadBoard } from '../board/journalLoad.js';
import type { SharedBoardSetting } from '../board/openBoard.js';
import { describeBoardUrl } from '../board/pg/connection.js';
import { hostIdOf } from '../board/pg/hostIdentity.js';

export const BOARD_MOVES_FILE = 'board-moves.json';
const MOVES_VERSION = 1;

export const MOVES = ['copy', 'empty'] as const;
export type BoardMove = (typeof MOVES)[number];

/** The flag a host started with a board (`serve --board-url-file …`) takes the person's choice from. */
export const MOVE_FLAG = '--move';
/** The same choice for the app (which takes its board from FORKBENCH_BOARD_URL and has no flags). */
export const MOVE_ENV = 'FORKBENCH_BOARD_MOVE';

/** FORKBENCH_BOARD_MOVE as the app reads it: unset, or one of MOVES; anything else is said, not guessed. */
export function moveFromEnv(env: NodeJS.ProcessEnv): BoardMove | undefined {
  const v = env[MOVE_ENV];
  if (v === undefined || v === '') return undefined;
  if (!(MOVES as readonly string[]).includes(v)) throw new Error(`${MOVE_ENV} takes copy or empty, not '${v}'`);
  return v as BoardMove;
}

/**
 * Shared boards a Thread keeps a choice for: a host's few (a person tries one, then another), far under this.
 * The oldest goes first past it: a choice it forgets is asked again, never acted on wrongly.
 */
const MAX_KEPT = 50;

const EntrySchema = z
  .object({
    /** "host/database|name": the board without its URL's password (describeBoardUrl), and the name it was given. */
    board: z.string().min(1).max(8192),
    move: z.enum(MOVES),
    /** A copy not yet known to have landed: the next open of this board copies (again: it lands once). */
    pending: z.boolean(),
    at: z.number().finite(),
  })
  .strict();
const FileSchema = z.object({ version: z.literal(MOVES_VERSION), moves: z.array(EntrySchema).max(MAX_KEPT) }).strict();
type Entry = z.infer<typeof EntrySchema>;

/** A shared board as the choices name it: never its URL (which may hold a password). */
export function boardKeyOf(setting: SharedBoardSetting): string {
  return `${describeBoardUrl(setting.url)}|${setting.name ?? ''}`;
}

/** The choices a Thread keeps, one per shared board; `now` stamps them (display only). */
export class BoardMoves {
  constructor(
    private readonly threadDir: string,
    private readonly warn: (message: string) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** The person's choice for this board, if one was made. */
  of(setting: SharedBoardSetting): { move: BoardMove; pending: boolean } | null {
    const key = boardKeyOf(setting);
    const e = this.read().find((m) => m.board === key);
    return e ? { move: e.move, pending: e.pending } : null;
  }

  /** Keep the choice (durably: a copy marked pending is what a host killed mid-copy finds and finishes). */
  choose(setting: SharedBoardSetting, move: BoardMove, pending: boolean): void {
    const key = boardKeyOf(setting);
    const rest = this.read().filter((m) => m.board !== key);
    const moves: Entry[] = [...rest, { board: key, move, pending, at: this.now() }].slice(-MAX_KEPT);
    writeFileAtomic(join(this.threadDir, BOARD_MOVES_FILE), `${JSON.stringify({ version: MOVES_VERSION, moves })}\n`, { durable: true });
  }

  /** The choice is undone (the Thread stayed where it was): the next move onto this board asks again. */
  forget(setting: SharedBoardSetting): void {
    const key = boardKeyOf(setting);
    const all = this.read();
    const rest = all.filter((m) => m.board !== key);
    if (rest.length === all.length) return;
    writeFileAtomic(join(this.threadDir, BOARD_MOVES_FILE), `${JSON.stringify({ version: MOVES_VERSION, moves: rest })}\n`, { durable: true });
  }

  private read(): Entry[] {
    return (
      readCheckedJson(join(this.threadDir, BOARD_MOVES_FILE), FileSchema, {
        what: 'choices of how the Thread moved onto shared boards',
        consequence: 'A move onto a shared board asks again.',
        warn: this.warn,
        now: this.now,
      })?.moves ?? []
    );
  }
}

/** The Thread's local board as its journal holds it (empty when it has none). Read as the journal opens it:
 *  only a write a crash cut short is dropped (and kept aside); damage refuses, naming the file. */
export function localBoard(threadDir: string): Board {
  return loadBoard(threadDir).board;
}

/** The local board as a copy carries it: known by this host's id and its thread id, named for people. */
export function carrySource(board: Readonly<Board>, dataRoot: string, folder: string): CarrySource {
  return { board, id: `${hostIdOf(dataRoot)}:${board.threadId}`, label: `the local board of ${folder} on ${hostname()}` };
}

/** Carry the local board onto `board` in one decision: what it carried, or the refusal as an error (nothing
 *  was written then). */
export async function carryOnto(board: BoardService, src: CarrySource): Promise<CarryOutcome> {
  const r = await board.run((e) => e.carryIn(src, USER));
  if (!r.ok) throw new Error(`the local board could not be copied onto the shared board (${r.error.code}): ${r.error.message}`);
  return r.value;
}

/** How many tasks, as a person reads it. */
export const tasksText = (n: number): string => `${n} task${n === 1 ? '' : 's'}`;
