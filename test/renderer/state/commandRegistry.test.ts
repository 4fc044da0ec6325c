import { describe, expect, it } from 'vitest';
import { CommandRegistry, filterCommands, type PaletteCommand } from '../../../src-renderer/state/commandRegistry.js';

const ran: string[] = [];
const cmd = (id: string, title: string, group: string, more: Partial<PaletteCommand> = {}): PaletteCommand => ({ id, title, group, run: () => ran.push(id), ...more });

const LIST = [
  cmd('thread-settings', 'Open Thread settings', 'Board', { keywords: 'lease verify' }),
  cmd('launch-shell', 'Launch Shell', 'Agents'),
  cmd('launch-claude', 'Launch Claude Code', 'Agents', { detail: 'not installed: npm i -g @anthropic-ai/claude-code', disabled: 'not installed' }),
  cmd('focus-search', 'Search the board', 'Board', { keys: '/' }),
  cmd('show-shortcuts', 'Show keyboard shortcuts', 'Window'),
  cmd('open-task-T-2', 'Open T-2 “Launch the rocket”', 'Tasks'),
];
const ids = (q: string) => filterCommands(LIST, q).map((c) => c.id);

describe('filterCommands', () => {
  it('lists everything by group when there is no query', () => {
    expect(ids('')).toEqual(['launch-shell', 'launch-claude', 'open-task-T-2', 'thread-settings', 'focus-search', 'show-shortcuts']);
  });

  it('keeps the commands every word is found in, the title first, then group, keywords and detail', () => {
    expect(ids('launch sh')).toEqual(['launch-shell']);
    expect(ids('LEASE')).toEqual(['thread-settings']);
    expect(ids('anthropic')).toEqual(['launch-claude']);
    expect(ids('window')).toEqual(['show-shortcuts']);
    expect(ids('nothing like it')).toEqual([]);
  });

  it('ranks a title that starts with the query, then a word that does, then the rest', () => {
    // "Launch Shell" and "Launch Claude Code" start with it; the task only has the word.
    expect(ids('launch')).toEqual(['launch-shell', 'launch-claude', 'open-task-T-2']);
    // "rocket" starts a word of the task's title only.
    expect(ids('rock')).toEqual(['open-task-T-2']);
    // A word of the title ("the board") before the group's name, before a word that only holds it ("keyboard").
    expect(ids('board')).toEqual(['focus-search', 'thread-settings', 'show-shortcuts']);
  });
});

describe('CommandRegistry', () => {
  it("asks each source for the query's commands, and forgets a removed source", () => {
    const r = new CommandRegistry();
    const queries: string[] = [];
    const removeA = r.add((q) => {
      queries.push(q);
      return [LIST[1] as PaletteCommand];
    });
    r.add(() => [LIST[3] as PaletteCommand]);
    expect(r.matching('search').map((c) => c.id)).toEqual(['focus-search']);
    expect(queries).toEqual(['search']);
    removeA();
    expect(r.commands('').map((c) => c.id)).toEqual(['focus-search']);
  });

  it('keeps a source added twice (a StrictMode effect) until each add is undone', () => {
    const r = new CommandRegistry();
    const source = () => [LIST[1] as PaletteCommand];
    const first = r.add(source);
    const second = r.add(source);
    first();
    expect(r.commands('')).toHaveLength(1);
    second();
    expect(r.commands('')).toHaveLength(0);
  });
});
