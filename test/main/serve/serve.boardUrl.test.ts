import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boardUrlFile, PG_SUPERUSER, startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { waitFor } from '../../helpers/pty.js';
import { alive, ptyHostPidOf, servedHostsOfThisFile } from '../../helpers/serveProcess.js';

/**
 * Issue 42, the shared board's URL stays with the host, on real `serve` processes and a private PostgreSQL: a URL
 * in argv (readable by every local user in /proc/PID/cmdline, and copied into the pty host's log) is refused in
 * one line that says how to pass it, and nothing starts; so is a URL file others can read. Given by stdin, or by
 * FORKBENCH_BOARD_URL, the host opens the board, and the URL is in no child's environment (the pty host, a pane).
 */
const ROOT = join(import.meta.dirname, '..', '..', '..');
const PASSWORD = 'Url-never-in-a-child-5512';

let pgc: PgCluster;
let url: string;

beforeAll(async () => {
  pgc = await startPgCluster();
  // The private cluster trusts its socket: the password is carried, never asked for.
  url = (await pgc.createDatabase('urls')).replace(`${PG_SUPERUSER}@`, `${PG_SUPERUSER}:${PASSWORD}@`);
});
afterAll(async () => {
  await pgc?.dispose();
});
const hosts = servedHostsOfThisFile('fb-board-url-');

