import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { appendLog, filterLog, firstOf, LOG_CAP, mergeLines, parseLogQuery, prependLog, summarize, toLogEntry, type LogEntry } from '../../../src-renderer/state/eventLog.js';
import { engineWith } from '../../helpers/renderer.js';

describe('event log lines', () => {
  it('has one human line per event kind the engine emits, rejected writes with their code', () => {
    const { engine, events } = engineWith(['parse the config']);
    engine.claim('a1', 'T-1');
    engine.assign('T-1', 'a2');
    engine.note('a1', 'T-1', 'still mine?');
    const names = (id: string) => ({ a1: 'shell 1', a2: 'shell 2', user: 'you' })[id] ?? id;
    const lines = events.map((e) => toLogEntry(e, names));
    expect(lines.map((l) => l.kind)).toEqual(['thread-created', 'task-added', 'grant', 'reassign', 'write-rejected']);
    expect(lines[1]!.summary).toBe('T-1 added by you: parse the config');
    expect(lines[2]!.summary).toMatch(/^T-1 claimed by shell 1 \(token \d+\)$/);
    expect(lines[3]!.summary).toMatch(/^T-1 reassigned from shell 1 to shell 2 by you/);
    const rejected = lines[4]!;
    expect(rejected.code).toBe('stale-token');
    expect(rejected.summary).toContain('shell 1 note T-1 rejected: stale-token');
    expect(lines.slice(0, 4).every((l) => l.code === null)).toBe(true);
  });

  it('reads a host gone from a shared board by its name, controls shown as escapes, with the claims it ended (issue 45)', () => {
    const { engine, events } = engineWith(['held on the lost host']);
    engine.claim('a1', 'T-1');
    engine.hostGone({ id: 'h-2', name: 'evil\u001b[2Jbox-3f9c' }, 'lost', ['a1'], 1);
    engine.hostGone({ id: 'h-3', name: 'buildbox-77aa' }, 'left', [], 2);
    const [ended, lost, left] = events.slice(-3);
    expect(ended).toMatchObject({ kind: 'claim-ended', taskId: 'T-1', agentId: 'a1', reason: 'host-lost' });
    expect(lost).toMatchObject({ kind: 'host-gone', how: 'lost', agents: 1, claims: 1 });
    expect(summarize(lost!)).toBe('host evil\\x1b[2Jbox-3f9c was lost (it stopped renewing its lease; it ran 1 agent); 1 claim of its agents ended');
    expect(summarize(left!)).toBe('host buildbox-77aa left the board (it ran 2 agents)');
  });

  it('clips long text to one line', () => {
    const { engine, events } = engineWith([]);
    engine.setGoal('x'.repeat(500) + '\nsecond line');
    const s = summarize(events.at(-1)!);
    expect(s.length).toBeLessThan(120);
    expect(s).not.toContain('\n');
  });

  it("reads an agent's state change with its source, and its prompt's controls as escapes, clipped", () => {
    const names = (id: string) => ({ a1: 'claude 1' })[id] ?? id;
    const at = { at: 0, mono: 0 };
    const state = (seq: number, e: Pick<Extract<BoardEvent, { kind: 'agent-state' }>, 'state' | 'source' | 'text'>): BoardEvent => ({ ...at, seq, kind: 'agent-state', agentId: 'a1', ...e });
    const lines = [
      state(1, { state: 'needs-input', source: 'hook', text: 'Bash: touch permitted.txt' }),
      state(2, { state: 'working', source: 'terminal', text: null }),
      state(3, { state: 'needs-input', source: 'screen', text: 'Run \x1b[2J now?\nYes' }),
      state(4, { state: 'idle', source: 'hook', text: null }),
      state(5, { state: 'stalled', source: 'liveness', text: null }),
      state(6, { state: 'needs-input', source: 'terminal', text: `Approve ${'x'.repeat(400)}` }),
    ].map((e) => toLogEntry(e, names));
    expect(lines.map((l) => l.summary).slice(0, 5)).toEqual([
      'claude 1 waiting for you (from its hook): Bash: touch permitted.txt',
      'claude 1 working (from the terminal)',
      'claude 1 waiting for you (from the screen): Run \\x1b[2J now?\\x0aYes',
      'claude 1 idle (from its hook)',
      'claude 1 stalled (from liveness)',
    ]);
    expect(lines.every((l) => l.kind === 'agent-state' && l.code === null)).toBe(true);
    const long = lines[5]!.summary;
    expect(long.startsWith('claude 1 waiting for you (from the terminal): Approve xxx')).toBe(true);
    expect(long.length).toBeLessThan(250);
  });

  it('keeps the newest ~500 lines', () => {
    const mk = (seq: number) => ({ seq, at: 0, kind: 'note' as const, summary: '', code: null, repeat: 1 });
    let log = appendLog([], Array.from({ length: 400 }, (_, i) => mk(i + 1)));
    log = appendLog(log, Array.from({ length: 300 }, (_, i) => mk(i + 401)));
    expect(log).toHaveLength(LOG_CAP);
    expect(log[0]!.seq).toBe(201);
    expect(log.at(-1)!.seq).toBe(700);
    expect(appendLog(log, [])).toBe(log);
  });

  it('folds repeated identical renewals into one line with a count, and nothing else', () => {
    const renew = (seq: number, summary = 'T-1 lease renewed for shell 1 (liveness)') => ({ seq, at: seq, kind: 'renew' as const, summary, code: null, repeat: 1 });
    let log = appendLog([], [renew(1), renew(2), renew(3)]);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ seq: 3, repeat: 3 });
    log = appendLog(log, [renew(4, 'T-2 lease renewed for shell 1 (liveness)'), renew(5)]);
    expect(log.map((e) => e.repeat)).toEqual([3, 1, 1]);
    const note = { seq: 6, at: 6, kind: 'note' as const, summary: 'n', code: null, repeat: 1 };
    expect(appendLog(appendLog([], [note]), [{ ...note, seq: 7 }])).toHaveLength(2);
  });

  it('reads worktree events, a claim ended for want of one, and a commit the fence refused', () => {
    const names = (id: string) => ({ a1: 'shell 1', user: 'you' })[id] ?? id;
    const at = { at: 0, mono: 0 };
    const worktree = { path: '/data/wt/T-3', branch: 'forkbench/T-3', base: 'main', baseCommit: 'abc' };
    const events: BoardEvent[] = [
      { ...at, seq: 1, kind: 'worktree-set', taskId: 'T-3', worktree, by: 'forkbench' },
      { ...at, seq: 2, kind: 'claim-ended', taskId: 'T-4', agentId: 'a1', token: 9, reason: 'no-worktree', to: 'open' },
      { ...at, seq: 3, kind: 'worktree-removed', taskId: 'T-3', by: 'user', why: 'merged' },
      { ...at, seq: 4, kind: 'worktree-removed', taskId: 'T-5', by: 'user', why: 'removed' },
      { ...at, seq: 5, kind: 'write-rejected', taskId: 'T-3', agentId: 'a1', token: 4, op: 'fence', code: 'stale-token', message: 'token 4 is over; T-3 is now token 6' },
    ];
    const lines = events.map((e) => toLogEntry(e, names));
    expect(lines.map((l) => l.summary)).toEqual([
      'T-3 worktree forkbench/T-3 ready (from main)',
      "T-4: shell 1's claim ended, no worktree → open",
      'T-3 merged into its base; worktree removed',
      'T-5 worktree removed by you',
      "shell 1's git commit/push on T-3 refused (stale-token): token 4 is over; T-3 is now token 6",
    ]);
    expect(lines[4]!.code).toBe('stale-token');
  });
});

