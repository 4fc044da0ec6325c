import { describe, expect, it } from 'vitest';
import type { AgentStateInfo } from '../../../src-shared/agents/agentLife.js';
import { AgentStateTracker, cleanStateText } from '../../../src-main/agents/stateTracker.js';
import { ManualClock } from '../../../src-main/base/clock.js';

function tracker(o: { adopted?: boolean } = {}) {
  const clock = new ManualClock();
  const changes: Array<{ next: AgentStateInfo; before: AgentStateInfo }> = [];
  const timers: Array<{ fn: () => void; at: number; live: boolean }> = [];
  const t = new AgentStateTracker({
    now: () => clock.now(),
    wall: () => clock.wall(),
    schedule: (fn, ms) => {
      const timer = { fn, at: clock.now() + ms, live: true };
      timers.push(timer);
      return { dispose: () => void (timer.live = false) };
    },
    onChange: (next, before) => changes.push({ next, before }),
    ...o,
  });
  const advance = (ms: number) => {
    clock.advance(ms);
    for (const tm of timers) if (tm.live && tm.at <= clock.now()) {
      tm.live = false;
      tm.fn();
    }
  };
  return { t, clock, changes, advance, states: () => changes.map((c) => `${c.next.state}/${c.next.source}`) };
}

describe('agent state tracker', () => {
  it('a pane taken back after a restart is unknown until seen: liveness\'s "working" (only the adoption\'s date) is not seeing it', () => {
    const { t, states } = tracker({ adopted: true });
    expect(t.info).toMatchObject({ state: 'unknown', source: 'liveness' });
    expect(t.signal({ state: 'working', source: 'liveness' })).toBe(false);
    expect(t.info.state).toBe('unknown');
    // A lease's silence is a finding: idle (or stalled, holding).
    expect(t.signal({ state: 'idle', source: 'liveness' })).toBe(true);
    expect(states()).toEqual(['idle/liveness']);
    const again = tracker({ adopted: true });
    // A shell's prompt mark, or the person's Enter: seen.
    expect(again.t.signal({ state: 'idle', source: 'terminal', atPrompt: true })).toBe(true);
    const typed = tracker({ adopted: true });
    expect(typed.t.personAnswered()).toBe(true);
    expect(typed.t.info.state).toBe('working');
  });


  it('starts working, and a hook moves it through a permission prompt and a finished turn', () => {
    const { t, states } = tracker();
    expect(t.info).toMatchObject({ state: 'working', source: 'liveness' });
    expect(t.signal({ state: 'needs-input', source: 'hook', text: 'Bash: rm -rf build' })).toBe(true);
    expect(t.info).toMatchObject({ state: 'needs-input', source: 'hook', text: 'Bash: rm -rf build' });
    expect(t.signal({ state: 'working', source: 'hook' })).toBe(true);
    expect(t.signal({ state: 'idle', source: 'hook' })).toBe(true);
    expect(states()).toEqual(['needs-input/hook', 'working/hook', 'idle/hook']);
  });

  it('the launch\'s working is presumed until a signal says otherwise: liveness keeps the guess, any other source ends it', () => {
    const { t } = tracker();
    expect(t.info.presumed).toBe(true);
    t.signal({ state: 'stalled', source: 'liveness' });
    t.signal({ state: 'working', source: 'liveness' });
    expect(t.info).toMatchObject({ state: 'working', presumed: true });
    // Gemini's "◇ Ready" title while it starts up: idle, and no longer a guess.
    t.signal({ state: 'idle', source: 'terminal' });
    expect(t.info.presumed).toBeUndefined();
    t.signal({ state: 'working', source: 'hook' });
    expect(t.info).toMatchObject({ state: 'working', source: 'hook' });
    expect(t.info.presumed).toBeUndefined();
  });

  it('a stronger source saying the presumed state again makes it said, not presumed', () => {
    const { t, changes } = tracker();
    expect(t.signal({ state: 'working', source: 'hook' })).toBe(false);
    expect(changes).toHaveLength(0);
    expect(t.info).toMatchObject({ state: 'working', source: 'hook' });
    expect(t.info.presumed).toBeUndefined();
  });

  it('a repeated signal is no change: one event per change, however often a hook fires', () => {
    const { t, changes } = tracker();
    t.signal({ state: 'working', source: 'hook' });
    for (let i = 0; i < 50; i++) t.signal({ state: 'working', source: 'hook' });
    expect(changes).toHaveLength(0);
    t.signal({ state: 'needs-input', source: 'hook', text: 'a' });
    t.signal({ state: 'needs-input', source: 'hook', text: 'a' });
    expect(changes).toHaveLength(1);
    // A different question while still waiting is news for the person.
    t.signal({ state: 'needs-input', source: 'hook', text: 'b' });
    expect(changes).toHaveLength(2);
  });

  it('a wait said again without its prompt keeps the prompt\'s text (Codex: OSC 9 names it, its program status follows)', () => {
    const { t, changes } = tracker();
    t.signal({ state: 'needs-input', source: 'terminal', text: 'Approval requested: touch permitted.txt' });
    expect(t.signal({ state: 'needs-input', source: 'terminal' })).toBe(false);
    expect(t.info).toMatchObject({ state: 'needs-input', text: 'Approval requested: touch permitted.txt' });
    expect(changes).toHaveLength(1);
    // A stronger source without text names itself and keeps the text too.
    t.signal({ state: 'needs-input', source: 'hook' });
    expect(t.info).toMatchObject({ source: 'hook', text: 'Approval requested: touch permitted.txt' });
    // After the answer, a new textless wait has no old text to keep.
    t.signal({ state: 'working', source: 'hook' });
    t.signal({ state: 'needs-input', source: 'hook' });
    expect(t.info).toMatchObject({ state: 'needs-input', text: null });
  });

  it('a weaker source cannot clear a stronger one\'s wait or finished turn', () => {
    const { t } = tracker();
    t.signal({ state: 'needs-input', source: 'hook', text: 'allow?' });
    expect(t.signal({ state: 'working', source: 'screen' })).toBe(false);
    expect(t.signal({ state: 'idle', source: 'terminal' })).toBe(false);
    expect(t.info.state).toBe('needs-input');
    t.signal({ state: 'idle', source: 'hook' });
    expect(t.signal({ state: 'working', source: 'screen' })).toBe(false);
    // nor turn a finished turn into a wait: that is an idle reminder, not a question
    expect(t.signal({ state: 'needs-input', source: 'terminal', text: 'Claude is waiting for your input' })).toBe(false);
    expect(t.info.state).toBe('idle');
  });

  it('a weaker source may still say a prompt is up where the hook said working (Claude question dialogs have no hook)', () => {
    const { t } = tracker();
    t.signal({ state: 'working', source: 'hook' });
    expect(t.signal({ state: 'needs-input', source: 'screen', text: 'Which option?' })).toBe(true);
    expect(t.info).toMatchObject({ state: 'needs-input', source: 'screen' });
    // The screen's own wait is the screen's to end.
    expect(t.signal({ state: 'working', source: 'screen' })).toBe(true);
  });

  it('liveness only turns working into stalled and back, never a wait or a turn into stalled', () => {
    const { t } = tracker();
    expect(t.signal({ state: 'stalled', source: 'liveness' })).toBe(true);
    expect(t.signal({ state: 'working', source: 'liveness' })).toBe(true);
    t.signal({ state: 'needs-input', source: 'hook' });
    expect(t.signal({ state: 'stalled', source: 'liveness' })).toBe(false);
    t.signal({ state: 'idle', source: 'hook' });
    expect(t.signal({ state: 'stalled', source: 'liveness' })).toBe(false);
    expect(t.signal({ state: 'working', source: 'liveness' })).toBe(false);
    expect(t.info.state).toBe('idle');
  });

  it("a shell idle at its prompt: output is no work, but silence while it holds a claim is a stall; a turn's idle stays", () => {
    const { t } = tracker();
    expect(t.signal({ state: 'idle', source: 'terminal', atPrompt: true })).toBe(true);
    expect(t.signal({ state: 'working', source: 'liveness' })).toBe(false);
    expect(t.signal({ state: 'stalled', source: 'liveness' })).toBe(true);
    expect(t.signal({ state: 'idle', source: 'terminal', atPrompt: true })).toBe(true);
    t.signal({ state: 'idle', source: 'hook' });
    expect(t.signal({ state: 'stalled', source: 'liveness' })).toBe(false);
  });

  it('any fresher signal moves a stalled agent', () => {
    const { t } = tracker();
    t.signal({ state: 'working', source: 'hook' });
    t.signal({ state: 'stalled', source: 'liveness' });
    expect(t.signal({ state: 'needs-input', source: 'screen' })).toBe(true);
  });

  it('exited is final', () => {
    const { t } = tracker();
    t.signal({ state: 'exited', source: 'liveness' });
    expect(t.signal({ state: 'working', source: 'hook' })).toBe(false);
    expect(t.personAnswered()).toBe(false);
    expect(t.info.state).toBe('exited');
  });

  it('Enter in a waiting or idle pane is the person answering: working', () => {
    const { t, states } = tracker();
    expect(t.personAnswered()).toBe(false);
    t.signal({ state: 'needs-input', source: 'hook' });
    expect(t.personAnswered()).toBe(true);
    t.signal({ state: 'idle', source: 'hook' });
    expect(t.personAnswered()).toBe(true);
    expect(states()).toEqual(['needs-input/hook', 'working/terminal', 'idle/hook', 'working/terminal']);
  });

  it('a confirmed signal counts only if the prompt is still shown after the wait (Codex auto-review)', () => {
    const { t, advance } = tracker();
    let shown = false;
    t.signal({ state: 'needs-input', source: 'hook' }, { afterMs: 300, stillShown: () => shown });
    advance(300);
    expect(t.info.state).toBe('working');
    shown = true;
    t.signal({ state: 'needs-input', source: 'hook' }, { afterMs: 300, stillShown: () => shown });
    advance(299);
    expect(t.info.state).toBe('working');
    advance(1);
    expect(t.info.state).toBe('needs-input');
  });

  it('a newer signal drops a pending one', () => {
    const { t, advance } = tracker();
    t.signal({ state: 'needs-input', source: 'hook' }, { afterMs: 300, stillShown: () => true });
    t.signal({ state: 'working', source: 'hook' });
    advance(1000);
    expect(t.info.state).toBe('working');
  });

  it('heldFor counts from the change of state, on the injected clock', () => {
    const { t, clock } = tracker();
    clock.advance(5000);
    t.signal({ state: 'needs-input', source: 'hook', text: 'a' });
    clock.advance(1234);
    t.signal({ state: 'needs-input', source: 'hook', text: 'b' });
    clock.advance(1000);
    expect(t.heldFor()).toBe(2234);
  });

  it('prompt text keeps no control: an escape sequence is shown as text, and long text is clipped', () => {
    expect(cleanStateText('\x1b]0;pwned\x07 Allow?')).toBe('\\x1b]0;pwned\\x07 Allow?');
    expect(cleanStateText('  ')).toBeNull();
    expect(cleanStateText('x'.repeat(2000))?.length).toBe(500);
    const { t } = tracker();
    t.signal({ state: 'needs-input', source: 'hook', text: '\x9b2J' });
    expect(t.info.text).toBe('\\x9b2J');
    // Only a wait carries text.
    t.signal({ state: 'idle', source: 'hook', text: 'ignored' });
    expect(t.info.text).toBeNull();
  });
});
