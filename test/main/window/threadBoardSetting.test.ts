import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BOARD_SETTING_FILE, boardChoice, readBoardSetting, saveBoardSetting } from '../../../src-main/window/threadBoardSetting.js';

const PASSWORD = 'hunter2-unit';
const URL_ = `postgres://me:${PASSWORD}@db.example/forkbench`;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function threadDir(): string {
  const root = fs.mkdtempSync(join(tmpdir(), 'fb-board-setting-unit-'));
  dirs.push(root);
  return join(root, 'threads', '0123456789abcdef');
}

describe('a Thread’s own board setting', () => {
  it('is kept owner-only and read back; null removes it', () => {
    const dir = threadDir();
    expect(readBoardSetting(dir)).toBeNull();
    saveBoardSetting(dir, { url: URL_, name: 'team' });
    expect(fs.statSync(join(dir, BOARD_SETTING_FILE)).mode & 0o777).toBe(0o600);
    expect(readBoardSetting(dir)).toEqual({ url: URL_, name: 'team' });
    expect(fs.readdirSync(dir)).toEqual([BOARD_SETTING_FILE]);
    saveBoardSetting(dir, null);
    expect(readBoardSetting(dir)).toBeNull();
  });

  it('the host’s board wins over it', () => {
    const dir = threadDir();
    saveBoardSetting(dir, { url: URL_ });
    expect(boardChoice({ url: 'postgres://h/other' }, dir)).toEqual({ setting: { url: 'postgres://h/other' }, fixed: true });
    expect(boardChoice(undefined, dir)).toEqual({ setting: { url: URL_ }, fixed: false });
  });

  it('a damaged file (hand-edited into bad JSON, or a URL edited into another scheme) is set aside with a word that never quotes it: the journal', () => {
    for (const body of [`{"version":1,"url":"${URL_}" oops}`, JSON.stringify({ version: 1, url: `mysql://me:${PASSWORD}@h/db` })]) {
      const dir = threadDir();
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(join(dir, BOARD_SETTING_FILE), body, { mode: 0o600 });
      const said: string[] = [];
      expect(readBoardSetting(dir, (m) => said.push(m))).toBeNull();
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/shared board settings .* are damaged; kept as .*corrupt-/);
      expect(said[0]).not.toContain(PASSWORD);
      const aside = fs.readdirSync(dir).filter((f) => f.includes('.corrupt-'));
      expect(aside).toHaveLength(1);
      expect(fs.statSync(join(dir, aside[0]!)).mode & 0o777).toBe(0o600);
    }
  });
});
