/**
 * Where a machine's CPU went during a measured stretch, by who spent it: the `serve` process tree, the
 * page's renderer, Chromium's GPU process, the rest of Chromium, and everything else. On a machine with few
 * cores a throughput figure means little without it: the page competes with the host it is fed by.
 * Linux only (it reads /proc); elsewhere `available` is false and nothing is measured.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { descendantsOf, listProcesses } from '../src-main/pty/procReader.js';

export const CPU_GROUPS = ['serve', 'renderer', 'gpu', 'chromium', 'other'] as const;
export type CpuGroup = (typeof CPU_GROUPS)[number];

export interface CpuSample {
  at: number;
  /** CPU ms so far per live process, with the group it belongs to. */
  byPid: Map<number, { group: CpuGroup; cpuMs: number }>;
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

function chromiumType(pid: number): CpuGroup | null {
  let cmd: string;
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return null;
  }
  if (!/chrom/i.test(cmd.split('\0')[0] ?? '')) return null;
  if (cmd.includes('--type=renderer')) return 'renderer';
  if (cmd.includes('--type=gpu-process')) return 'gpu';
  return 'chromium';
}

export async function sampleCpu(servePid: number): Promise<CpuSample> {
  const table = await listProcesses();
  const serve = new Set(descendantsOf(table, servePid).map((p) => p.pid));
  const byPid = new Map<number, { group: CpuGroup; cpuMs: number }>();
  for (const p of table) {
    const group: CpuGroup = serve.has(p.pid) ? 'serve' : (chromiumType(p.pid) ?? 'other');
    // A process's children it has reaped (a pane's `cat`) count as its own.
    byPid.set(p.pid, { group, cpuMs: p.cpuMs + (p.reapedChildCpuMs ?? 0) });
  }
  return { at: performance.now(), byPid };
}

export function cpuBetween(a: CpuSample, b: CpuSample): CpuSpent {
  const ms = Object.fromEntries(CPU_GROUPS.map((g) => [g, 0])) as Record<CpuGroup, number>;
  for (const [pid, now] of b.byPid) ms[now.group] += now.cpuMs - (a.byPid.get(pid)?.cpuMs ?? 0);
  const wallMs = b.at - a.at;
  const total = CPU_GROUPS.reduce((s, g) => s + ms[g], 0);
  return { wallMs, ms, coresBusy: total / wallMs, cores: cpus().length };
}

/** "serve 0.62 s, renderer 1.41 s, ..., 1.9 of 2 cores busy" */
export function describeCpu(c: CpuSpent): string {
  const parts = CPU_GROUPS.map((g) => `${g} ${(c.ms[g] / 1000).toFixed(2)} s`);
  return `${parts.join(', ')}: ${c.coresBusy.toFixed(2)} of ${c.cores} cores busy over ${(c.wallMs / 1000).toFixed(2)} s`;
}
