import { paneJudge, type PeerJudgeFactory } from '../../src-main/agents/peerJudge.js';

/**
 * The peer judges a test host may take instead of the real one (src-main/agents/peerJudge.ts). Every test
 * runs with the real judge — a secret works only from its own agent's pane — unless it passes one of these
 * and says why where it does.
 *
 * `secretsFromTheTestProcess`: a secret works from any process, so the test process can stand in for an
 * agent (its git, its CLI) without a pane. Calls with no secret (a git hook's person check, a person's
 * record) are still judged for real: the test process is a person, an agent's pane is not.
 */
export const secretsFromTheTestProcess: PeerJudgeFactory = (panes) => {
  const real = paneJudge()(panes);
  return { callerOf: (socket) => real.callerOf(socket), refusal: async () => null };
};
