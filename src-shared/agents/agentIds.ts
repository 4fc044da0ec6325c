/**
 * An agent's id is `<profile>-<n>-<12 hex>`: its profile, the number of its default name ("shell 3"), and
 * 48 random bits so an id is never reused, across host restarts too. The window names agents from the
 * host's list; an agent that left it (closed, relaunched, of an earlier run) is still named in the event
 * log and the task history, and the id is then all there is to name it by.
 */
const AGENT_ID = /^([a-z][a-z0-9]{0,31})-(\d{1,9})-[0-9a-f]{12}$/;

export function agentIdOf(profile: string, n: number, randomHex: string): string {
  return `${profile}-${n}-${randomHex}`;
}

/** "shell 3" for `shell-3-…`; null for an id not of that form (a person, a test's own id). */
export function nameFromAgentId(id: string): string | null {
  const m = AGENT_ID.exec(id);
  return m ? `${m[1]} ${m[2]}` : null;
}
