import { memo, useState } from 'react';
import { askConfirm } from './confirm.js';
import type { AgentLastRun } from '../../src-shared/protocol/windowApi.js';
import { showControls } from '../../src-shared/text/controlChars.js';
import { describeExit } from '../state/boardState.js';
import { useApp, useController } from '../state/hooks.js';

/** How an agent of the last run ended, in a person's words. */
export function describeEnding(r: AgentLastRun): string {
  if (r.how === 'host-stopped') return 'ended when the host stopped';
  // Its pty host may have seen how it ended while no board host ran: said, since "killed" is not "exited".
  if (r.how === 'found-gone') return `ended while no host was watching it${r.exit ? ` (${describeExit(r)})` : ''}`;
  return describeExit(r);
}

/** When it ended, as recorded then (its host saw it, or its pty host did), and whether its host was there:
 *  `while its host ran, at 17:52:03`. Empty for a record that kept no time. */
export function endingTime(r: AgentLastRun): string {
  if (r.at === undefined) return '';
  const at = new Date(r.at).toLocaleTimeString();
  return r.how === 'exited' ? `while its host ran, at ${at}` : `at ${at}`;
}

/** Up to this many ended agents are listed at once; more fold into one row (issue 44: twelve rows swallowed
 *  the terminals), opened by its toggle. */
const FEW_ENDED = 3;

/**
 * The agents the last run of the host ended (its Ctrl-C, a crash, or their own exit before it), where the
 * tab strip would otherwise say "No agents yet.": one row saying how many, with Relaunch all and Dismiss all,
 * and, opened (at once when there are few), who each was, how it ended and what it held, with Relaunch (a new
 * process of the same profile and name in the Thread's folder), Resume where its CLI keeps a conversation,
 * and Dismiss (its record goes). `none`: the strip has no tab, so say that too when nothing ended.
 */
export function EndedAgents({ none }: { none: boolean }) {
  const c = useController();
  const ids = useApp((s) => s.endedAgentIds);
  const [opened, setOpened] = useState<boolean | null>(null);
  if (ids.length === 0) return none ? <span className="tabs-empty">No agents yet.</span> : null;
  const open = opened ?? ids.length <= FEW_ENDED;
  const relaunchAll = async () => {
    for (const id of [...ids]) await c.relaunch(id);
  };
  const dismissAll = async () => {
    const resumable = ids.filter((id) => c.state.agents[id]?.resumable).length;
    const ok = await askConfirm(
      `Dismiss ${ids.length} ended agents?`,
      `Their records go${resumable ? `, and ${resumable === 1 ? 'one conversation' : `${resumable} conversations`} can no longer be resumed` : ''}. Their tasks stay on the board as they are.`,
      'Dismiss all',
    );
    if (ok) for (const id of [...ids]) await c.actions.closeAgent(id);
  };
  return (
    <section className={`ended-agents${none ? ' alone' : ''}`} aria-label="Agents the last run ended" data-testid="ended-agents">
      <button type="button" className="ended-head" data-testid="ended-toggle" aria-expanded={open} aria-controls="ended-list" onClick={() => setOpened(!open)}>
        <span aria-hidden="true">{open ? '▾' : '▸'}</span> {ids.length === 1 ? '1 agent' : `${ids.length} agents`} ended with the last run
      </button>
      <span className="ended-actions">
        <button type="button" data-testid="ended-relaunch-all" onClick={() => void relaunchAll()}>
          Relaunch all
        </button>
        <button type="button" data-testid="ended-dismiss-all" onClick={() => void dismissAll()}>
          Dismiss all
        </button>
      </span>
      {open && (
        <ul id="ended-list">
          {ids.map((id) => (
            <EndedAgent key={id} id={id} />
          ))}
        </ul>
      )}
    </section>
  );
}

/** `held T-1 "Write the parser", T-4`: ids with their titles as the agent's record keeps them, from the board
 *  it was on as it ended (controls shown). Never the board on screen's: after a board switch the same id
 *  names another task there (issue 44), so a record of another board says which, and the ids its tasks were
 *  copied to here (issue 45). A record from before titles were kept names ids alone. */
export function heldText(r: Pick<AgentLastRun, 'held' | 'titles' | 'elsewhere' | 'now'>): string {
  if (r.held.length === 0) return 'held no task';
  const titleOf = (t: string) => (r.titles && Object.hasOwn(r.titles, t) ? r.titles[t] : undefined);
  const nowOf = (t: string) => (r.now && Object.hasOwn(r.now, t) ? ` (now ${r.now[t]})` : '');
  const one = (t: string) => `${titleOf(t) !== undefined ? `${t} "${showControls(titleOf(t)!, 'none')}"` : t}${nowOf(t)}`;
  return `held ${r.held.map(one).join(', ')}${r.elsewhere ? ` on ${r.elsewhere}` : ''}`;
}

const EndedAgent = memo(function EndedAgent({ id }: { id: string }) {
  const c = useController();
  const a = useApp((s) => s.agents[id]);
  const profile = useApp((s) => s.profiles.find((p) => p.id === s.agents[id]?.profile)?.label);
  // One string, so the selector's answer compares equal while nothing it names changed.
  const held = useApp((s) => heldText(s.agents[id]?.lastRun ?? { held: [] }));
  if (!a?.lastRun) return null;
  return (
    <li className="ended-agent" data-testid={`ended-${id}`} data-how={a.lastRun.how}>
      <span className="ended-name">{a.name}</span> <span className="muted">({profile ?? a.profile})</span>{' '}
      <span data-testid={`ended-how-${id}`}>{describeEnding(a.lastRun)}</span>
      {a.lastRun.at !== undefined && (
        <>
          {' '}
          <span className="muted" data-testid={`ended-at-${id}`}>
            {endingTime(a.lastRun)}
          </span>
        </>
      )}
      ;{' '}
      <span data-testid={`ended-held-${id}`}>{held}</span>
      <span className="ended-actions">
        <button type="button" data-testid={`ended-relaunch-${id}`} onClick={() => void c.relaunch(id)} aria-label={`Relaunch ${a.name}`}>
          Relaunch
        </button>
        {a.resumable && (
          <button type="button" data-testid={`ended-resume-${id}`} onClick={() => void c.resume(id)} aria-label={`Resume ${a.name}'s conversation`}>
            Resume
          </button>
        )}
        <button type="button" data-testid={`ended-dismiss-${id}`} onClick={() => void c.actions.closeAgent(id)} aria-label={`Dismiss ${a.name}`}>
          Dismiss
        </button>
      </span>
    </li>
  );
});
