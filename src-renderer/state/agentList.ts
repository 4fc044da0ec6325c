import { showControls } from '../../src-shared/text/controlChars.js';
import type { AgentInfo } from '../../src-shared/protocol/windowApi.js';
import { describeExit } from './boardState.js';

/** An agent as the host sent it, unchanged: its tab need not re-render. */
export function sameAgent(a: AgentInfo, b: AgentInfo): boolean {
  return (
    a.name === b.name &&
    a.status === b.status &&
    a.state?.state === b.state?.state &&
    a.state?.source === b.state?.source &&
    a.state?.text === b.state?.text &&
    a.pid === b.pid &&
    a.resumable === b.resumable &&
    a.profile === b.profile &&
    a.host === b.host &&
    a.exit?.code === b.exit?.code &&
    a.lastRun?.how === b.lastRun?.how &&
    (a.lastRun?.held ?? []).join() === (b.lastRun?.held ?? []).join() &&
    JSON.stringify(a.lastRun?.titles ?? null) === JSON.stringify(b.lastRun?.titles ?? null) &&
    a.lastRun?.elsewhere === b.lastRun?.elsewhere &&
    JSON.stringify(a.lastRun?.now ?? null) === JSON.stringify(b.lastRun?.now ?? null) &&
    a.lastRun?.exit?.code === b.lastRun?.exit?.code &&
    a.lastRun?.exit?.signal === b.lastRun?.exit?.signal &&
    a.exit?.signal === b.exit?.signal &&
    a.containment?.by === b.containment?.by &&
    (a.containment?.by === null ? a.containment.why : '') === (b.containment?.by === null ? b.containment.why : '') &&
    a.claims.length === b.claims.length &&
    a.claims.every((c, i) => b.claims[i] === c)
  );
}

/**
 * An agent another host of a shared board runs: its pane is on that host, so this window has no terminal for
 * it and must never call a pane procedure (screen, input, resize, ack, close, relaunch, resume) for it.
 */
export function runsElsewhere(a: AgentInfo | undefined): boolean {
  return a?.host !== undefined;
}

/** An agent as a person tells it apart: "shell 1", or "shell 1 on build-box" for another host's (both hosts
 *  may have a "shell 1"). The host's name comes from another machine: its controls are shown, never obeyed. */
export function agentLabel(a: AgentInfo): string {
  return runsElsewhere(a) ? `${a.name} on ${showControls(a.host ?? '', 'none')}` : a.name;
}

/** The ids of the agents whose panes are on this window's host: the only ones it has terminals for. */
export function localIds(list: readonly AgentInfo[]): string[] {
  return list.filter((a) => !runsElsewhere(a)).map((a) => a.id);
}

/**
 * Keep the selected tab if it still exists; else the first running agent of this host, else the first of
 * this host, else another host's: a window opens on a terminal it has when it has one.
 */
export function pickActive(current: string | null, list: readonly AgentInfo[]): string | null {
  if (current && list.some((a) => a.id === current)) return current;
  const here = list.filter((a) => !runsElsewhere(a));
  return (here.find((a) => a.status !== 'exited') ?? here[0] ?? list[0])?.id ?? null;
}

/** The host's list by id, keeping unchanged AgentInfo objects identical so their tabs do not re-render. */
export function keepUnchanged(old: Readonly<Record<string, AgentInfo>>, list: readonly AgentInfo[]): Record<string, AgentInfo> {
  const agents: Record<string, AgentInfo> = Object.fromEntries(list.map((a) => [a.id, a]));
  for (const a of list) {
    const o = old[a.id];
    if (o && sameAgent(o, a)) agents[a.id] = o;
  }
  return agents;
}

/** The same ids in the same order: the tab strip need not be laid out again. */
export function sameOrder(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => b[i] === id);
}

/** An agent's status word as its tab and the agent list say it: the host it runs on, its exit, or its status. */
export function statusText(a: AgentInfo): string {
  if (a.host !== undefined) return `on ${a.host}`;
  return a.status === 'exited' ? describeExit(a) : a.status;
}

/** The host's list split: the agents with tabs, and those the last run of the host ended (AgentInfo.lastRun),
 *  which have no terminal here and are listed apart (EndedAgents) until resumed, relaunched or dismissed. */
export function splitEnded(list: readonly AgentInfo[]): { tabs: AgentInfo[]; ended: AgentInfo[] } {
  return { tabs: list.filter((a) => a.lastRun === undefined), ended: list.filter((a) => a.lastRun !== undefined) };
}
