import { describe, expect, it } from 'vitest';
import { headWritten, type MergeFacts, mergeVerdict } from '../../../src-shared/git/mergeVerdict.js';
import { tokenCheck } from '../../../src-renderer/state/reviewVerdict.js';

const branch = 'forkbench/T-3';
const base: MergeFacts = { taskId: 'T-3', commits: 2, headToken: 7, headTask: 'T-3', finalToken: 7 };

/** The host (TaskReview.merge) asks git whether the base has the head, and passes that as 0 or 1 commits. */
const host = (f: MergeFacts) => mergeVerdict({ ...f, commits: f.commits === 0 ? 0 : 1 });
const page = (f: MergeFacts) => tokenCheck({ ...f, branch });

const CASES: Array<[string, MergeFacts]> = [
  ['no commits', { ...base, commits: 0, headToken: null, headTask: null }],
  ['head of another task', { ...base, headTask: 'T-2' }],
  ['head with no task trailer', { ...base, headTask: null }],
  ['matching token and task', base],
];

describe('mergeVerdict', () => {
  it('approves a branch with no commits without a merge, whatever its head says', () => {
    expect(mergeVerdict({ ...base, commits: 0, headToken: null, headTask: null })).toEqual({ ok: true, merges: false });
    expect(mergeVerdict({ ...base, commits: 0, headTask: 'T-2', finalToken: null })).toEqual({ ok: true, merges: false });
  });

  it('refuses a head of another task, even under the same token number', () => {
    expect(mergeVerdict({ ...base, headTask: 'T-2' })).toEqual({ ok: false, why: 'other-task' });
    expect(headWritten({ ...base, headTask: 'T-2' })).toBe('written under token 7 of T-2');
  });

  it('refuses a head that names no task: it is not this task\'s work', () => {
    expect(mergeVerdict({ ...base, headTask: null })).toEqual({ ok: false, why: 'other-task' });
    expect(headWritten({ ...base, headTask: null })).toBe('written under token 7 for no task (no Forkbench-Task trailer)');
  });

  it('merges a head written under the claim under review, for this task', () => {
    expect(mergeVerdict(base)).toEqual({ ok: true, merges: true });
    expect(headWritten(base)).toBe('written under token 7');
  });

  it('the page and the host give the same verdict', () => {
    for (const [name, f] of CASES) {
      const h = host(f);
      const p = page(f);
      expect(p.ok, name).toBe(h.ok);
      if (h.ok) expect(p.message.includes('approving merges nothing'), name).toBe(!h.merges);
      else expect(p.message, name).toContain(headWritten(f));
    }
    expect(page({ ...base, headTask: null })).toEqual({
      ok: false,
      message: 'The head commit was written under token 7 for no task (no Forkbench-Task trailer), but the work under review is token 7. Approve will refuse.',
    });
  });
});
