import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../../helpers/cli.js';
import { nextEvent } from '../../helpers/events.js';
import { hostFixture } from '../../helpers/hosts.js';
import { waitFor } from '../../helpers/pty.js';

/**
 * Issue 42, finding 5: an agent kept its claims past the lease by printing a dot every 15 s. Real panes, the
 * real liveness loop, a short lease: a pane that only prints (and sleeps) loses its claim once it has made no
 * board call and used no real CPU for a lease, while a pane that prints as it works (and so uses the CPU)
 * keeps its claim renewed.
 */
const fixture = hostFixture('output-progress');
beforeAll(() => ensureBuilt());
afterEach(() => fixture.cleanup());

/** The Thread's shortest lease, and its renew rhythm a quarter of it. */
const LEASE = 2_000;

describe('pane output alone is not progress for a claim', () => {
  it('a dot printer lapses within a few leases of its last board call; a worker that prints and computes stays renewed', async () => {
    const host = await fixture.open({ liveness: true });
    await host.board.run((e) => e.setSettings({ leaseMs: LEASE, renewIntervalMs: 500 }));
    await host.board.run((e) => e.addTask({ title: 'held by dots' }));
    await host.board.run((e) => e.addTask({ title: 'held by work' }));
    const dotsGranted = nextEvent(host, (e) => e.kind === 'grant' && e.taskId === 'T-1');
    const dots = await host.roster.launch('custom', { command: 'forkbench claim T-1; while :; do printf .; sleep 0.3; done' });
    const grant = await dotsGranted;
    const lapsed = nextEvent(host, (e) => e.kind === 'claim-ended' && e.taskId === 'T-1', 30_000);
    const workGranted = nextEvent(host, (e) => e.kind === 'grant' && e.taskId === 'T-2');
    // About 15 ms of bash arithmetic, then a dot, a turn every ~0.1 s: a tenth of a core, as a CLI streaming an answer uses.
    const worker = await host.roster.launch('custom', { command: 'forkbench claim T-2; while :; do i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; printf .; sleep 0.1; done' });
    await workGranted;
    const ended = await lapsed;
    expect(ended).toMatchObject({ kind: 'claim-ended', reason: 'lapsed', agentId: dots.id });
    const heldFor = ended.mono - grant.mono;
    console.log(`the dot printer's claim lapsed ${heldFor} ms after its grant (lease ${LEASE} ms)`);
    // It printed all along: the lapse is no silence.
    const screen = await host.roster.relay.screen(dots.id);
    expect(screen).toMatch(/\.{5,}/);
    expect(host.roster.agents().find((a) => a.id === dots.id)?.status).toBe('stalled');
    // The worker, meanwhile and for three more leases, keeps T-2 renewed by the liveness check.
    const renewedSince = ended.mono;
    await waitFor(() => host.board.engine.now() > renewedSince + 3 * LEASE, 20_000, 'three more leases');
    const t2 = host.board.state.tasks.get('T-2');
    expect(t2).toMatchObject({ state: 'claimed', claim: { agentId: worker.id } });
    expect(host.board.engine.claimsOf(worker.id)).toEqual(['T-2']);
  }, 60_000);
});
