import { describe, expect, it } from 'vitest';
import { groupsToSignal } from '../../src-main/pty/processGroupKiller.js';
import type { ProcStat } from '../../src-main/pty/procLiveness.js';

const p = (pid: number, ppid: number, pgrp: number, session: number | undefined): ProcStat => ({
  pid, ppid, pgrp, session, comm: '', code: 'S', state: 'sleeping', cpuMs: 0, reapedChildCpuMs: 0,
});

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
    expect(groupsToSignal(table, 100).sort((a, b) => a - b)).toEqual([100, 101, 103, 104]);
  });

  it('without session ids (ps on macOS) still follows descendants', () => {
    const table = [p(100, 1, 100, undefined), p(101, 100, 101, undefined), p(300, 1, 300, undefined)];
    expect(groupsToSignal(table, 100).sort((a, b) => a - b)).toEqual([100, 101]);
  });

  it('always includes the root group, even if the scan no longer sees the root', () => {
    expect(groupsToSignal([], 100)).toEqual([100]);
  });

  it('never signals group 0 or 1', () => {
    expect(groupsToSignal([p(100, 1, 100, 100), p(101, 100, 1, 100), p(102, 100, 0, 100)], 100)).toEqual([100]);
  });
});
