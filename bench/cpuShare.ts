/**
 * Where a machine's CPU went during a measured stretch, by who spent it: the board host (`serve`), its pty
 * host (the detached process that owns the agents' ptys, src-main/ptyhost), the agents' own processes, the
 * page's renderer, Chromium's GPU process, the rest of Chromium, and everything else. On a machine with few
 * cores a throughput figure means little without it: the page competes with the hosts it is fed by.
 * Linux only (it reads /proc); elsewhere `available` is false and nothing is measured.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import type { ProcStat } from '../src-main/base/procStat.js';
import { descendantsOf, listProcesses } from '../src-main/pty/procReader.js';

export const CPU_GROUPS = ['serve', 'ptyhost', 'agents', 'renderer', 'gpu', 'chromium', 'other'] as const;
export type CpuGroup = (typeof CPU_GROUPS)[number];

export interface CpuSample {
  at: number;
  /** CPU ms so far per live process and group (a process's reaped children may count in another group
   *  than itself: the pty host's reaped panes are the agents'). Keyed `pid group`. */
  byPid: Map<string, { group: CpuGroup; cpuMs: number }>;
}

export interface CpuSpent {
  wallMs: number;
  /** CPU ms per group over the stretch (processes that started or ended in it count what they were seen using). */
  ms: Record<CpuGroup, number>;
  /** All groups together, in cores kept busy on average (CPU ms / wall ms). */
  coresBusy: number;
  cores: number;
}

export const cpuShareAvailable = process.platform === 'linux';

function cmdlineOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return null;
  }
}

function chromiumType(pid: number): CpuGroup | null {
  const cmd = cmdlineOf(pid);
  if (cmd === null || !/chrom/i.test(cmd.split('\0')[0] ?? '')) return null;
  if (cmd.includes('--type=renderer')) return 'renderer';
  if (cmd.includes('--type=gpu-process')) return 'gpu';
  return 'chromium';
}

/** The pty host among serve's processes (it is serve's child until serve goes): the one running ptyHostMain. */
function ptyHostIn(tree: readonly ProcStat[]): number | null {
  return tree.find((p) => cmdlineOf(p.pid)?.includes('ptyHostMain') === true)?.pid ?? null;
}

/**
 * One reading of every process's CPU. The pty host is found among serve's descendants unless given (after
 * a restart of serve it is no longer serve's child); its panes and their children are the agents.
 */
export async function sampleCpu(servePid: number, ptyHostPid?: number | null): Promise<CpuSample> {
  const table = await listProcesses();
  const serveTree = descendantsOf(table, servePid);
  const hostPid = ptyHostPid ?? ptyHostIn(serveTree);
  const hostTree = hostPid === null ? [] : descendantsOf(table, hostPid);
  const agents = new Set(hostTree.filter((p) => p.pid !== hostPid).map((p) => p.pid));
  const serve = new Set(serveTree.map((p) => p.pid).filter((pid) => pid !== hostPid && !agents.has(pid)));
  const byPid = new Map<string, { group: CpuGroup; cpuMs: number }>();
  const add = (pid: number, group: CpuGroup, cpuMs: number) => {
    const k = `${pid} ${group}`;
    byPid.set(k, { group, cpuMs: (byPid.get(k)?.cpuMs ?? 0) + cpuMs });
  };
  for (const p of table) {
    const reaped = p.reapedChildCpuMs ?? 0;
    if (p.pid === hostPid) {
      add(p.pid, 'ptyhost', p.cpuMs);
      // The panes it has reaped were agents.
      add(p.pid, 'agents', reaped);
      continue;
    }
    const group: CpuGroup = serve.has(p.pid) ? 'serve' : agents.has(p.pid) ? 'agents' : (chromiumType(p.pid) ?? 'other');
    // A process's children it has reaped (a pane's `cat`) count as its own; not for the rest of the
    // machine, where a test runner reaping a worker that ran for a minute would add that minute at once.
    add(p.pid, group, p.cpuMs + (group === 'other' ? 0 : reaped));
  }
  return { at: performance.now(), byPid };
}

export function cpuBetween(a: CpuSample, b: CpuSample): CpuSpent {
  const ms = Object.fromEntries(CPU_GROUPS.map((g) => [g, 0])) as Record<CpuGroup, number>;
  for (const [k, now] of b.byPid) ms[now.group] += now.cpuMs - (a.byPid.get(k)?.cpuMs ?? 0);
  const wallMs = b.at - a.at;
  const total = CPU_GROUPS.reduce((s, g) => s + ms[g], 0);
  return { wallMs, ms, coresBusy: total / wallMs, cores: cpus().length };
}

/** "serve 0.62 s, ptyhost 0.30 s, ..., 1.9 of 2 cores busy" */
export function describeCpu(c: CpuSpent): string {
  const parts = CPU_GROUPS.map((g) => `${g} ${(c.ms[g] / 1000).toFixed(2)} s`);
  return `${parts.join(', ')}: ${c.coresBusy.toFixed(2)} of ${c.cores} cores busy over ${(c.wallMs / 1000).toFixed(2)} s`;
}
