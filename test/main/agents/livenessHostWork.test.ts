import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAUDE, leaseScript, type LeaseScript } from '../../helpers/leaseScript.js';

/**
 * An agent held up by the host is not quiet: while the host makes its claim's folder (a checkout, or a wait for
 * another host's push of the task's record), its lease is not run down for silence. The two-host chaos run found
 * claims that waited 5 s for a push under a 2 s lease lapse before their agent could start, again and again, so
 * the commit that never reached the remote was never named lost. A real journal board and the real liveness loop,
 * on a fake clock.
 */
let s: LeaseScript | null = null;
const dirs: string[] = [];
afterEach(async () => {
  await s?.close();
  s = null;
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('liveness while the host works for an agent', () => {
  it('a claim whose folder takes three leases to make is still held when it is ready, and runs down from then', async () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'fb-hostwork-'));
    dirs.push(dir);
    s = await leaseScript(dir);
    const lease = s.board.state.settings.leaseMs;
    await s.call(CLAUDE, (e) => e.addTask({ title: 'needs a folder' }));
    const granted = await s.call(CLAUDE, (e) => e.claim(CLAUDE, 'T-1'));
    expect(granted.ok).toBe(true);

    let ready = () => undefined as void;
    const folder = s.agent(CLAUDE).whileHostWorks(() => new Promise<void>((r) => (ready = r)), s.now);
    await s.runTo(s.now() + 3 * lease);
    expect(s.board.state.tasks.get('T-1')?.claim?.agentId).toBe(CLAUDE);

    ready();
    await folder;
    // From the folder's answer on, the agent's own silence counts again: renewed while its answer is less than a
    // lease old, the claim runs out one lease after the last renewal.
    await s.runTo(s.now() + 2 * lease + s.board.state.settings.renewIntervalMs);
    expect(s.board.state.tasks.get('T-1')?.claim ?? null).toBeNull();
  });
});
