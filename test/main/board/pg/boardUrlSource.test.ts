import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BOARD_URL_ENV, BoardUrlError } from '../../../../src-main/board/pg/connection.js';
import { takeBoardUrl, takeBoardUrlFromEnv } from '../../../../src-main/board/pg/boardUrlSource.js';

/** Issue 42: the board's URL reaches a host only where no other user and no child of the host can read it. */
const URL = 'postgres://fb:Sekrit-42@db.example.com/boards';
const dir = fs.mkdtempSync(join(tmpdir(), 'fb-url-source-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const noStdin = () => Promise.reject(new Error('stdin read'));
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as Error,
  );

function file(name: string, text: string, mode: number): string {
  const p = join(dir, name);
  fs.writeFileSync(p, text, { mode });
  fs.chmodSync(p, mode);
  return p;
}

describe('the board URL a host takes', () => {
  it('a URL on the command line is refused, not repeated, and the ways to pass it are named', async () => {
    const err = await refusal(takeBoardUrl({ flag: URL, fromEnv: null, readStdin: noStdin }));
    expect(err).toBeInstanceOf(BoardUrlError);
    expect(err?.message).toMatch(/--board-url-file PATH .*--board-url-stdin .*FORKBENCH_BOARD_URL/);
    expect(err?.message).not.toContain('Sekrit-42');
  });

  it('from an owner-only file, its one line; a file others can read, or a link, is refused with what to do', async () => {
    expect(await takeBoardUrl({ file: file('ok', `${URL}\n`, 0o600), fromEnv: null, readStdin: noStdin })).toBe(URL);
    const open = file('open', `${URL}\n`, 0o644);
    const err = await refusal(takeBoardUrl({ file: open, fromEnv: null, readStdin: noStdin }));
    expect(err?.message).toBe(`--board-url-file ${open} can be read or written by others (mode 0644): make it yours alone with chmod 600 ${open}`);
    expect((await refusal(takeBoardUrl({ file: file('group', URL, 0o640), fromEnv: null, readStdin: noStdin })))?.message).toMatch(/mode 0640/);
    const link = join(dir, 'link');
    fs.symlinkSync(join(dir, 'ok'), link);
    expect((await refusal(takeBoardUrl({ file: link, fromEnv: null, readStdin: noStdin })))?.message).toMatch(/symbolic link/);
    expect((await refusal(takeBoardUrl({ file: file('theirs', URL, 0o600), fromEnv: null, readStdin: noStdin, uid: 4242 })))?.message).toMatch(/another user/);
    expect((await refusal(takeBoardUrl({ file: file('empty', '\n', 0o600), fromEnv: null, readStdin: noStdin })))?.message).toMatch(/empty/);
  });

  it('from stdin (--board-url-stdin or --board -); one way at a time', async () => {
    expect(await takeBoardUrl({ stdin: true, fromEnv: null, readStdin: async () => `${URL}\n` })).toBe(URL);
    expect(await takeBoardUrl({ flag: '-', fromEnv: null, readStdin: async () => URL })).toBe(URL);
    expect((await refusal(takeBoardUrl({ stdin: true, fromEnv: URL, readStdin: async () => URL })))?.message).toMatch(/one way, not several/);
  });

  it('the environment is read once and the variable deleted', () => {
    const env: NodeJS.ProcessEnv = { [BOARD_URL_ENV]: URL, OTHER: 'x' };
    expect(takeBoardUrlFromEnv(env)).toBe(URL);
    expect(env).toEqual({ OTHER: 'x' });
    expect(takeBoardUrlFromEnv(env)).toBeNull();
    expect(takeBoardUrlFromEnv({ [BOARD_URL_ENV]: '' })).toBeNull();
  });
});