describe('the event log filter', () => {
  const entry = (seq: number, kind: LogEntry['kind'], summary: string, code: string | null = null): LogEntry => ({ seq, at: seq, kind, summary, code, repeat: 1 });
  const log = [
    entry(1, 'grant', 'T-3 claimed by shell 2 (token 4)'),
    entry(2, 'renew', 'T-3 lease renewed for shell 2 (liveness)'),
    entry(3, 'write-rejected', 'shell 1 note T-3 rejected: stale-token: your claim ended', 'stale-token'),
    entry(4, 'note', 'T-4 note by shell 1: done'),
  ];
  it('hides renewals unless asked, and keeps lines holding every word of the query', () => {
    expect(filterLog(log, { renewals: false, query: '' }).map((e) => e.seq)).toEqual([1, 3, 4]);
    expect(filterLog(log, { renewals: true, query: '' })).toBe(log);
    expect(filterLog(log, { renewals: false, query: 'T-3 REJECTED' }).map((e) => e.seq)).toEqual([3]);
    expect(filterLog(log, { renewals: true, query: 't-3 shell 2' }).map((e) => e.seq)).toEqual([1, 2]);
    expect(filterLog(log, { renewals: false, query: 'stale-token' }).map((e) => e.seq)).toEqual([3]);
  });
});

