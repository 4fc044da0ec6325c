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
