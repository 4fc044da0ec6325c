import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Limits } from '../../../src-shared/board/limits.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { nextEvent, paneText } from '../../helpers/events.js';
import { hostFixture } from '../../helpers/hosts.js';

/**
 * Issue 42, finding 5: an agent in a real pane claimed every ready task in a loop. With the Thread's claim
 * limit, its own `forkbench claim` stops at the limit with `claim-limit` and a reason it can act on, the rest
 * stay ready for other agents, and the person can still give it more.
 */
const fixture = hostFixture('claim-limit');
beforeAll(() => ensureBuilt());
afterEach(() => fixture.cleanup());

describe('one agent cannot claim the whole board', () => {
  it('a pane that claims in a loop gets the limit, then claim-limit naming its tasks; the person may assign past it', async () => {
    const host = await fixture.open();
    for (let i = 1; i <= 6; i++) await host.board.run((e) => e.addTask({ title: `task ${i}` }));
    const refused = nextEvent(host, (e) => e.kind === 'write-rejected' && e.op === 'claim');
    const agent = await host.roster.launch('custom', { command: 'for i in 1 2 3 4 5 6; do forkbench claim; done; echo "LOOP"-DONE; exec sleep 600' });
    const out = await paneText(host, agent.id, /LOOP-DONE/);
    expect(await refused).toMatchObject({ kind: 'write-rejected', agentId: agent.id, code: 'claim-limit' });
    const mine = host.board.engine.claimsOf(agent.id).sort();
    expect(mine).toEqual(['T-1', 'T-2', 'T-3']);
    expect(mine).toHaveLength(Limits.defaultClaimLimit);
    expect(out).toMatch(/claim-limit/);
    expect(out).toMatch(/holds 3 claimed tasks \(T-1, T-2, T-3\)/);
    for (const id of ['T-4', 'T-5', 'T-6']) expect(host.board.state.tasks.get(id)?.state).toBe('open');
    // The person's drag is the person's call: it goes past the limit.
    expect((await host.board.run((e) => e.assign('T-4', agent.id))).ok).toBe(true);
    expect(host.board.engine.claimsOf(agent.id)).toHaveLength(4);
  }, 60_000);
});
