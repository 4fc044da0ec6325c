import { describe, expect, it } from 'vitest';
import { heldText } from '../../../src-renderer/components/EndedAgents.js';

/**
 * The restart summary of an ended agent (issue 44, issue 45): what it held, by the titles its record kept, and
 * after the Thread moved onto another board, which board that was and where its copied tasks are now. Never
 * the board on screen's titles: the same id names another task there.
 */
describe('what an ended agent held, as the list says it', () => {
  it('on the board on screen: ids and the titles it held them under', () => {
    expect(heldText({ held: ['T-1', 'T-4'], titles: { 'T-1': 'Port the parser' } })).toBe('held T-1 "Port the parser", T-4');
    expect(heldText({ held: [] })).toBe('held no task');
  });

  it('on another board: which one, and the ids its copied tasks have here', () => {
    expect(heldText({ held: ['T-1', 'T-2'], titles: { 'T-1': 'local 1', 'T-2': 'local 2' }, elsewhere: 'the board on this computer', now: { 'T-1': 'T-4' } })).toBe(
      'held T-1 "local 1" (now T-4), T-2 "local 2" on the board on this computer',
    );
  });
});
