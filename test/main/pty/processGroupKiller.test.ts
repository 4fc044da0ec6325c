import { describe, expect, it } from 'vitest';
import { groupsToSignal, othersToSignal, sandboxSpine } from '../../../src-main/pty/processGroupKiller.js';
import type { ProcStat } from '../../../src-main/base/procStat.js';

const p = (pid: number, ppid: number, pgrp: number, session: number | undefined, startTicks?: number): ProcStat => ({
  pid, ppid, pgrp, session, comm: '', code: 'S', state: 'sleeping', cpuMs: 0, reapedChildCpuMs: 0, startTicks,
});
/** The caller (the test runner's stand-in) in a group of its own, as a CI run's processes are. */
const SELF = 50;
const self = p(SELF, 40, 40, 0);

describe('groupsToSignal', () => {
  it('covers the root group, every group of its session and of its descendants, and nothing else', () => {
    const table = [
      p(1, 0, 1, 1),
      p(100, 1, 100, 100), // pane root: session leader
      p(101, 100, 101, 100), // a job the shell put in its own group
      p(102, 101, 101, 100),
      p(103, 1, 103, 100), // orphaned job, reparented to init but still in the session
      p(104, 100, 104, 104), // a descendant that called setsid: found through ppid
      p(200, 1, 200, 200), // unrelated
    ];
    expect(groupsToSignal(table, { pid: 100 }, SELF).sort((a, b) => a - b)).toEqual([100, 101, 103, 104]);
  });

  it('without session ids (ps on macOS) still follows descendants', () => {
    const table = [p(100, 1, 100, undefined), p(101, 100, 101, undefined), p(300, 1, 300, undefined)];
    expect(groupsToSignal(table, { pid: 100 }, SELF).sort((a, b) => a - b)).toEqual([100, 101]);
  });

  it('always includes the root group, even if the scan no longer sees the root', () => {
    expect(groupsToSignal([], { pid: 100 }, SELF)).toEqual([100]);
  });

  it('never signals group 0 or 1', () => {
    expect(groupsToSignal([p(100, 1, 100, 100), p(101, 100, 1, 100), p(102, 100, 0, 100)], { pid: 100 }, SELF)).toEqual([100]);
  });

  it('signals nothing when a stranger holds the root pid: same pid, another start time', () => {
    // The pane's root was reaped and its pid handed to a process of the caller's own group: following it
    // would SIGKILL the caller's group (this happened to a CI run once pids wrapped at 32768).
    const table = [self, p(100, SELF, 40, 0, 9_999), p(101, 100, 40, 0, 10_000)];
    expect(groupsToSignal(table, { pid: 100, startTicks: 1_234 }, SELF)).toEqual([]);
  });

  it('without start times, a row at the root pid that is no group and session leader is a stranger', () => {
    expect(groupsToSignal([self, p(100, SELF, 40, 0)], { pid: 100 }, SELF)).toEqual([]);
    expect(groupsToSignal([self, p(100, 1, 100, undefined), p(101, 100, 101, undefined)], { pid: 100 }, SELF).sort()).toEqual([100, 101]);
  });

  it('the same process by start time is followed as before', () => {
    const table = [self, p(100, 1, 100, 100, 1_234), p(101, 100, 101, 100, 1_300)];
    expect(groupsToSignal(table, { pid: 100, startTicks: 1_234 }, SELF).sort()).toEqual([100, 101]);
  });

  it("never signals the caller's own process group, even when the pane's tree seems to hold it", () => {
    const table = [self, p(100, 1, 100, 100), p(101, 100, 40, 100), p(102, 100, 102, 100)];
    expect(groupsToSignal(table, { pid: 100 }, SELF).sort()).toEqual([100, 102]);
  });
});

describe('othersToSignal: the pane’s processes that end before its root', () => {
  it('every process of the session and under the root but the root itself, zombies and the caller’s group left out', () => {
    const zombie = { ...p(105, 100, 100, 100), state: 'zombie' as const };
    // 101: a start-up step in the root's own group; 102: a job; 103: a job's child in another session; 104: a stranger.
    const table = [self, p(100, 1, 100, 100), p(101, 100, 100, 100), p(102, 100, 102, 100), p(103, 102, 103, 103), p(104, 1, 104, 104), zombie, p(106, 100, 40, 100)];
    expect(othersToSignal(table, { pid: 100 }, SELF).sort()).toEqual([101, 102, 103]);
  });

  it('nothing when a stranger holds the root pid', () => {
    expect(othersToSignal([self, p(100, 1, 100, 100, 999), p(101, 100, 100, 100)], { pid: 100, startTicks: 1_234 }, SELF)).toEqual([]);
  });
});

describe('sandboxSpine: what a contained pane’s root stands for, each one’s end ending the rest', () => {
  it('the outer bwrap, its init and the init’s first child (the agent’s command), not what the init adopted later or the command started', () => {
    const table = [
      p(100, 1, 100, 100, 1_000), // the outer bwrap: the pane's root
      p(101, 100, 100, 100, 1_001), // bwrap's init, pid 1 inside
      p(103, 101, 103, 100, 1_050), // an orphan the init adopted (started after the command)
      p(102, 101, 102, 100, 1_002), // the agent's command (a shell)
      p(104, 102, 102, 100, 1_010), // what the command started
    ];
    expect(sandboxSpine(table, 100)).toEqual([100, 101, 102]);
  });

  it('just the root once nothing runs under it', () => {
    expect(sandboxSpine([p(100, 1, 100, 100, 1_000)], 100)).toEqual([100]);
  });
});
