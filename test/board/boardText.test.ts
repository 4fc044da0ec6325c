import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src-main/base/clock.js';
import { LeaseEngine } from '../../src-main/board/leaseEngine.js';
import { agentParamSchemas } from '../../src-shared/protocol/agentSchemas.js';
import { firstIssue } from '../../src-shared/board/schemas.js';

/**
 * Board text reaches every agent's terminal, so the board refuses what a terminal would act on (issue 16):
 * C0 controls but tab and newline (none at all in a title), DEL, C1, the bidi embeddings, overrides and
 * isolates, and the line and paragraph separators. Refused by the shared schemas, so the engine (every
 * caller: window, socket, host) and the agents' protocol edge say the same.
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

function setup() {
  const engine = new LeaseEngine(new ManualClock());
  engine.createThread('th', 'goal');
  engine.addTask({ title: 'plain' });
  engine.setSettings({ leaseMs: 60_000 });
  return engine;
}

const refusal = (r: { ok: boolean; error?: { code: string; message: string } }) => {
  expect(r.ok).toBe(false);
  expect(r.error?.code).toBe('invalid-input');
  return r.error?.message ?? '';
};

describe('the board refuses control characters in its text', () => {
  it.each(REFUSED)('$named in a title, body, note, goal, reason or verify command is refused, naming the character', ({ ch, named }) => {
    const engine = setup();
    const seq = engine.state.seq;
    expect(refusal(engine.addTask({ title: `a${ch}b` }))).toContain(`the title has a control character ${named} at position 2`);
    expect(refusal(engine.addTask({ title: 'ok', body: `line one\n${ch}` }))).toContain(`the body has a control character ${named} at position 10`);
    expect(refusal(engine.userNote('T-1', `x${ch}`))).toContain(named);
    expect(refusal(engine.editTask('T-1', { title: `t${ch}t` }))).toContain(named);
    expect(refusal(engine.editTask('T-1', { body: `b${ch}` }))).toContain(named);
    expect(refusal(engine.editTask('T-1', { verify: `npm test${ch}` }))).toContain(`the verify command has a control character ${named}`);
    expect(refusal(engine.setGoal(`g${ch}`))).toContain(`the goal has a control character ${named}`);
    expect(refusal(engine.setSettings({ verify: `make${ch}` }))).toContain(named);
    expect(refusal(engine.block('T-1', `why${ch}`))).toContain(`the reason has a control character ${named}`);
    const c = engine.claim('agent-1', 'T-1');
    if (!c.ok) throw new Error(c.error.message);
    expect(refusal(engine.note('agent-1', 'T-1', `progress${ch}`, c.value.token))).toContain(`the note has a control character ${named}`);
    expect(refusal(engine.done('agent-1', 'T-1', c.value.token, `done${ch}`))).toContain(named);
    // nothing but the claim and the log of the agent's refused writes changed the board
    const task = engine.state.tasks.get('T-1');
    expect(task).toMatchObject({ title: 'plain', body: '', verify: null, notes: [], state: 'claimed' });
    expect(engine.state.goal).toBe('goal');
    expect(engine.state.seq).toBeGreaterThan(seq);
  });

  it('the message says where, with the text around it escaped, so the message itself is safe to print', () => {
    const engine = setup();
    const m = refusal(engine.addTask({ title: 'name\x1b]0;pwned\x07 and more' }));
    expect(m).toMatch(/^the title has a control character U\+001B \(ESC\) at position 5: "name\\x1b\]0;pwned\\x07 and more"/);
    expect(m).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
    // positions count characters as a person does: an emoji before it is one
    expect(refusal(engine.addTask({ title: '😀\u202eabc' }))).toContain('at position 2');
  });

  it('tab and newline stay allowed in bodies, notes, goals and reasons; a title takes neither', () => {
    const engine = setup();
    expect(engine.addTask({ title: 'multi', body: 'step 1\n\tstep 2\n' }).ok).toBe(true);
    expect(engine.userNote('T-1', 'a\tb\nc').ok).toBe(true);
    expect(engine.setGoal('first\nsecond\tthird').ok).toBe(true);
    expect(engine.setSettings({ verify: 'npm run build &&\n\tnpm test' }).ok).toBe(true);
    expect(refusal(engine.addTask({ title: 'a\tb' }))).toContain('U+0009 (HT) at position 2');
    expect(refusal(engine.addTask({ title: 'a\nb' }))).toBe('title must be one line');
    expect(refusal(engine.userNote('T-1', 'windows\r\nline'))).toContain('U+000D (CR)');
    // ordinary non-ASCII text is text, not control
    expect(engine.addTask({ title: 'café — 日本語 — עברית ✓' }).ok).toBe(true);
  });

  it.each(REFUSED)('$named is refused at the agents’ protocol edge too, before the engine', ({ ch, named }) => {
    const note = agentParamSchemas.note.safeParse({ taskId: 'T-1', text: `x${ch}`, token: 1 });
    expect(note.success).toBe(false);
    if (!note.success) expect(firstIssue(note.error)).toContain(named);
    const add = agentParamSchemas.add.safeParse({ title: 'ok', body: `${ch}` });
    expect(add.success).toBe(false);
    expect(agentParamSchemas.note.safeParse({ taskId: 'T-1', text: 'fine\n\tindented', token: 1 }).success).toBe(true);
  });
});
