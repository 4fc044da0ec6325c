/**
 * What a person reads when this host cannot show a task's work (issue 45, item 4): where it is, why it is not
 * here, and what to do, for each cause. The causes are found with real hosts, git and PostgreSQL in
 * test/main/thread/reviewAcrossHosts.test.ts; here, the words of the cases those runs do not reach.
 */
import { describe, expect, it } from 'vitest';
import { whereWorkIs, type WorkFacts } from '../../../src-main/git/workReach.js';
import { remoteTaskRef, taskBranch } from '../../../src-shared/git/taskBranch.js';

const sha = 'a'.repeat(40);
const facts = (o: Partial<WorkFacts>): WorkFacts => ({ taskId: 'T-3', ref: remoteTaskRef(taskBranch('0a1b2c3d', 'T-3')), why: 'not-pushed', sha, host: 'buildbox', here: false, agent: 'claude 2', agentLive: false, remote: { name: 'origin', url: 'git@example.com:team/app.git' }, ...o });

describe('where the work is, as the review dialog says it', () => {
  it('no remote: the work is only in the other host’s clone; review it there, or give the clones one remote', () => {
    expect(whereWorkIs(facts({ why: 'no-remote', remote: null }))).toBe(
      "T-3's work, commit aaaaaaaaaa by claude 2 on buildbox, is not in this clone, and this Thread names no remote to fetch it from: it is only in buildbox's clone. Review it in buildbox's window, or give every host's clone one shared remote (Thread settings) so work travels between them. Approval stays off until this host can show it.",
    );
  });

  it('not pushed, its host not running it now: start Forkbench there again', () => {
    expect(whereWorkIs(facts({}))).toBe(
      "T-3's work, commit aaaaaaaaaa by claude 2 on buildbox, is not in this clone, and origin does not have it under refs/forkbench/tasks/0a1b2c3d/T-3: buildbox has not pushed it yet, or it was lost with that host. Forkbench on buildbox pushes it while it runs: start it there again if it stopped, then press Refresh, or review it in buildbox's window. Approval stays off until this host can show it.",
    );
  });

  it('a board that does not say which host made it, and a commit this host made and no longer has', () => {
    expect(whereWorkIs(facts({ host: null, why: 'unreachable', cause: 'ssh: connect to host example.com port 22: Connection timed out' }))).toBe(
      "T-3's work, commit aaaaaaaaaa by claude 2 on another host, is not in this clone, and origin (git@example.com:team/app.git) could not be reached from this host to fetch it (ssh: connect to host example.com port 22: Connection timed out). Check this host's access to it, then press Refresh, or review it in the window of the host it was made on. Approval stays off until this host can show it.",
    );
    expect(whereWorkIs(facts({ here: true, why: 'no-remote', remote: null }))).toBe(
      "T-3's work, commit aaaaaaaaaa by claude 2 on this host, is not in this clone any more, and this Thread names no remote to fetch it from, so nothing here can show it. Reject it, so its agent commits the work again. Approval stays off until this host can show it.",
    );
  });
});
