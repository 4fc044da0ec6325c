import { headWritten, mergeVerdict } from '../../src-shared/git/mergeVerdict.js';
import type { TaskDiff } from '../../src-shared/protocol/windowApi.js';

export interface TokenCheck {
  readonly ok: boolean;
  readonly message: string;
}

/**
 * What Approve will do, said before the person clicks it: the host's own merge rule (src-shared/git/
 * mergeVerdict), on the facts the diff carries.
 */
export function tokenCheck(d: Pick<TaskDiff, 'taskId' | 'headToken' | 'headTask' | 'finalToken' | 'commits' | 'branch'>): TokenCheck {
  const v = mergeVerdict(d);
  if (v.ok && !v.merges) return { ok: true, message: `${d.branch} has no commits of its own: approving merges nothing.` };
  if (v.ok) return { ok: true, message: `Head committed under token ${d.headToken}, the claim under review.` };
  if (v.why === 'no-claim') return { ok: false, message: 'No claim is on record for this review, so the head cannot be checked; approve will refuse.' };
  return { ok: false, message: `The head commit was ${headWritten(d)}, but the work under review is token ${d.finalToken}. Approve will refuse.` };
}
