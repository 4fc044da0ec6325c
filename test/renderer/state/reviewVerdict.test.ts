import { describe, expect, it } from 'vitest';
import { tokenCheck } from '../../../src-renderer/state/reviewVerdict.js';

describe('tokenCheck', () => {
  const base = { taskId: 'T-3', headTask: 'T-3', branch: 'forkbench/T-3', commits: 2 };
  it('passes only when the head was committed under the claim under review', () => {
    expect(tokenCheck({ ...base, headToken: 7, finalToken: 7 })).toEqual({ ok: true, message: 'Head committed under token 7, the claim under review.' });
    const stale = tokenCheck({ ...base, headToken: 5, finalToken: 7 });
    expect(stale.ok).toBe(false);
    expect(stale.message).toContain('token 5');
    expect(stale.message).toContain('Approve will refuse');
    expect(tokenCheck({ ...base, headToken: null, finalToken: 7 }).ok).toBe(false);
    expect(tokenCheck({ ...base, headToken: 7, finalToken: null }).ok).toBe(false);
  });

  it('says when the branch has nothing to merge: approve approves without a merge, as the host does', () => {
    const c = tokenCheck({ ...base, commits: 0, headToken: null, finalToken: 7 });
    expect(c).toEqual({ ok: true, message: 'forkbench/T-3 has no commits of its own: approving merges nothing.' });
  });

  it('refuses a head written for another task under the same token number, as the host does', () => {
    const c = tokenCheck({ ...base, headTask: 'T-2', headToken: 7, finalToken: 7 });
    expect(c.ok).toBe(false);
    expect(c.message).toBe('The head commit was written under token 7 of T-2, but the work under review is token 7. Approve will refuse.');
  });
});
