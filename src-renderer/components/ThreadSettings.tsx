import { useEffect, useRef, useState } from 'react';
import { describeStore } from '../state/boardStoreField.js';
import type { ProfileIdShared } from '../../src-shared/agents/profileIds.js';
import { Limits } from '../../src-shared/board/limits.js';
import { formatCopyFiles, parseBaseBranch, parseCopyFiles } from '../state/gitSettingsFields.js';
import { useApp, useController } from '../state/hooks.js';
import { formatWaitHold, parseWaitHold, spellDuration, WaitHoldBounds } from '../state/waitHoldField.js';
import { SharedBoardSetting } from './SharedBoardSetting.js';
import { threadDefaultShellLine } from '../state/dispatchShells.js';
import { formatBudget, formatGrace, parseBudget, parseGrace } from '../state/parkedFields.js';
import { LeaseEvidence } from './LeaseEvidence.js';
import { CostSettings } from './CostSettings.js';
import { useCommands } from './useCommands.js';

const NONE: readonly string[] = [];

/** The same profiles, whichever order they were ticked or stored in. */
const sameProfiles = (a: readonly string[], b: readonly string[]) => [...a].sort().join() === [...b].sort().join();

const seconds = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`);

/**
 * The Thread's lease length, verify command, wait hold, worktree and sandbox settings. Shown as one line; a click
 * opens a small form. The host validates the bounds and names (the same schema as every other caller) and a
 * refusal shows in the error banner; the wait hold, typed in minutes, is checked here first and a mistake is
 * named beside its field.
 */
export function ThreadSettings() {
  const c = useController();
  const leaseMs = useApp((s) => s.leaseMs);
  const verify = useApp((s) => (s.boardVersion, s.board?.settings.verify ?? null));
  const baseBranch = useApp((s) => (s.boardVersion, s.board?.settings.baseBranch ?? null));
  const copyFiles = useApp((s) => (s.boardVersion, s.board?.settings.copyFiles ?? NONE));
  const verifyFiles = useApp((s) => (s.boardVersion, s.board?.settings.verifyFiles ?? NONE));
  const waitHoldMs = useApp((s) => (s.boardVersion, s.board?.settings.waitHoldMs ?? null));
  const dispatch = useApp((s) => (s.boardVersion, s.board?.settings.dispatch === true));
  const claimLimit = useApp((s) => (s.boardVersion, s.board?.settings.claimLimit ?? Limits.defaultClaimLimit));
  const uncontained = useApp((s) => (s.boardVersion, s.board?.settings.uncontained ?? NONE));
  const profiles = useApp((s) => s.profiles);
  /** The folder's current branch, as the host reported it, to say what an empty "Base branch" means. */
  const current = useApp((s) => (s.git?.isolated && s.board?.settings.baseBranch == null ? s.git.baseBranch : null));
  const boardStore = useApp((s) => s.boardStore);
  const [open, setOpen] = useState(false);
  const [lease, setLease] = useState('');
  const [cmd, setCmd] = useState('');
  const [base, setBase] = useState('');
  const [copy, setCopy] = useState('');
  const [reads, setReads] = useState('');
  const [hold, setHold] = useState('');
  const [holdError, setHoldError] = useState<string | null>(null);
  const [dispatchOn, setDispatchOn] = useState(false);
  // While the box is ticked: the plain shells the Thread's default would dispatch to, which read no task.
  const shellLine = useApp((s) => (s.boardVersion, threadDefaultShellLine(s)));
  const [limit, setLimit] = useState('');
  const [offFor, setOffFor] = useState<readonly ProfileIdShared[]>([]);
  // Issue 47 item 5: how long parked folders stay, and the disk they may take.
  const parkedGraceMs = useApp((s) => (s.boardVersion, s.board?.settings.parkedGraceMs));
  const parkedBudgetMb = useApp((s) => (s.boardVersion, s.board?.settings.parkedBudgetMb ?? null));
  const [grace, setGrace] = useState('');
  const [budget, setBudget] = useState('');

  const start = () => {
    setLease(String(Math.round(leaseMs / 1000)));
    setCmd(verify ?? '');
    setBase(baseBranch ?? '');
    setCopy(formatCopyFiles(copyFiles));
    setReads(formatCopyFiles(verifyFiles));
    setHold(waitHoldMs === null ? '' : formatWaitHold(waitHoldMs));
    setHoldError(null);
    setDispatchOn(dispatch);
    setLimit(String(claimLimit));
    setGrace(formatGrace(parkedGraceMs));
    setBudget(formatBudget(parkedBudgetMb));
    setOffFor(profiles.map((p) => p.id).filter((id) => uncontained.includes(id)));
    setOpen(true);
  };
  // The Thread reopened on another board (the Shared board section below, issue 45): the fields were the old
  // board's settings, and a Save would write them onto the new one. Once its board is drawn, they are its own.
  const storeText = describeStore(boardStore);
  const boardShown = useApp((s) => s.board);
  const seen = useRef<{ store: string; board: unknown; stale: boolean }>({ store: storeText, board: boardShown, stale: false });
  useEffect(() => {
    const at = seen.current;
    if (at.store !== storeText) seen.current = { store: storeText, board: boardShown, stale: true };
    else if (at.stale && boardShown && boardShown !== at.board) {
      seen.current = { ...at, board: boardShown, stale: false };
      if (open) start();
    }
  });
  useCommands(() => [{ id: 'thread-settings', title: 'Open Thread settings', group: 'Board', keywords: 'lease verify base branch worktrees copy shared board postgres journal sandbox bubblewrap contained', run: start }]);
  const save = async () => {
    const s = Number(lease);
    if (!Number.isFinite(s)) return;
    const nextHold = parseWaitHold(hold);
    if (!nextHold.ok) {
      setHoldError(nextHold.error);
      document.querySelector<HTMLElement>('[data-testid="settings-wait-hold"]')?.focus();
      return;
    }
    setHoldError(null);
    const patch: Parameters<typeof c.actions.setSettings>[0] = { leaseMs: Math.round(s * 1000), verify: cmd.trim() ? cmd.trim() : null };
    if (nextHold.ms !== waitHoldMs) patch.waitHoldMs = nextHold.ms;
    if (dispatchOn !== dispatch) patch.dispatch = dispatchOn;
    // Sent as typed: the host's schema names a limit out of bounds in the error banner.
    if (Number(limit) !== claimLimit) patch.claimLimit = Number(limit);
    const nextGrace = parseGrace(grace);
    if (nextGrace !== null && grace !== formatGrace(parkedGraceMs)) patch.parkedGraceMs = nextGrace;
    const nextBudget = parseBudget(budget);
    if (nextBudget !== parkedBudgetMb) patch.parkedBudgetMb = nextBudget;
    // The worktree fields go only when changed: a new base branch is a real change (the git line is read
    // again), and a host without git support need not see them at all.
    const nextBase = parseBaseBranch(base);
    if (nextBase !== baseBranch) patch.baseBranch = nextBase;
    const nextCopy = parseCopyFiles(copy);
    if (formatCopyFiles(nextCopy) !== formatCopyFiles(copyFiles)) patch.copyFiles = nextCopy;
    const nextReads = parseCopyFiles(reads);
    if (formatCopyFiles(nextReads) !== formatCopyFiles(verifyFiles)) patch.verifyFiles = nextReads;
    // Only when changed: the host warns of a change (the same plain warning as a machine without bubblewrap).
    if (!sameProfiles(offFor, uncontained)) patch.uncontained = [...offFor];
    const ok = await c.actions.setSettings(patch);
    if (ok) close();
  };
  /** Closed, the focus goes back to the line that opened the form. */
  const close = () => {
    setOpen(false);
    requestAnimationFrame(() => document.querySelector<HTMLElement>('[data-testid="thread-settings"]')?.focus());
  };

  if (!open) {
    const summary = `${boardStore?.kind === 'postgres' ? `board ${boardStore.where} · ` : ''}lease ${seconds(leaseMs)}${waitHoldMs !== null ? ` · held while waiting for you: ${spellDuration(waitHoldMs)}` : ''}${dispatch ? ' · idle agents take the next ready task' : ''}${uncontained.length ? ` · no sandbox for ${uncontained.join(', ')}` : ''} · verify: ${verify ?? 'none (done waits for review)'}`;
    return (
      // A control that says what it is (issue 44: a chip reading "lease 2 min · hel…" hid the settings), the
      // settings' values beside it where the header has room (opened out), and always in its tooltip.
      <button type="button" className="thread-settings link" data-testid="thread-settings" onClick={start} title={`Thread settings: ${summary}`}>
        <svg className="gear" width="14" height="14" viewBox="0 0 24 24" aria-hidden="true">
          <path
            fill="currentColor"
            d="M19.4 13a7.5 7.5 0 0 0 0-2l2.1-1.6-2-3.5-2.5 1a7.6 7.6 0 0 0-1.7-1L15 3.2h-4l-.4 2.7a7.6 7.6 0 0 0-1.7 1l-2.5-1-2 3.5L6.6 11a7.5 7.5 0 0 0 0 2l-2.1 1.6 2 3.5 2.5-1c.5.4 1.1.7 1.7 1l.4 2.7h4l.4-2.7c.6-.3 1.2-.6 1.7-1l2.5 1 2-3.5L19.4 13ZM13 15.5a3.5 3.5 0 1 1 0-7 3.5 3.5 0 0 1 0 7Z"
            transform="translate(-1 0)"
          />
        </svg>
        <span className="settings-word">Settings</span>
        <span className="settings-summary">
          {boardStore?.kind === 'postgres' && `board ${boardStore.where} · `}lease {seconds(leaseMs)}
          {waitHoldMs !== null && ` · held while waiting for you: ${spellDuration(waitHoldMs)}`}
          {dispatch && ' · idle agents take the next ready task'}
          {uncontained.length > 0 && ` · no sandbox for ${uncontained.join(', ')}`} · verify: {verify ? <code>{verify}</code> : 'none (done waits for review)'}
        </span>
      </button>
    );
  }
  return (
    <section className="thread-settings-panel" aria-labelledby="thread-settings-heading">
      <h2 className="settings-heading" id="thread-settings-heading">
        Thread settings
      </h2>
      <form
        className="thread-settings editing"
        // The fields' bounds are checked by this form (the wait hold, named beside it) and the host (the rest,
        // in the error banner), not by the browser's own bubbles.
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            close();
          }
        }}
      >
        <label>
          Lease (s)
          <input
            data-testid="settings-lease"
            // The line that opened the form is gone: without a field to take it, the focus would fall to the page.
            autoFocus
            type="number"
            min={Limits.minLeaseMs / 1000}
            max={Limits.maxLeaseMs / 1000}
            value={lease}
            onChange={(e) => setLease(e.target.value)}
          />
        </label>
        <label title="How long an agent that waits for you keeps its claims past the lease; then they lapse as waited-too-long">
          Wait hold (min)
          <input
            data-testid="settings-wait-hold"
            type="number"
            step="any"
            min={WaitHoldBounds.minMinutes}
            max={WaitHoldBounds.maxMinutes}
            value={hold}
            aria-invalid={holdError !== null}
            aria-describedby={holdError !== null ? 'settings-wait-hold-error' : undefined}
            onChange={(e) => {
              setHold(e.target.value);
              setHoldError(null);
            }}
          />
        </label>
        {holdError !== null && (
          <span id="settings-wait-hold-error" className="field-error" role="alert" data-testid="settings-wait-hold-error">
            {holdError}
          </span>
        )}
        <label title="Tasks one agent may hold claimed at once by its own claims; you can still assign it more">
          Claims per agent
          <input
            data-testid="settings-claim-limit"
            type="number"
            min={Limits.minClaimLimit}
            max={Limits.maxClaimLimit}
            value={limit}
            onChange={(e) => setLimit(e.target.value)}
          />
        </label>
        <label className="grow">
          Verify command
          <input data-testid="settings-verify" placeholder="e.g. npm test (empty: a person reviews)" value={cmd} onChange={(e) => setCmd(e.target.value)} />
        </label>
        <label className="grow" title="Files the verify command reads besides those it names, taken from the base: work that changes one waits for your review">
          Verify reads
          <input data-testid="settings-verify-files" placeholder="e.g. package.json, .github/workflows" value={reads} onChange={(e) => setReads(e.target.value)} />
        </label>
        <label title="The branch task worktrees start from and are merged back into">
          Base branch
          <input
            data-testid="settings-base-branch"
            placeholder={current ? `current branch (${current})` : 'current branch'}
            value={base}
            onChange={(e) => setBase(e.target.value)}
          />
        </label>
        <label title="How long a parked folder (an ended claim's) stays before its uncommitted work is saved under refs/forkbench/parked/ and the folder removed">
          Parked folders kept (min)
          <input data-testid="settings-parked-grace" type="number" min={0} step="any" value={grace} onChange={(e) => setGrace(e.target.value)} />
        </label>
        <label title="The disk parked folders may take before the oldest are saved and removed without waiting (empty: no budget)">
          Parked folders budget (MB)
          <input data-testid="settings-parked-budget" type="number" min={1} placeholder="none" value={budget} onChange={(e) => setBudget(e.target.value)} />
        </label>
        <label className="grow" title="Files git does not track, copied into each new worktree">
          Copy into worktrees
          <input data-testid="settings-copy-files" placeholder="e.g. .env, config/local.json" value={copy} onChange={(e) => setCopy(e.target.value)} />
        </label>
        <label title="The Thread's default; each agent can be set on or off of its own (its commands in the palette, or forkbench dispatch)">
          <input data-testid="settings-dispatch" type="checkbox" checked={dispatchOn} onChange={(e) => setDispatchOn(e.target.checked)} />
          Idle agents take the next ready task
        </label>
        {dispatchOn && shellLine && (
          <span className="settings-note grow" role="note" data-testid="settings-dispatch-shells">
            {shellLine}
          </span>
        )}
        {/* Issue 43: every agent runs in a sandbox of its own; a person may run a profile's agents without one
            (a tool that needs what the sandbox hides). Read at each launch: the agents running keep theirs. */}
        <fieldset className="settings-sandbox grow" data-testid="settings-uncontained">
          <legend>Run without a sandbox</legend>
          {profiles.map((p) => (
            <label key={p.id} className="inline">
              <input
                type="checkbox"
                data-testid={`settings-uncontained-${p.id}`}
                checked={offFor.includes(p.id)}
                onChange={(e) => setOffFor(e.target.checked ? [...offFor, p.id] : offFor.filter((id) => id !== p.id))}
              />
              {p.label}
            </label>
          ))}
        </fieldset>
        {offFor.length > 0 && (
          <span className="settings-note grow" role="note" data-testid="settings-uncontained-note">
            Agents of these profiles launched from now on are not contained: they reach whatever you can (your files, other panes, the
            board&apos;s data). Agents running now keep what they started with.
          </span>
        )}
        <button type="submit" data-testid="settings-save">
          Save
        </button>
        <button type="button" onClick={close}>
          Cancel
        </button>
      </form>
      <LeaseEvidence />
      {/* Issue 47: the Thread's budget and its own prices, each saved by its own button. */}
      <CostSettings />
      <SharedBoardSetting />
    </section>
  );
}
