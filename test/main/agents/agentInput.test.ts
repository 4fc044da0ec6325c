import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { type BoardService } from '../../../src-main/board/boardService.js';
import { callAsAgent } from '../../../src-main/agents/agentRpc.js';
import { RpcCode } from '../../../src-shared/protocol/jsonrpc.js';
import { serializeBoard } from '../../../src-shared/board/serialized.js';

/**
 * Each agent method validates its own input (its schema derived from the one method table): a call with a
 * field missing, of the wrong kind, or not the method's at all is refused before its handler runs, with
 * JSON-RPC's invalid-params code and a message naming the field, and the board is left as it was.
 */
let root: string;
let board: BoardService;
const AGENT = 'a1';
let token = 0;

beforeAll(async () => {
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-input-'));
  board = await JournalBoard.open({ dir: join(root, 'board'), threadId: 'input' });
  await board.run((e) => e.addTask({ title: 'held' }));
  const claim = await callAsAgent(board, AGENT, 'claim', { taskId: 'T-1' });
  if (!claim.ok) throw new Error(claim.error.message);
  token = (claim.value as { token: number }).token;
});
afterAll(async () => {
  await board.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const SHA = 'a'.repeat(40);
/** A call with bad input, and the start of the message that must name the field. */
const cases: Array<[method: string, params: Record<string, unknown>, says: RegExp]> = [
  ['show', {}, /^taskId: /],
  ['show', { taskId: 'twelve' }, /^taskId: /],
  ['claim', { taskId: 42 }, /^taskId: /],
  ['renew', { taskId: 'T-1', token: 'one' }, /^token: /],
  ['note', { taskId: 'T-1' }, /^text: /],
  ['note', { taskId: 'T-1', text: 'x', tokn: 1 }, /tokn/],
  ['done', { taskId: 'T-1', note: 7 }, /^note: /],
  ['release', { token: 1 }, /^taskId: /],
  ['add', { body: 'no title' }, /^title: /],
  ['edit', { taskId: 'T-1', title: ['x'] }, /^title: /],
  ['fence', { taskId: 'T-1', ref: 'main' }, /^ref: a full ref name/],
  ['record', { taskId: 'T-1', token: 1, ref: 'refs/heads/forkbench/T-1', from: SHA }, /^to: /],
  ['record', { taskId: 'T-1', token: 1, ref: 'refs/heads/forkbench/T-1', from: SHA, to: 'HEAD' }, /^to: a full commit id/],
  ['status', { state: 'asleep' }, /^state: a state is one of working, needs-input, idle/],
  ['status', { state: 'idle', text: 'x'.repeat(4001) }, /^text: the prompt text is longer than 4000 characters/],
  ['board', { verbose: true }, /verbose/],
];

describe('an agent method given bad input', () => {
  it.each(cases)('%s %j is refused naming the field', async (method, params, says) => {
    const before = JSON.stringify(serializeBoard(board.state));
    const r = await callAsAgent(board, AGENT, method, params);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe(RpcCode.invalidParams);
    expect(r.error.data).toEqual({ reason: 'invalid-input' });
    expect(r.error.message).toMatch(says);
    // Nothing ran: the board, the claim and its lease are as they were.
    expect(JSON.stringify(serializeBoard(board.state))).toBe(before);
  });

  it('the same calls with their input put right are taken', async () => {
    const note = await callAsAgent(board, AGENT, 'note', { taskId: 'T-1', text: 'x', token });
    expect(note.ok).toBe(true);
    const fence = await callAsAgent(board, AGENT, 'fence', { taskId: 'T-1', token });
    expect(fence.ok).toBe(true);
    const add = await callAsAgent(board, AGENT, 'add', { title: 'another' });
    expect(add.ok && (add.value as { title: string }).title).toBe('another');
  });
});
