import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ProcStat } from '../../../src-main/base/procStat.js';
import type { TerminalSignal } from '../../../src-main/pty/headlessMirror.js';
import { shellHoldsTerminal } from '../../../src-main/pty/shellForeground.js';
import { paneTracker, waitFor } from '../../helpers/pty.js';

const p = (pid: number, ppid: number, pgrp: number, tpgid: number): ProcStat => ({
  pid, ppid, pgrp, session: 100, tpgid, comm: '', code: 'S', state: 'sleeping', cpuMs: 0, reapedChildCpuMs: 0,
});
const reader = (table: ProcStat[]) => (pid: number) => table.find((s) => s.pid === pid);

describe('shellHoldsTerminal', () => {
  it('a shell that is the pane: held at its prompt, not while a command it runs holds the terminal', () => {
    expect(shellHoldsTerminal(100, reader([p(100, 1, 100, 100)]))).toBe(true);
    // `sleep`, led by itself, a child of the shell; and a pipeline whose leader has exited already.
    expect(shellHoldsTerminal(100, reader([p(100, 1, 100, 101), p(101, 100, 101, 101)]))).toBe(false);
    expect(shellHoldsTerminal(100, reader([p(100, 1, 100, 101), p(102, 100, 101, 101)]))).toBe(false);
  });

  it('a shell inside bwrap (root and pid-namespace init in the root group, the shell under them): held at its prompt, not while its command runs', () => {
    const bwrap = [p(100, 1, 100, 0), p(101, 100, 100, 0)];
    const at = (tpgid: number, ...more: ProcStat[]) => reader([...bwrap, p(102, 101, 102, 0), ...more].map((s) => ({ ...s, tpgid })));
    expect(shellHoldsTerminal(100, at(102))).toBe(true);
    expect(shellHoldsTerminal(100, at(103, p(103, 102, 103, 0)))).toBe(false);
    // A command's own child that took the terminal for a group of its own: its parent leads the command's group.
    expect(shellHoldsTerminal(100, at(104, p(103, 102, 103, 0), p(104, 103, 104, 0)))).toBe(false);
  });

  it('a pane gone, or with no terminal, has no shell holding one', () => {
    expect(shellHoldsTerminal(100, reader([]))).toBe(false);
    expect(shellHoldsTerminal(100, reader([p(100, 1, 100, -1)]))).toBe(false);
  });
});

const linux = process.platform === 'linux';
const tracker = paneTracker();
afterEach(() => tracker.disposeAll());
const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-shellfg-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The marks a shell profile's start-up file prints (shellProfiles.ts): A at each prompt, C as a command runs. */
const RC = "PROMPT_COMMAND='printf \"\\033]133;A\\007\"'\nPS0=$'\\033]133;C\\007'\n";
/** A program (not the shell) that says "prompt" while it runs, then keeps running. */
const FAKE_PROMPT = `sh -c 'printf "\\033]133;A\\007"; echo FAKED-"PROMPT"; exec sleep 30'`;

describe.skipIf(!linux)('prompt marks in a real pane', () => {
  it('a mark printed by a running command is not passed on; the shell\'s own mark once the command ends is', async () => {
    const rc = join(dir, 'rc');
    fs.writeFileSync(rc, RC);
    const pane = tracker.pane('bash', ['--rcfile', rc, '-i']);
    const marks: string[] = [];
    pane.session.onSignal((s: TerminalSignal) => s.kind === 'prompt' && marks.push(s.mark));
    await waitFor(() => marks.includes('A'), 10_000, 'the first prompt');
    marks.length = 0;
    pane.session.write(`${FAKE_PROMPT}\r`);
    await waitFor(() => pane.output().includes('FAKED-PROMPT'), 10_000, 'the command to print its mark');
    await pane.session.flushMirror();
    expect(marks).toEqual(['C']);
    // Ctrl-C ends the command: the shell takes the terminal back and draws its prompt.
    pane.session.write('\x03');
    await waitFor(() => marks.includes('A'), 10_000, "the shell's prompt after the command");
    expect(marks).toEqual(['C', 'A']);
  }, 30_000);
});
