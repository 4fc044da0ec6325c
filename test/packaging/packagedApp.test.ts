/**
 * The packaged app's layout and launchers, without an Electron binary (none can be had here). The layout is
 * built from electron-builder.yml as electron-builder reads it (its own loader): the `files` packed into
 * app.asar by @electron/asar with the `asarUnpack` globs unpacked beside it, and the extraResources Node in
 * resources/node, with this Node standing in for the one `npm run dist` stages. Then the pty host and an
 * agent's `forkbench` and `forkbench mcp` start exactly as the packaged app starts them.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createPackageWithOptions } from '@electron/asar';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { minimatch } from 'minimatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliScript, electronDevRuntime, PACKAGED_NODE_DIR, packagedRuntime, type NodeRuntime } from '../../src-main/base/nodeRuntime.js';
import { ensureCliShim, shimText } from '../../src-main/thread/cliShim.js';
import { connectPtyHost, ptyHostCommand } from '../../src-main/ptyhost/ptyHostLauncher.js';
import { ensureBuilt } from '../helpers/cli.js';
import { hostFixture } from '../helpers/hosts.js';
import { alive } from '../helpers/processes.js';
import { waitFor } from '../helpers/pty.js';
import { secretsFromTheTestProcess } from '../helpers/peerJudges.js';

const ROOT = join(import.meta.dirname, '..', '..');

interface BuilderConfig {
  files?: Array<{ filter?: string[] } | string>;
  asarUnpack?: string[];
  extraResources?: Array<{ from: string; to: string }>;
  electronFuses?: { runAsNode?: boolean };
}

/** electron-builder.yml through electron-builder's own loader (defaults, `extends`, validation). */
async function builderConfig(): Promise<BuilderConfig> {
  const { getConfig } = (await import('app-builder-lib/out/util/config/config.js')) as {
    getConfig(dir: string, path: string | null, given: null): Promise<BuilderConfig>;
  };
  return getConfig(ROOT, 'electron-builder.yml', null);
}

const fileGlobs = (c: BuilderConfig): string[] => (c.files ?? []).flatMap((f) => (typeof f === 'string' ? [f] : (f.filter ?? [])));
const unpacked = (c: BuilderConfig, file: string): boolean => (c.asarUnpack ?? []).some((g) => minimatch(file, g, { dot: true }));

/**
 * Why a runtime cannot start the packaged app's helpers under this configuration: the app's own binary as
 * Node needs the runAsNode fuse; a Node of the package's must be one extraResources ships; and a plain Node
 * reads only unpacked files.
 */
function launcherProblems(c: BuilderConfig, rt: NodeRuntime, resources: string, scripts: string[], env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  const runAsNodeOff = c.electronFuses?.runAsNode === false;
  if (runAsNodeOff && 'ELECTRON_RUN_AS_NODE' in env) problems.push(`a launcher sets ELECTRON_RUN_AS_NODE, but the runAsNode fuse is off`);
  const shipped = (c.extraResources ?? []).some((r) => !relative(join(resources, r.to), rt.node).startsWith('..'));
  if (!shipped) problems.push(`${rt.node} is not in resources/ by any extraResources entry: the package has no such Node`);
  for (const s of scripts) {
    const inUnpacked = relative(join(resources, 'app.asar.unpacked'), s);
    if (inUnpacked.startsWith('..')) problems.push(`${s} is not in app.asar.unpacked: a plain Node cannot read it`);
    else if (!unpacked(c, inUnpacked)) problems.push(`${inUnpacked} is run by plain Node but no asarUnpack glob unpacks it`);
  }
  return problems;
}

function packagedLaunches(resources: string, rt: NodeRuntime) {
  const pty = ptyHostCommand(rt, '/run/pty.sock', 60_000, {});
  return { pty, scripts: [pty.script, cliScript(rt)], env: { ...pty.env }, shim: shimText(cliScript(rt), rt, 'linux') };
}

describe('the packaged app’s fuses and launchers agree (electron-builder.yml as electron-builder reads it)', () => {
  it('the pty host and the agents’ CLI run on the Node the package ships, on unpacked files, with no ELECTRON_RUN_AS_NODE', async () => {
    const c = await builderConfig();
    const resources = '/opt/Forkbench/resources';
    const rt = packagedRuntime(resources, 'linux');
    const l = packagedLaunches(resources, rt);
    expect(launcherProblems(c, rt, resources, l.scripts, l.env)).toEqual([]);
    expect(l.shim).not.toContain('ELECTRON_RUN_AS_NODE');
    // Node runs the unpacked script (under its perl reaper where there is perl).
    expect([l.pty.command, ...l.pty.args]).toContain(join(resources, PACKAGED_NODE_DIR, 'bin', 'node'));
    expect([l.pty.command, ...l.pty.args]).toContain(l.pty.script);
  });

  it('the check fails a launcher that runs the app’s own binary as Node while runAsNode is off (as main did)', async () => {
    const c = await builderConfig();
    expect(c.electronFuses?.runAsNode).toBe(false);
    const resources = '/opt/Forkbench/resources';
    // What the launchers did before: Electron's binary with ELECTRON_RUN_AS_NODE, on scripts inside app.asar.
    const asApp: NodeRuntime = { ...electronDevRuntime(), node: '/opt/Forkbench/forkbench', root: join(resources, 'app.asar') };
    const l = packagedLaunches(resources, asApp);
    const problems = launcherProblems(c, asApp, resources, l.scripts, l.env);
    expect(problems.join('\n')).toMatch(/ELECTRON_RUN_AS_NODE, but the runAsNode fuse is off/);
    expect(problems.join('\n')).toMatch(/not in resources\/ by any extraResources entry/);
    expect(problems.join('\n')).toMatch(/not in app\.asar\.unpacked/);
  });
});

