import { describe, expect, it } from 'vitest';
import { canRemoveWorktree, changesWorktrees, worktreeStatus, worktreeStatusTitle } from '../../../src-renderer/state/worktreeStatus.js';

describe('worktree list', () => {
  it('names a worktree held, parked or missing, and lets only unheld ones go', () => {
    expect(worktreeStatus({ held: true, missing: false })).toBe('held');
    expect(worktreeStatus({ held: false, missing: false })).toBe('parked');
    expect(worktreeStatus({ held: true, missing: true })).toBe('missing');
    expect(canRemoveWorktree({ held: false })).toBe(true);
    expect(canRemoveWorktree({ held: true })).toBe(false);
  });

  it('refreshes on the events that make, remove, hold or let go of one', () => {
    for (const k of ['worktree-set', 'worktree-removed', 'grant', 'claim-ended', 'approved'] as const) expect(changesWorktrees(k)).toBe(true);
    for (const k of ['note', 'renew', 'goal-set'] as const) expect(changesWorktrees(k)).toBe(false);
  });

  it('names a folder the parked clean-up removed cleaned, never missing, and says whether its work was saved or there was none', () => {
    expect(worktreeStatus({ held: false, missing: false, cleaned: { savedAs: null } })).toBe('cleaned');
    expect(worktreeStatus({ held: false, missing: false, cleaned: { savedAs: 'refs/forkbench/parked/0a1b2c3d/T-1/4' } })).toBe('cleaned');
    expect(worktreeStatusTitle({ held: false, missing: false, cleaned: { savedAs: null } })).toMatch(/nothing uncommitted in it: nothing was lost/);
    expect(worktreeStatusTitle({ held: false, missing: false, cleaned: { savedAs: 'refs/forkbench/parked/0a1b2c3d/T-1/4' } })).toContain('saved as refs/forkbench/parked/0a1b2c3d/T-1/4');
    expect(worktreeStatusTitle({ held: false, missing: true })).toContain('deleted outside Forkbench');
  });
});
