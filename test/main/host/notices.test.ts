import { afterEach, describe, expect, it } from 'vitest';
import { Limits } from '../../../src-shared/board/limits.js';
import type { WindowPush } from '../../../src-shared/protocol/windowApi.js';
import { managerFixture } from '../../helpers/hosts.js';

const fixture = managerFixture('notices');
afterEach(() => fixture.cleanup());

async function openThread() {
  const { threads, folder } = fixture.make();
  const pushes: WindowPush[] = [];
  threads.onPush.event((p) => void pushes.push(p));
  const host = await threads.open(folder);
  return { host, pushes };
}

describe('the host’s notices', () => {
  it('a lapse whose task used up its attempts says it went to Needs attention, not back to the backlog', async () => {
    const { host, pushes } = await openThread();
    await host.board.run((e) => e.setSettings({ leaseMs: Limits.minLeaseMs, poisonLimit: 1 }));
    await host.board.run((e) => e.addTask({ title: 'flaky migration' }));
    const agent = await host.roster.launch('custom', { command: 'exec sleep 600', name: 'worker' });
    expect((await host.board.run((e) => e.claim(agent.id, 'T-1'))).ok).toBe(true);
    const notice = await new Promise<WindowPush>((resolve) => {
      const sub = host.board.onEvent(() => {
        const n = pushes.find((p) => p.type === 'notify');
        if (n) {
          sub.dispose();
          resolve(n);
        }
      });
    });
    expect(host.board.state.tasks.get('T-1')?.state).toBe('needs-attention');
    expect(notice).toMatchObject({ type: 'notify', key: host.key, about: 'lapse:T-1', title: 'Claim lapsed: T-1' });
    expect(notice.type === 'notify' && notice.body).toBe(`worker's lease on "flaky migration" ran out; its attempts are used up, so it waits in Needs attention for a person.`);
  });
});
