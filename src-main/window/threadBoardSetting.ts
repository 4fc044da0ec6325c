/**
 * A Thread's own board setting: the PostgreSQL board a person chose for it in the window, kept in the host's
 * data folder beside the Thread's other files. Its URL may hold a password, so the file is owner-only (0600,
 * written whole by an atomic rename) and nothing else carries it: not the journal, a log line, an agent's
 * environment or a page (windows see ThreadApi's BoardStoreView). No file means the journal.
 *
 * The store a Thread opens on, in order (boardChoice): the board its host was started with (`--board-url-file`,
 * `--board-url-stdin`, FORKBENCH_BOARD_URL), which wins and cannot be changed from a window; else this setting; else the journal.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../base/atomicWrite.js';
import { readCheckedJson } from '../base/checkedJsonFile.js';
import type { SharedBoardSetting } from '../board/openBoard.js';
import { checkBoardName, parseBoardUrl } from '../board/pg/connection.js';

export const BOARD_SETTING_FILE = 'board-setting.json';
const SETTING_VERSION = 1;
/** Owner-only: the file may hold a database password. */
const SETTING_FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/** Checked as the window's request is: a file edited by hand into a bad URL is set aside, never half-used.
 *  The refinements' messages name what is wrong, never the value (it may be a password). */
const SettingFileSchema = z
  .object({
    version: z.literal(SETTING_VERSION),
    url: z.string().refine((u) => usable(() => parseBoardUrl(u)), 'not a PostgreSQL board URL'),
    name: z.string().refine((n) => usable(() => checkBoardName(n)), 'not a board name').optional(),
  })
  .strict();

function usable(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}


/** The board the Thread was set to in a window, or null (the journal). A damaged file is set aside with a word. */
export function readBoardSetting(threadDir: string, warn: (message: string) => void = () => undefined): SharedBoardSetting | null {
  const file = readCheckedJson(join(threadDir, BOARD_SETTING_FILE), SettingFileSchema, {
    what: 'shared board settings',
    consequence: 'The Thread opens on its journal until a board is chosen again.',
    // Without the reason: a JSON parser's reason quotes the text around the fault, which may be the password.
    warn: (message) => warn(message.replace(/ are damaged \(.*\); kept as /s, ' are damaged; kept as ')),
    now: Date.now,
  });
  if (!file) return null;
  return file.name === undefined ? { url: file.url } : { url: file.url, name: file.name };
}

/** Keep the Thread's board setting (null: back to the journal, the file removed). Durable: a person chose it. */
export function saveBoardSetting(threadDir: string, setting: SharedBoardSetting | null): void {
  const path = join(threadDir, BOARD_SETTING_FILE);
  if (setting === null) {
    fs.rmSync(path, { force: true });
    return;
  }
  fs.mkdirSync(threadDir, { recursive: true, mode: DIR_MODE });
  const body = { version: SETTING_VERSION, url: setting.url, ...(setting.name !== undefined ? { name: setting.name } : {}) };
  writeFileAtomic(path, `${JSON.stringify(body)}\n`, { mode: SETTING_FILE_MODE, durable: true });
}

/** Where a Thread's board is: the host's (fixed), the Thread's own setting, or neither (the journal). */
export interface BoardChoice {
  readonly setting: SharedBoardSetting | undefined;
  /** Given by the host's start (`--board-url-file`, stdin, FORKBENCH_BOARD_URL): a window cannot change it. */
  readonly fixed: boolean;
}

export function boardChoice(hostBoard: SharedBoardSetting | undefined, threadDir: string, warn?: (message: string) => void): BoardChoice {
  if (hostBoard) return { setting: hostBoard, fixed: true };
  return { setting: readBoardSetting(threadDir, warn) ?? undefined, fixed: false };
}
