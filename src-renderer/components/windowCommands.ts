import { showControls } from '../../src-shared/text/controlChars.js';
import { matchTasks } from '../state/boardSearch.js';
import type { PaletteCommand } from '../state/commandRegistry.js';
import { useController } from '../state/hooks.js';
import type { Drawer } from './Chrome.js';
import { openTaskDetails } from './TaskDetails.js';
import { useCommands } from './useCommands.js';

/** The window width at and below which the side panels are drawers (styles/narrow.css). */
export const NARROW_WINDOW_QUERY = '(max-width: 1050px)';
/** Tasks the palette lists for a query at most: enough to pick from, few enough to read. */
const TASK_MATCHES = 8;
/** Typed before a title ("add Fix the login"), the palette offers to add that task. */
const ADD_PREFIX = /^add\s+(.+)$/i;

const PANEL_NAMES: Record<Exclude<Drawer, null>, string> = { threads: 'Threads', log: 'Events' };

/**
 * The palette's commands of the window frame and the Thread's tasks: the side panels (the top bar's
 * toggles), adding a task (the add-task form's field and its call), and opening a task's details (what
 * a click on its card does), found by id or title among every task, drawn or not.
 */
export function useWindowCommands(drawer: Drawer, toggleDrawer: (d: Exclude<Drawer, null>) => void): void {
  const c = useController();
  useCommands((query) => {
    const out: PaletteCommand[] = [];
    const wide = typeof matchMedia === 'function' && !matchMedia(NARROW_WINDOW_QUERY).matches;
    for (const d of ['threads', 'log'] as const) {
      const name = PANEL_NAMES[d];
      out.push({
        id: `toggle-${d}`,
        title: drawer === d ? `Hide the ${name} panel` : `Show the ${name} panel`,
        group: 'Window',
        keywords: 'side panel drawer toggle',
        ...(wide ? { disabled: `The ${name} panel is always shown at this width` } : {}),
        run: () => toggleDrawer(d),
      });
    }
    const board = c.state.board;
    if (!board) return out;
    out.push({
      id: 'add-task',
      title: 'Add a task',
      group: 'Tasks',
      keywords: 'new create',
      run: () => document.querySelector<HTMLElement>('[data-testid="add-task-title"]')?.focus(),
    });
    const title = ADD_PREFIX.exec(query.trim())?.[1];
    if (title) {
      out.push({ id: 'add-task-titled', title: `Add task “${title}”`, group: 'Tasks', keywords: query, run: () => void c.actions.addTask(title) });
    }
    if (query.trim()) {
      const ids = matchTasks([...board.tasks.keys()], board, c.state.agents, query);
      const exact = taskIdIn(query);
      const picked = exact && board.tasks.has(exact) ? [exact, ...ids.filter((id) => id !== exact)] : ids;
      for (const id of picked.slice(0, TASK_MATCHES)) {
        const t = board.tasks.get(id);
        if (!t) continue;
        const holder = t.claim ? c.agentName(t.claim.agentId) : '';
        out.push({
          id: `open-task-${id}`,
          title: `Open ${id} “${showControls(t.title, 'none')}”`,
          group: 'Tasks',
          detail: holder ? `${t.state}, ${holder}` : t.state,
          keywords: `${holder} details ${id.replace('-', '')}`,
          run: () => openTaskDetails(c, id),
        });
      }
    }
    return out;
  });
}

/** The task id a query names, if it is one: "12", "t12" and "T-12" all name T-12. */
function taskIdIn(query: string): string | null {
  const digits = /^(?:t-?)?(\d+)$/i.exec(query.trim())?.[1];
  return digits === undefined ? null : `T-${digits}`;
}
