import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RpcCode } from '../../../src-shared/protocol/jsonrpc.js';
import { boardEdges, type BoardEdges } from '../../helpers/boardEdges.js';
import { agentProcedures } from '../../../src-shared/protocol/agentSchemas.js';
import { firstIssue } from '../../../src-shared/board/schemas.js';

/**
 * Board text reaches every agent's terminal, so the board refuses what a terminal would act on (issue 16):
 * C0 controls but tab and newline (none at all in a title), DEL, C1, the bidi embeddings, overrides and
 * isolates, and the line and paragraph separators. Refused by the shared schemas at the edges (the window's
 * and the agents'), once; the host's own notes are made printable before they reach the board.
 */
const REFUSED: Array<{ ch: string; named: string }> = [
  { ch: '\x1b', named: 'U+001B (ESC)' },
  { ch: '\x07', named: 'U+0007 (BEL)' },
  { ch: '\x00', named: 'U+0000 (NUL)' },
  { ch: '\x03', named: 'U+0003 (ETX)' },
  { ch: '\x7f', named: 'U+007F (DEL)' },
  { ch: '\x85', named: 'U+0085 (NEL)' },
  { ch: '\x9b', named: 'U+009B (CSI)' },
  { ch: '\x9d', named: 'U+009D (OSC)' },
  { ch: '\u202a', named: 'U+202A (LEFT-TO-RIGHT EMBEDDING)' },
  { ch: '\u202e', named: 'U+202E (RIGHT-TO-LEFT OVERRIDE)' },
  { ch: '\u2066', named: 'U+2066 (LEFT-TO-RIGHT ISOLATE)' },
  { ch: '\u2069', named: 'U+2069 (POP DIRECTIONAL ISOLATE)' },
  { ch: '\u2028', named: 'U+2028 (LINE SEPARATOR)' },
  { ch: '\u2029', named: 'U+2029 (PARAGRAPH SEPARATOR)' },
];

let edges: BoardEdges;
beforeEach(async () => {
  edges = await boardEdges('text');
  expect(await edges.window('board.setGoal', { goal: 'goal' })).toMatchObject({ ok: true });
  expect(await edges.window('task.add', { title: 'plain' })).toMatchObject({ ok: true });
  expect(await edges.window('board.setSettings', { patch: { leaseMs: 60_000 } })).toMatchObject({ ok: true });
});
afterEach(() => edges.dispose());

const refusal = (r: { ok: boolean; error?: { code: string | number; message: string } }, code: string | number = 'invalid-input') => {
  expect(r.ok).toBe(false);
  expect(r.error?.code).toBe(code);
  return r.error?.message ?? '';
};
const agentRefusal = (r: { ok: boolean; error?: { code: string | number; message: string } }) => refusal(r, RpcCode.invalidParams);

describe('the board refuses control characters in its text', () => {
  it.each(REFUSED)('$named in a title, body, note, goal, reason or verify command is refused, naming the character', async ({ ch, named }) => {
    const w = edges.window;
    const seq = edges.board.state.seq;
    expect(refusal(await w('task.add', { title: `a${ch}b` }))).toContain(`the title has a control character ${named} at position 2`);
    expect(refusal(await w('task.add', { title: 'ok', body: `line one\n${ch}` }))).toContain(`the body has a control character ${named} at position 10`);
    expect(refusal(await w('task.note', { taskId: 'T-1', text: `x${ch}` }))).toContain(named);
    expect(refusal(await w('task.edit', { taskId: 'T-1', title: `t${ch}t` }))).toContain(named);
    expect(refusal(await w('task.edit', { taskId: 'T-1', body: `b${ch}` }))).toContain(named);
    expect(refusal(await w('task.edit', { taskId: 'T-1', verify: `npm test${ch}` }))).toContain(`the verify command has a control character ${named}`);
    expect(refusal(await w('board.setGoal', { goal: `g${ch}` }))).toContain(`the goal has a control character ${named}`);
    expect(refusal(await w('board.setSettings', { patch: { verify: `make${ch}` } }))).toContain(named);
    expect(refusal(await w('task.block', { taskId: 'T-1', reason: `why${ch}` }))).toContain(`the reason has a control character ${named}`);
    const c = await edges.agent('agent-1', 'claim', { taskId: 'T-1' });
    if (!c.ok) throw new Error(c.error.message);
    const token = (c.value as { token: number }).token;
    expect(agentRefusal(await edges.agent('agent-1', 'note', { taskId: 'T-1', text: `progress${ch}`, token }))).toContain(`the note has a control character ${named}`);
    expect(agentRefusal(await edges.agent('agent-1', 'done', { taskId: 'T-1', token, note: `done${ch}` }))).toContain(named);
    // nothing but the claim changed the board
    const task = edges.board.state.tasks.get('T-1');
    expect(task).toMatchObject({ title: 'plain', body: '', verify: null, notes: [], state: 'claimed' });
    expect(edges.board.state.goal).toBe('goal');
    expect(edges.board.state.seq).toBeGreaterThan(seq);
  });

  it('the message says where, with the text around it escaped, so the message itself is safe to print', async () => {
    const m = refusal(await edges.window('task.add', { title: 'name\x1b]0;pwned\x07 and more' }));
    expect(m).toMatch(/^the title has a control character U\+001B \(ESC\) at position 5: "name\\x1b\]0;pwned\\x07 and more"/);
    expect(m).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
    // positions count characters as a person does: an emoji before it is one
    expect(refusal(await edges.window('task.add', { title: '😀\u202eabc' }))).toContain('at position 2');
  });

  it('tab and newline stay allowed in bodies, notes, goals and reasons; a title takes neither', async () => {
    const w = edges.window;
    expect((await w('task.add', { title: 'multi', body: 'step 1\n\tstep 2\n' })).ok).toBe(true);
    expect((await w('task.note', { taskId: 'T-1', text: 'a\tb\nc' })).ok).toBe(true);
    expect((await w('board.setGoal', { goal: 'first\nsecond\tthird' })).ok).toBe(true);
    expect((await w('board.setSettings', { patch: { verify: 'npm run build &&\n\tnpm test' } })).ok).toBe(true);
    expect(refusal(await w('task.add', { title: 'a\tb' }))).toContain('U+0009 (HT) at position 2');
    expect(refusal(await w('task.add', { title: 'a\nb' }))).toBe('title must be one line');
    expect(refusal(await w('task.note', { taskId: 'T-1', text: 'windows\r\nline' }))).toContain('U+000D (CR)');
    // ordinary non-ASCII text is text, not control
    expect((await w('task.add', { title: 'café — 日本語 — עברית ✓' })).ok).toBe(true);
  });

  it.each(REFUSED)('$named is refused at the agents’ protocol edge too, before the engine', ({ ch, named }) => {
    const note = agentProcedures.note.input.safeParse({ taskId: 'T-1', text: `x${ch}`, token: 1 });
    expect(note.success).toBe(false);
    if (!note.success) expect(firstIssue(note.error)).toContain(named);
    const add = agentProcedures.add.input.safeParse({ title: 'ok', body: `${ch}` });
    expect(add.success).toBe(false);
    expect(agentProcedures.note.input.safeParse({ taskId: 'T-1', text: 'fine\n\tindented', token: 1 }).success).toBe(true);
  });
});