describe('the packaged layout, run as the packaged app runs it', () => {
  let work: string;
  let resources: string;
  let rt: NodeRuntime;
  // Its test runs the packaged shim's forkbench with an agent's secret from the test process, outside any pane.
  const hosts = hostFixture('packaged', { peerJudge: secretsFromTheTestProcess });
  const stops: Array<() => Promise<void> | void> = [];

  beforeAll(async () => {
    ensureBuilt();
    const c = await builderConfig();
    work = fs.mkdtempSync(join(tmpdir(), 'forkbench-packaged-'));
    const stage = join(work, 'stage');
    resources = join(work, 'resources');
    // The app's files, as `files` selects them, and node-pty (the production dependency that must be
    // unpacked); anything else a helper needed from node_modules would be inside app.asar, out of reach.
    const picked = fs
      .readdirSync(ROOT, { recursive: true, encoding: 'utf8' })
      .filter((f) => !f.startsWith('node_modules') && !f.startsWith('.git') && fileGlobs(c).some((g) => minimatch(f, g, { dot: true })));
    const pty = join('node_modules', 'node-pty');
    for (const f of [...picked, ...fs.readdirSync(join(ROOT, pty), { recursive: true, encoding: 'utf8' }).map((f) => join(pty, f))]) {
      const from = join(ROOT, f);
      if (!fs.statSync(from).isFile()) continue;
      fs.mkdirSync(dirname(join(stage, f)), { recursive: true });
      fs.copyFileSync(from, join(stage, f));
    }
    await createPackageWithOptions(stage, join(resources, 'app.asar'), { unpack: `{${(c.asarUnpack ?? []).map((g) => join(stage, g)).join(',')}}` });
    fs.rmSync(stage, { recursive: true, force: true });
    rt = packagedRuntime(resources, 'linux');
    fs.mkdirSync(dirname(rt.node), { recursive: true });
    fs.symlinkSync(process.execPath, rt.node);
  }, 120_000);

  afterAll(async () => {
    for (const s of stops.splice(0)) await s();
    await hosts.cleanup();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('lays out app.asar with the helpers and node-pty unpacked beside it', () => {
    expect(fs.existsSync(join(resources, 'app.asar'))).toBe(true);
    for (const f of ['bin/forkbench.cjs', 'dist-main/cli/forkbench.cjs', 'dist-main/cli/mcp.mjs', 'dist-main/ptyhost/ptyHostMain.mjs', 'package.json']) {
      expect(fs.existsSync(join(rt.root, f)), f).toBe(true);
    }
    expect(fs.readdirSync(join(rt.root, 'node_modules'))).toEqual(['node-pty']);
  });

  it('starts the pty host as the packaged app does, and a pane runs in it', async () => {
    const data = join(work, 'data');
    const { client } = await connectPtyHost(data, { runtime: rt, idleMs: 60_000 });
    stops.push(async () => {
      await client.shutdown();
      if (alive(client.hostPid)) process.kill(client.hostPid, 'SIGKILL');
    });
    // The process is the package's Node on the unpacked script.
    const argv = fs.readFileSync(`/proc/${client.hostPid}/cmdline`, 'utf8').split('\0');
    expect(argv.slice(0, 2)).toEqual([rt.node, join(rt.root, 'dist-main', 'ptyhost', 'ptyHostMain.mjs')]);
    const pane = await client.spawn('/bin/sh', ['-c', 'echo PACKAGED-PTY; exec sleep 60'], { cwd: work, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, cols: 80, rows: 24 }, {
      threadKey: 't',
      agentId: 'a',
      secretDigest: 'd'.repeat(64),
      socketPath: join(work, 'none.sock'),
      profile: 'custom',
      name: 'packaged',
    });
    let out = '';
    pane.onData((d: string) => (out += d));
    await waitFor(() => out.includes('PACKAGED-PTY'), 10_000, 'the pane’s output');
  });

  it('an agent’s `forkbench` and `forkbench mcp`, through the shim the packaged app writes, reach the board', async () => {
    const host = await hosts.open();
    const agent = await host.roster.launch('custom', { command: 'exec sleep 60' });
    const secret = host.roster.agent(agent.id)!.secret;
    const bin = ensureCliShim(join(work, 'run'), cliScript(rt), rt);
    const shim = join(bin, 'forkbench');
    expect(fs.readFileSync(shim, 'utf8')).toBe(shimText(cliScript(rt), rt));
    const env = { PATH: `${bin}:${process.env.PATH ?? ''}`, FORKBENCH_SOCKET: host.socket.path, FORKBENCH_SECRET: secret };
    await host.board.run((e) => e.addTask({ title: 'from the package' }));
    const printed = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(shim, ['board', '--json'], { env }, (err, stdout) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout })),
    );
    expect(printed.code).toBe(0);
    expect(JSON.stringify(JSON.parse(printed.out))).toContain('from the package');

    const client = new Client({ name: 'packaged-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: shim, args: ['mcp'], env }));
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain('claim');
      const claimed = await client.callTool({ name: 'claim', arguments: { taskId: 'T-1' } });
      expect(claimed.isError).toBeFalsy();
      expect(host.board.state.tasks.get('T-1')?.claim?.agentId).toBe(agent.id);
    } finally {
      await client.close();
    }
  });
});