/** `forkbench serve` run to its end: its exit code and everything it printed. */
async function serveRun(at: string, project: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string; err: string }> {
  const proc = spawn(process.execPath, [join(ROOT, 'bin', 'forkbench.cjs'), 'serve', project, ...args], {
    env: { ...process.env, ...env, FORKBENCH_DATA_DIR: join(at, 'data'), XDG_RUNTIME_DIR: join(at, 'run') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((r) => proc.on('exit', r));
  return { code, out, err };
}

const environOf = (pid: number) => fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');

describe('serve and the board URL', () => {
  it('a URL on the command line is refused in one line naming the ways to pass it; nothing is started', async () => {
    const { at, project } = hosts.place('argv');
    const r = await serveRun(at, project, ['--board', url, '--board-name', 'x']);
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toBe(
      "forkbench serve: the board's URL may not be given on the command line, where every local user can read it (ps, /proc); pass it with --board-url-file PATH (a file only you can read: chmod 600), --board-url-stdin (or --board -), or FORKBENCH_BOARD_URL",
    );
    expect(r.err + r.out).not.toContain(PASSWORD);
    expect(r.out).toBe('');
    // No pty host, no data folder's lock, no Thread: the refusal came first.
    expect(fs.existsSync(join(at, 'data'))).toBe(false);
  });

  it('a URL file that others can read is refused with the chmod that fixes it', async () => {
    const { at, project } = hosts.place('open-file');
    const file = boardUrlFile(at, url);
    fs.chmodSync(file, 0o644);
    const r = await serveRun(at, project, ['--board-url-file', file]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`--board-url-file ${file} can be read or written by others (mode 0644): make it yours alone with chmod 600 ${file}`);
    expect(r.err).not.toContain(PASSWORD);
    expect(fs.existsSync(join(at, 'data'))).toBe(false);
  });

  it('--host-name names this host on a shared board: without a board it is refused in one line; a name another serve of the board runs under is refused at start, nothing opened (issue 45)', async () => {
    const alone = hosts.place('host-name-alone');
    const r = await serveRun(alone.at, alone.project, ['--host-name', 'alpha']);
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toBe(
      "forkbench serve: --host-name names this host on a shared board: give the board's URL too, with --board-url-file PATH (a file only you can read: chmod 600), --board-url-stdin (or --board -), or FORKBENCH_BOARD_URL",
    );
    const first = hosts.place('host-name-first');
    const a = await hosts.start(first, { args: ['--board-name', 'names', '--host-name', 'alpha'], env: { FORKBENCH_BOARD_URL: url } });
    type Snap = { store: { host?: string } };
    expect(((await a.window.call('thread.snapshot', { key: first.key })) as Snap).store.host).toBe('alpha');
    const second = hosts.place('host-name-second');
    const refused = await serveRun(second.at, second.project, ['--board-name', 'names', '--host-name', 'alpha'], { FORKBENCH_BOARD_URL: url });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(
      `forkbench serve: cannot open ${second.project}: another host of the shared board "names" runs under the name "alpha": give this one another name (serve --host-name NAME), or stop that one first. Nothing was written to the board.`,
    );
    expect(refused.out).not.toContain('Open http');
    a.proc.kill('SIGINT');
    await a.exit;
  }, 120_000);

  it('--host-lease-ms is a lease on a shared board: without a board, or not a whole number of at least 300 ms, it is refused in one line, nothing opened', async () => {
    const alone = hosts.place('lease-alone');
    const r = await serveRun(alone.at, alone.project, ['--host-lease-ms', '5000']);
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toBe(
      "forkbench serve: --host-lease-ms is this host's lease on a shared board: give the board's URL too, with --board-url-file PATH (a file only you can read: chmod 600), --board-url-stdin (or --board -), or FORKBENCH_BOARD_URL",
    );
    expect(fs.existsSync(join(alone.at, 'data'))).toBe(false);
    for (const bad of ['299', '1.5e3', 'soon']) {
      const p = hosts.place(`lease-${bad}`);
      const refused = await serveRun(p.at, p.project, ['--board-name', 'leases', '--host-lease-ms', bad], { FORKBENCH_BOARD_URL: url });
      expect(refused.code).toBe(2);
      expect(refused.err.split('\n')[0]).toBe(`forkbench serve: --host-lease-ms takes a whole number of ms, at least 300, not '${bad}'`);
      expect(fs.existsSync(join(p.at, 'data'))).toBe(false);
    }
  });

  it('by stdin the board opens', async () => {
    const viaStdin = hosts.place('stdin');
    const a = await hosts.start(viaStdin, { args: ['--board-url-stdin', '--board-name', 'urls'], stdin: `${url}\n` });
    await a.window.call('task.add', { key: viaStdin.key, title: 'through stdin' });
    expect(a.err()).not.toContain(PASSWORD);
    a.proc.kill('SIGINT');
    await a.exit;
  }, 60_000);

  it('by FORKBENCH_BOARD_URL the board opens, and neither the pty host nor a pane has the URL in its environment', async () => {
    const viaEnv = hosts.place('env');
    const b = await hosts.start(viaEnv, { args: ['--board-name', 'urls'], env: { FORKBENCH_BOARD_URL: url } });
    type Snap = { store: { kind: string } };
    expect(((await b.window.call('thread.snapshot', { key: viaEnv.key })) as Snap).store.kind).toBe('postgres');

    const ptyHost = await waitFor(() => ptyHostPidOf(join(viaEnv.at, 'data')) ?? undefined, 10_000, 'B’s pty host');
    expect(alive(ptyHost)).toBe(true);
    const env = environOf(ptyHost);
    expect(env.some((v) => v.startsWith('FORKBENCH_DATA_DIR='))).toBe(true);
    expect(env.filter((v) => v.includes(PASSWORD) || v.startsWith('FORKBENCH_BOARD_URL='))).toEqual([]);

    const agent = await b.window.call('agent.launch', { key: viaEnv.key, profile: 'shell', cols: 120, rows: 30 });
    await b.window.call('agent.input', { key: viaEnv.key, agentId: agent.id, data: `echo "FOUND=$(tr '\\0' '\\n' < /proc/$$/environ | grep -c -e '${PASSWORD}' -e '^FORKBENCH_BOARD_URL=')=END"\r` });
    const pane = () => b.window.pushes.map((p) => (p.type === 'pane-data' && p.agentId === agent.id ? p.data : '')).join('');
    const found = await waitFor(() => /FOUND=(\d+)=END/.exec(pane())?.[1], 30_000, 'the pane’s answer');
    expect(found).toBe('0');
    expect(b.err()).not.toContain(PASSWORD);
    b.proc.kill('SIGINT');
    await b.exit;
  }, 120_000);
});
