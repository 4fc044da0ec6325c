import type { AgentInfo } from '../../src-shared/protocol/windowApi.js';

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
    a.exit?.code === b.exit?.code &&
    a.exit?.signal === b.exit?.signal &&
    a.claims.length === b.claims.length &&
    a.claims.every((c, i) => b.claims[i] === c)
  );
}

/** Keep the selected tab if it still exists; else the first running agent, else the first. */
export function pickActive(current: string | null, list: readonly AgentInfo[]): string | null {
  if (current && list.some((a) => a.id === current)) return current;
  return (list.find((a) => a.status !== 'exited') ?? list[0])?.id ?? null;
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
