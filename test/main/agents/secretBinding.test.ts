/**
 * Issue 29, finding 6: a stolen secret was a full identity. Agent A read B's FORKBENCH_SECRET from
 * /proc/<pid>/environ (same uid) and its calls were accepted as B's. Now the kernel names the calling
 * process (SO_PEERCRED) and a secret works only from its own agent's pane. Real panes (ptys), the real CLI.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliScript } from '../../../src-main/base/nodeRuntime.js';
import { hostFixture } from '../../helpers/hosts.js';
import { waitFor } from '../../helpers/pty.js';

const CLI = cliScript();
const fixture = hostFixture('secret-bind');
afterEach(() => fixture.cleanup());

/** What a pane's command wrote to `out` (written whole, then renamed, so a half-written file is never read). */
const result = async (out: string) => JSON.parse(await waitFor(() => fs.existsSync(out) && fs.readFileSync(out, 'utf8'), 20_000, `the pane's result in ${out}`)) as { code: number; answer: string };

/** A shell command for a pane: run the CLI (secret from `secretFrom`, a shell expression), record its exit
 *  code and stdout in `out` as JSON, then stay alive as an agent pane does. */
const inPane = (secretFrom: string, out: string) =>
  `S=${secretFrom}; A=$(FORKBENCH_SECRET="$S" "${process.execPath}" "${CLI}" board --json); C=$?; ` +
  `"${process.execPath}" -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({ code: Number(process.argv[2]), answer: process.argv[3] }))' "${out}.tmp" "$C" "$A"; mv "${out}.tmp" "${out}"; exec sleep 600`;

describe('an agent’s secret works only from its own pane', () => {
  it('B’s secret read from /proc/<pid>/environ and used from A’s pane is refused; from B’s own pane it works', async () => {
    const host = await fixture.open();
    const b = await host.roster.launch('custom', { command: 'exec sleep 600' });
    const bPid = await waitFor(() => host.roster.get(b.id)?.agent.pid, 10_000, 'B’s pid');
    const ownOut = join(host.folder, 'own.json');
    const stolenOut = join(host.folder, 'stolen.json');
    // A pane using its own secret: the control.
    await host.roster.launch('custom', { command: inPane('"$FORKBENCH_SECRET"', ownOut) });
    // Stolen: uncontained, A reads it from /proc/<B's pid>/environ (same uid); contained, /proc shows A nothing of
    // B's (containedPanes.test), so the test hands it over, as any other leak would: the binding is what is tested.
    expect(fs.readFileSync(`/proc/${bPid}/environ`, 'utf8')).toContain(`FORKBENCH_SECRET=${host.roster.agent(b.id)!.secret}`);
    const a = await host.roster.launch('custom', { command: inPane(`'${host.roster.agent(b.id)!.secret}'`, stolenOut) });
    const stolen = await result(stolenOut);
    expect(stolen.code, stolen.answer).not.toBe(0);
    const err = JSON.parse(stolen.answer).error;
    expect(err.message).toMatch(new RegExp(`^${b.name}'s secret works only from its own pane; this call came from the pane of ${a.name}`));
    expect(err.reason).toBe('not-its-pane');
    const own = await result(ownOut);
    expect(own.code, own.answer).toBe(0);
    expect(JSON.parse(own.answer).error).toBeUndefined();
    expect(own.answer).toContain(`"threadId":"${host.key}"`);
    // Both CLIs have exited: their connections are closed on the host too (reading the peer's credentials
    // hands the connection to a child for a moment, and Node stops reading it then; it must read on).
    await expect.poll(() => host.socket.budget.counts.total).toBe(0);
  }, 60_000);

  it('a secret used by a process in no pane at all (the test process) is refused, with the reason', async () => {
    const host = await fixture.open();
    const b = await host.roster.launch('custom', { command: 'exec sleep 600' });
    await waitFor(() => host.roster.get(b.id)?.agent.pid, 10_000, 'B’s pid');
    const secret = host.roster.agent(b.id)?.secret as string;
    const r = await new Promise<{ code: number; stdout: string }>((resolve) =>
      execFile(process.execPath, [CLI, 'board', '--json'], { env: { PATH: process.env.PATH, FORKBENCH_SOCKET: host.socket.path, FORKBENCH_SECRET: secret } }, (e, stdout) =>
        resolve({ code: e ? Number(e.code) : 0, stdout }),
      ),
    );
    expect(r.code).not.toBe(0);
    expect(JSON.parse(r.stdout).error).toMatchObject({ message: `${b.name}'s secret works only from its own pane; this call came from a process in no agent pane`, reason: 'not-its-pane' });
  }, 30_000);
});
