import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type RefObject } from 'react';
import { shortSha } from '../../src-shared/git/taskBranch.js';
import { plural } from '../../src-shared/text/plural.js';
import type { TaskDiff, WindowError, WorkElsewhere } from '../../src-shared/protocol/windowApi.js';
import { classifyPatch, fileLineIndex, fileStatusLabel, PATCH_PAGE, type PatchLine } from '../state/patchLines.js';
import { tokenCheck } from '../state/reviewVerdict.js';
import { useApp, useController } from '../state/hooks.js';
import { followCard } from './cardFocus.js';
import { askText } from './prompt.js';
import { TEXT_LIMITS } from '../state/textLimit.js';
import { ReviewDoneNote } from './TaskDetails.js';

/** The review dialog for the task a card's "Diff" button chose: its branch against its base, and the verdict. */
export function ReviewDialog() {
  const taskId = useApp((s) => s.reviewTaskId);
  // Keyed by task, so another task's dialog starts from nothing instead of showing the last one's diff.
  return taskId ? <ReviewOf key={taskId} taskId={taskId} /> : null;
}

function ReviewOf({ taskId }: { taskId: string }) {
  const c = useController();
  const title = useApp((s) => s.board?.tasks.get(taskId)?.title ?? '');
  const state = useApp((s) => s.board?.tasks.get(taskId)?.state ?? null);
  const [diff, setDiff] = useState<TaskDiff | null>(null);
  const [loading, setLoading] = useState(true);
  const [refusal, setRefusal] = useState<WindowError | null>(null);
  const [busy, setBusy] = useState(false);
  const latest = useRef(0);
  const root = useRef<HTMLDivElement>(null);

  const load = useCallback(async () => {
    const n = ++latest.current;
    setLoading(true);
    const d = await c.worktrees.taskDiff(taskId);
    // A slower earlier answer must not overwrite a newer one.
    if (n !== latest.current) return;
    setLoading(false);
    if (d) setDiff(d);
  }, [c, taskId]);
  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => root.current?.focus(), []);

  // Closed (approved, rejected or not), the keyboard goes on from the task's card, wherever it now stands.
  const close = () => {
    c.worktrees.closeReview();
    followCard(taskId);
  };
  // Approve only once the work is on screen (issue 45): not while it loads, not when it could not be read,
  // not when it is on another host this one cannot fetch it from. The host refuses such an approval too.
  const shown = !loading && !!diff && !diff.elsewhere;
  const approve = async () => {
    if (!diff || !shown) return;
    setBusy(true);
    setRefusal(null);
    // The commit shown is the one approved: a newer `done` since is refused, not merged unseen.
    const err = await c.actions.approveWithReason(taskId, diff.head || undefined);
    setBusy(false);
    if (!err) return close();
    // The host left the task in review and said why (a conflict, a head not written under the reviewed claim,
    // a dirty or moved base): shown here, beside the diff it is about, which may itself have changed.
    setRefusal(err);
    void load();
  };
  const reject = async () => {
    const reason = await askText(`Why is ${taskId} rejected?`, '', TEXT_LIMITS.rejectReason);
    if (reason === null) return;
    setBusy(true);
    const ok = await c.actions.rejectTask(taskId, reason);
    setBusy(false);
    if (ok) close();
  };

  return (
    <div className="modal-backdrop review-backdrop" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <div
        ref={root}
        className="modal review"
        role="dialog"
        aria-modal="true"
        aria-label={`Review ${taskId}`}
        tabIndex={-1}
        data-testid="diff-view"
        data-task={taskId}
        onKeyDown={(e) => e.key === 'Escape' && close()}
      >
        <header className="review-head">
          <span className="card-id">{taskId}</span>
          <span className="review-title">{title}</span>
          <span className="spacer" />
          <button type="button" onClick={() => void load()} disabled={loading} data-testid="diff-refresh">
            {loading ? 'Loading…' : 'Refresh'}
          </button>
          <button type="button" className="dismiss" aria-label="Close" data-testid="diff-close" onClick={close}>
            ×
          </button>
        </header>
        <ReviewDoneNote taskId={taskId} />
        {diff?.elsewhere ? (
          <WorkElsewhereNote where={diff.elsewhere} />
        ) : diff ? (
          <DiffBody diff={diff} />
        ) : (
          <p className="muted">{loading ? 'Reading the branch…' : 'The diff could not be read (see the message above).'}</p>
        )}
        {refusal && (
          <p className="review-refusal" role="alert" data-testid="diff-refusal" data-code={refusal.code}>
            Not merged — <strong>{refusal.code}</strong>: {refusal.message}
          </p>
        )}
        <footer className="modal-buttons">
          {state === 'review' ? (
            <>
              <button type="button" className="bad" data-testid={`diff-reject-${taskId}`} disabled={busy} onClick={() => void reject()}>
                Reject…
              </button>
              <button
                type="button"
                className="good"
                data-testid={`diff-approve-${taskId}`}
                disabled={busy || !shown}
                title={shown ? undefined : diff?.elsewhere ? 'This host cannot show the work yet: see above' : 'The work is not shown yet'}
                onClick={() => void approve()}
              >
                {busy ? 'Working…' : 'Approve and merge'}
              </button>
            </>
          ) : (
            <span className="muted" data-testid="diff-state">
              {taskId} is {state ?? 'gone'} now, not in review.
            </span>
          )}
        </footer>
      </div>
    </div>
  );
}

