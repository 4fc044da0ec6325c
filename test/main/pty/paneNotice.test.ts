import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TerminalSignal } from '../../../src-main/pty/headlessMirror.js';
import { paneTracker, waitFor } from '../../helpers/pty.js';

/**
 * A notice of the host's shown in a pane's output (PtySession.showNotice), with real ptys: a bash with no
 * start-up files (--norc --noprofile) whose history goes to a file of the test's, and small programs that
 * stop their output where the test needs it (inside an escape sequence, on the alternate screen).
 */
const panes = paneTracker();
const dirs: string[] = [];
afterEach(() => {
  panes.disposeAll();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = fs.mkdtempSync(join(tmpdir(), 'forkbench-notice-'));
  dirs.push(d);
  return d;
}

/** A node program that writes `first`, waits for `gate` to exist, writes `then`, and waits. */
function gatedWriter(first: string, gate: string, then: string): [string, string[]] {
  const src = `process.stdout.write(${JSON.stringify(first)}); const t = setInterval(() => { if (require('fs').existsSync(${JSON.stringify(gate)})) { clearInterval(t); process.stdout.write(${JSON.stringify(then)}); setInterval(() => {}, 1e6); } }, 10);`;
  return [process.execPath, ['-e', src]];
}

/** Everything the session's mirror has parsed is parsed, and whatever a notice's placement started is decided. */
async function settled(session: { flushMirror(): Promise<void> }): Promise<void> {
  await session.flushMirror();
  await new Promise((r) => setImmediate(r));
  await session.flushMirror();
}

describe('notices shown in a pane’s output', () => {
  it('bash at its prompt, a command half typed: the notice is drawn above the line, which goes on as typed; nothing runs and nothing reaches the history', async () => {
    const dir = tempDir();
    const hist = join(dir, 'history');
    const ran = join(dir, 'ran');
    const p = panes.pane('/bin/bash', ['--norc', '--noprofile', '-i'], {}, { HOME: dir, HISTFILE: hist, PROMPT_COMMAND: 'history -a' });
    const signals: TerminalSignal[] = [];
    p.session.onSignal((s) => void signals.push(s));
    await waitFor(() => p.output().includes('$ '), 10_000, 'the prompt');
    p.session.write('echo hal');
    await waitFor(() => p.output().includes('echo hal'), 5_000, 'the half-typed command echoed');
    // Board text with a command in it and escape sequences: a retitle, a clear, a clipboard write.
    await p.session.showNotice(`T-1 "x; touch ${ran}" \x1b]0;pwned\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07 was assigned to you`);
    p.session.write('f-$((40+2))\r');
    await waitFor(() => p.output().includes('half-42'), 5_000, 'the command, finished after the notice, to run');
    const lines = (await p.session.screenLines()).filter((l) => l.length > 0);
    const at = lines.findIndex((l) => l.startsWith('Forkbench: T-1'));
    expect(at, lines.join('\n')).toBeGreaterThanOrEqual(0);
    // The notice (wrapped over two rows), then the prompt with the whole command as typed, then its output.
    const prompt = lines.findIndex((l, i) => i > at && l.startsWith('$ echo'));
    expect(lines.slice(at, prompt).join('')).toBe(`Forkbench: T-1 "x; touch ${ran}" \\x1b]0;pwned\\x07\\x1b[2J\\x1b]52;c;cHduZWQ=\\x07 was assigned to you`);
    expect(lines.slice(prompt, prompt + 2)).toEqual(['$ echo half-$((40+2))', 'half-42']);
    // Shown, not acted on: no raw sequence of the title's reached the terminal, so no title and no notify.
    expect(p.output()).not.toContain('\x1b]0;pwned');
    expect(p.output()).not.toContain('\x1b[2J');
    expect(p.output()).not.toContain('\x1b]52;');
    expect(signals.filter((s) => s.kind === 'title' || s.kind === 'notify')).toEqual([]);
    p.session.write('exit\r');
    await p.session.exited;
    expect(fs.existsSync(ran)).toBe(false);
    // The history holds the person's commands, and nothing of the notice.
    expect(fs.readFileSync(hist, 'utf8')).toBe('echo half-$((40+2))\nexit\n');
  });

  it('the notification goes with the notice, as the terminal’s own (OSC 9), and is not read as the program asking for the person', async () => {
    const p = panes.pane('/bin/bash', ['--norc', '--noprofile', '-i'], {}, { HOME: tempDir(), HISTFILE: '/dev/null' });
    const signals: TerminalSignal[] = [];
    p.session.onSignal((s) => void signals.push(s));
    await waitFor(() => p.output().includes('$ '), 10_000, 'the prompt');
    await p.session.showNotice('T-2 "tidy" is yours');
    expect(p.output()).toContain('\x1b]9;Forkbench: T-2 "tidy" is yours\x07');
    // A program's own OSC 9 is still heard.
    p.session.write("printf '\\033]9;from the program\\007'\r");
    await waitFor(() => signals.some((s) => s.kind === 'notify'), 5_000, "the program's notification");
    expect(signals.filter((s) => s.kind === 'notify')).toEqual([{ kind: 'notify', text: 'from the program' }]);
  });

  it('output that stops inside an escape sequence holds the notice until the sequence ends: it never lands inside one', async () => {
    const dir = tempDir();
    const gate = join(dir, 'go');
    const [cmd, args] = gatedWriter('start \x1b]0;half a ti', gate, 'tle\x07 end\r\n');
    const p = panes.pane(cmd, args);
    const signals: TerminalSignal[] = [];
    p.session.onSignal((s) => void signals.push(s));
    await waitFor(() => p.output().includes('half a ti'), 10_000, 'the program to stop inside its OSC');
    let shown = false;
    void p.session.showNotice('wait for it').then(() => (shown = true));
    await settled(p.session);
    expect(shown).toBe(false);
    expect(p.output()).not.toContain('Forkbench');
    fs.writeFileSync(gate, '');
    await waitFor(() => shown, 10_000, 'the notice, once the sequence ended');
    const out = p.output();
    expect(out.indexOf('tle\x07')).toBeLessThan(out.indexOf('Forkbench: wait for it'));
    // The program's title came whole, as it wrote it.
    expect(signals).toContainEqual({ kind: 'title', text: 'half a title' });
  });

  it('a full-screen program on the alternate screen gets only the notification; the line is drawn once it leaves', async () => {
    const dir = tempDir();
    const gate = join(dir, 'go');
    const [cmd, args] = gatedWriter('before\r\n\x1b[?1049h\x1b[HFULL SCREEN', gate, '\x1b[?1049l');
    const p = panes.pane(cmd, args);
    await waitFor(() => p.output().includes('FULL SCREEN'), 10_000, 'the program on the alternate screen');
    await p.session.showNotice('T-3 was taken from you');
    expect(p.output()).toContain('\x1b]9;Forkbench: T-3 was taken from you\x07');
    await settled(p.session);
    expect(p.output()).not.toContain('Forkbench: T-3 was taken from you\x1b');
    expect(await p.session.screenLines()).toContain('FULL SCREEN');
    fs.writeFileSync(gate, '');
    await waitFor(async () => (await p.session.screenLines()).some((l) => l.startsWith('Forkbench: T-3 was taken from you')), 10_000, 'the line, on the normal screen');
    const lines = (await p.session.screenLines()).filter((l) => l.length > 0);
    expect(lines).toEqual(['before', 'Forkbench: T-3 was taken from you']);
  });
});