describe('the event log filter, by task id (issue 32, finding 3)', () => {
  const entry = (seq: number, kind: LogEntry['kind'], summary: string): LogEntry => ({ seq, at: seq, kind, summary, code: null, repeat: 1 });
  const log = [
    entry(1, 'task-added', 'T-2 added by you: the parser'),
    entry(2, 'task-added', 'T-20 added by you: the lexer'),
    entry(3, 'task-added', 'T-2000 added by you: docs'),
    entry(4, 'grant', 'T-2 claimed by shell 1 (token 1)'),
    entry(5, 'reassign', 'T-2 reassigned from shell 1 to shell 2 by you (token 2)'),
    entry(6, 'write-rejected', "shell 1's git commit/push on T-2 refused (stale-token): token 1 is over"),
    entry(7, 'worktree-set', 'T-21 worktree forkbench/T-21 ready (from main)'),
    entry(8, 'note', 'T-3 note by shell 2: see T-2: it holds the grammar'),
    entry(9, 'agent-state', 'shell 1 waits for you: run fT-2?'),
  ];
  const seqsOf = (query: string) => filterLog(log, { renewals: false, query }).map((e) => e.seq);

  it('matches a task id whole: T-2 is not T-20, T-21 or T-2000, in any case', () => {
    expect(seqsOf('T-2')).toEqual([1, 4, 5, 6, 8]);
    expect(seqsOf('t-2')).toEqual([1, 4, 5, 6, 8]);
    expect(seqsOf('T-20')).toEqual([2]);
    expect(seqsOf('T-21')).toEqual([7]);
    expect(seqsOf('T-2 refused')).toEqual([6]);
    expect(seqsOf('T-2 T-3')).toEqual([8]);
  });

  it('keeps the substring match for every other word', () => {
    expect(seqsOf('T-')).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(seqsOf('T-2x')).toEqual([]);
    expect(seqsOf('lex')).toEqual([2]);
    expect(seqsOf('forkbench/T-2')).toEqual([7]);
  });

  it('reads the task ids a filter names, as the board spells them', () => {
    expect(parseLogQuery('t-2 rejected T-30')).toEqual({ words: ['t-2', 'rejected', 't-30'], taskIds: ['T-2', 'T-30'] });
    expect(parseLogQuery('T-2x shell 2').taskIds).toEqual([]);
  });
});

describe('older pages put before the lines (issue 32, finding 3)', () => {
  const mk = (seq: number, kind: LogEntry['kind'] = 'note', summary = `n${seq}`): LogEntry => ({ seq, at: seq, kind, summary, code: null, repeat: 1 });
  const newestFirst = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => mk(from - i));
  const seqs = (l: readonly LogEntry[]) => l.map((e) => e.seq);

  it('puts a page (newest first) before the lines, once each where they overlap', () => {
    const held = appendLog([], newestFirst(10, 6).reverse());
    const { lines, droppedNewest } = prependLog(held, newestFirst(7, 3));
    expect(seqs(lines)).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
    expect(droppedNewest).toBe(false);
    expect(prependLog(lines, []).lines).toBe(lines);
  });

  it('refuses a page that does not meet the lines (they moved on while it was read)', () => {
    const held = appendLog([], newestFirst(20, 11).reverse());
    expect(prependLog(held, newestFirst(8, 1)).lines).toBe(held);
  });

  it('keeps at most `cap` lines, dropping the newest and saying so', () => {
    const held = appendLog([], newestFirst(20, 11).reverse());
    const { lines, droppedNewest } = prependLog(held, newestFirst(10, 1), 15);
    expect(seqs(lines)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    expect(droppedNewest).toBe(true);
  });

  it('folds renewals across the join, and a line remembers the first event it stands for', () => {
    const renew = (seq: number) => mk(seq, 'renew', 'T-1 lease renewed for shell 1 (liveness)');
    const held = appendLog([], [renew(5), renew(6), mk(7)]);
    expect(held.map((e) => [e.seq, firstOf(e), e.repeat])).toEqual([
      [6, 5, 2],
      [7, 7, 1],
    ]);
    const { lines } = prependLog(held, [renew(4), renew(3), mk(2)]);
    expect(lines.map((e) => [e.seq, firstOf(e), e.repeat])).toEqual([
      [2, 2, 1],
      [6, 3, 4],
      [7, 7, 1],
    ]);
  });

  it('merges a task page with the lines, each event once, in the board order', () => {
    expect(seqs(mergeLines([mk(5), mk(9)], [mk(1), mk(5), mk(7)]))).toEqual([1, 5, 7, 9]);
  });
});