/** Work this host cannot show (issue 45): where it is and what to do, in the host's words, instead of a diff. */
function WorkElsewhereNote({ where }: { where: WorkElsewhere }) {
  return (
    <div className="review-elsewhere" role="status" data-testid="diff-elsewhere" data-why={where.why} data-host={where.host ?? ''}>
      <p className="review-check warn">
        ⚠ The work is {where.host ? <>on <strong>{where.host}</strong></> : 'on another host'}, by {where.agent}: commit <code title={where.sha}>{shortSha(where.sha)}</code>.
      </p>
      <p data-testid="diff-elsewhere-message">{where.message}</p>
    </div>
  );
}

function DiffBody({ diff: d }: { diff: TaskDiff }) {
  const check = tokenCheck(d);
  const lines = useMemo(() => classifyPatch(d.patch), [d.patch]);
  const [shown, setShown] = useState(PATCH_PAGE);
  const [jump, setJump] = useState<number | null>(null);
  const pre = useRef<HTMLPreElement>(null);
  useLayoutEffect(() => {
    if (jump === null) return;
    pre.current?.querySelector(`[data-line="${jump}"]`)?.scrollIntoView({ block: 'start' });
    setJump(null);
  }, [jump]);
  const goTo = (path: string) => {
    const i = fileLineIndex(lines, path);
    if (i < 0) return;
    if (i >= shown) setShown(i + PATCH_PAGE);
    setJump(i);
  };
  return (
    <>
      <div className="review-summary" data-testid="diff-summary">
        <code className="branch">{d.branch}</code> → <code className="branch">{d.base}</code> · {plural(d.commits, 'commit')} · head{' '}
        <code title={d.head}>{shortSha(d.head)}</code>
      </div>
      <p className={`review-check ${check.ok ? 'ok' : 'warn'}`} data-testid="diff-token" data-ok={check.ok}>
        {check.ok ? '✓ ' : '⚠ '}
        {check.message}
      </p>
      {d.uncommitted > 0 && (
        <p className="review-check warn" data-testid="diff-uncommitted">
          ⚠ {plural(d.uncommitted, 'uncommitted change')} in the worktree {d.uncommitted === 1 ? 'is' : 'are'} not part of the merge.
        </p>
      )}
      <ul className="diff-files" data-testid="diff-files" aria-label="Files changed">
        {d.files.length === 0 && <li className="muted">No files changed.</li>}
        {d.files.map((f) => (
          <li key={f.path} className="diff-file" data-testid="diff-file" data-path={f.path} data-status={f.status}>
            <span className={`file-status s-${f.status[0] ?? ''}`} title={fileStatusLabel(f.status)}>
              {f.status[0] ?? '?'}
            </span>
            <button type="button" className="link file-path" onClick={() => goTo(f.path)} title="Show in the patch">
              {f.path}
            </button>
            <span className="file-counts">
              {f.added === null ? (
                'binary'
              ) : (
                <>
                  <span className="plus">+{f.added}</span> <span className="minus">−{f.deleted}</span>
                </>
              )}
            </span>
          </li>
        ))}
      </ul>
      <Patch lines={lines} shown={shown} preRef={pre} />
      {lines.length > shown && (
        <button type="button" className="more" data-testid="diff-more" onClick={() => setShown((n) => n + PATCH_PAGE)}>
          Show {Math.min(PATCH_PAGE, lines.length - shown)} more of {lines.length - shown} lines
        </button>
      )}
      {d.truncated && (
        <p className="muted" data-testid="diff-truncated">
          The patch was cut short here; the whole of it: <code>git diff {d.base}...{d.head || d.branch}</code>
        </p>
      )}
    </>
  );
}

/** Plain pre text, one block span per line: cheap to draw, and copying it gives the patch back. */
const Patch = memo(function Patch({ lines, shown, preRef }: { lines: readonly PatchLine[]; shown: number; preRef: RefObject<HTMLPreElement | null> }) {
  return (
    <pre className="diff-patch" data-testid="diff-patch" ref={preRef}>
      {lines.slice(0, shown).map((l, i) => (
        <span key={i} className={`diff-line ${l.kind}`} data-line={l.kind === 'file' ? i : undefined}>
          {l.text}
        </span>
      ))}
    </pre>
  );
});
