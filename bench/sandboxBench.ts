/**
 * Issue 43: what a sandbox per agent costs, contained (bwrap) against uncontained, in the same run: a pane's
 * start (launch to its first output) and one `forkbench` call from inside the pane. Goal: <= 1.2x each.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ThreadHost } from '../src-main/thread/threadHost.js';
import { probeBwrap } from '../src-main/sandbox/bwrapProbe.js';
import { median, type Row } from './table.js';
import { spawnSync } from 'node:child_process';
import { baseArgs } from '../src-main/sandbox/sandboxArgs.js';

/** Launches per mode, alternated so that the machine's load falls on both alike. */
const N = 12;
/** The pane prints when it starts, then times one board call with the shell's own clock (ns). */
const PANE = `echo READY; s=$(date +%s%N); forkbench board --json >/dev/null; e=$(date +%s%N); echo "CALL $(( (e - s) / 1000 )) us"; exec sleep 600`;

export async function sandboxBench(): Promise<Row[]> {
  const support = await probeBwrap();
  if (!support.ok) return [{ name: 'sandbox', value: 0, unit: '', note: `not measured: ${support.reason}` }];
  const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-bench-sandbox-'));
  const hosts = new Map<string, ThreadHost>();
  const start: Record<string, number[]> = { contained: [], uncontained: [] };
  const call: Record<string, number[]> = { contained: [], uncontained: [] };
  try {
    for (const mode of ['contained', 'uncontained'] as const) {
      const dir = join(root, mode);
      fs.mkdirSync(join(dir, 'project'), { recursive: true });
      const off = { ok: false as const, reason: 'measured uncontained', fix: '' };
      hosts.set(mode, await ThreadHost.open({ folder: join(dir, 'project'), dataRoot: join(dir, 'data'), runtimeRoot: join(dir, 'run'), liveness: false, sandboxSupport: mode === 'contained' ? support : off }));
    }
    for (let i = 0; i < N; i++) {
      for (const mode of i % 2 ? (['uncontained', 'contained'] as const) : (['contained', 'uncontained'] as const)) {
        const host = hosts.get(mode) as ThreadHost;
        let seen = '';
        let ready = 0;
        const t0 = performance.now();
        const done = new Promise<void>((resolve) => {
          const sub = host.roster.relay.onData.event(({ data }) => {
            seen += data;
            if (!ready && seen.includes('READY')) ready = performance.now();
            if (/CALL \d+ us/.test(seen)) {
              sub.dispose();
              resolve();
            }
          });
        });
        const agent = await host.roster.launch('custom', { command: PANE });
        await Promise.race([done, new Promise((_, reject) => setTimeout(() => reject(new Error(`${mode} pane: ${seen}`)), 30_000))]);
        start[mode]!.push(ready - t0);
        call[mode]!.push(Number(/CALL (\d+) us/.exec(seen)?.[1]) / 1000);
        await host.roster.close(agent.id);
      }
    }
  } finally {
    for (const h of hosts.values()) await h.dispose();
    fs.rmSync(root, { recursive: true, force: true });
  }
  const ratio = (m: Record<string, number[]>) => median(m.contained!) / median(m.uncontained!);
  // bwrap's own floor, as git's empty hook is the fence's: a sandbox of the agents' shape around `true`
  // against `true` alone, alternated. What a pane start adds beyond it is Forkbench's (its binds, its folders).
  const floor: Record<string, number[]> = { contained: [], uncontained: [] };
  for (let i = 0; i < 4 * N; i++) {
    for (const mode of ['contained', 'uncontained'] as const) {
      const t0 = performance.now();
      if (mode === 'contained') spawnSync(support.bwrap, [...baseArgs(process.getuid?.() === 0), '--', '/bin/true']);
      else spawnSync('/bin/true');
      floor[mode]!.push(performance.now() - t0);
    }
  }
  const bwrapFloor = median(floor.contained!) - median(floor.uncontained!);
  const added = median(start.contained!) - median(start.uncontained!);
  return [
    { name: 'bwrap start beyond a bare exec (floor)', value: bwrapFloor, unit: 'ms', note: `median of ${4 * N}: namespaces, /dev, /proc, /tmp; no bind of ours` },
    { name: 'pane start added by the sandbox', value: added, unit: 'ms', note: `${(added - bwrapFloor).toFixed(1)} ms beyond bwrap's floor` },
    { name: 'pane start p50, uncontained', value: median(start.uncontained!), unit: 'ms', note: `launch to first output, ${N} panes` },
    { name: 'pane start p50, contained (bwrap)', value: median(start.contained!), unit: 'ms', note: `${ratio(start).toFixed(2)}x uncontained` },
    { name: 'forkbench call p50, uncontained', value: median(call.uncontained!), unit: 'ms', note: '`forkbench board` from the pane' },
    { name: 'forkbench call p50, contained (bwrap)', value: median(call.contained!), unit: 'ms', note: `${ratio(call).toFixed(2)}x uncontained` },
  ];
}
