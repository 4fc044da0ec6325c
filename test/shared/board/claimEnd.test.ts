import { describe, expect, it } from 'vitest';
import { isFailedAttempt, stateAfterClaimEnd } from '../../../src-shared/board/claimEnd.js';
import type { ClaimEndReason } from '../../../src-shared/board/model.js';

describe('the claim-end rule', () => {
  it('counts a lapse or an exit while working as a failed attempt, and nothing else', () => {
    const reasons: ClaimEndReason[] = ['lapsed', 'process-exited', 'pane-closed', 'host-stopped', 'host-restarted'];
    expect(reasons.filter((r) => isFailedAttempt(r, 'claimed'))).toEqual(['lapsed', 'process-exited']);
    expect(isFailedAttempt('lapsed', 'review')).toBe(false);
  });

  it('sends the task to needs-attention at the poison limit, keeps review, else back to the backlog', () => {
    expect(stateAfterClaimEnd({ state: 'claimed', failures: 2 }, 'lapsed', 3)).toBe('needs-attention');
    expect(stateAfterClaimEnd({ state: 'claimed', failures: 1 }, 'lapsed', 3)).toBe('open');
    expect(stateAfterClaimEnd({ state: 'claimed', failures: 2 }, 'pane-closed', 3)).toBe('open');
    expect(stateAfterClaimEnd({ state: 'review', failures: 2 }, 'process-exited', 3)).toBe('review');
  });
});
