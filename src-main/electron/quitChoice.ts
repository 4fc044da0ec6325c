import type { BrowserWindow, Dialog } from 'electron';

/** What quitting does with the agents still running. */
export type QuitChoice = 'stop' | 'keep' | 'cancel';

const QUIT_BUTTONS = {
  stop: 'Stop agents',
  keep: 'Keep running in background',
  cancel: 'Cancel',
} as const;

/**
 * Ask, on a quit with agents running, whether to stop them or keep them running in the pty host for the next
 * start. Without a pty host (FORKBENCH_PTY_HOST=0) they are the app's children and cannot stay, so the only
 * question is whether to quit. Keep is the default: it loses nothing, and the pty host ends kept agents by
 * itself once no app has come back for its idle time.
 */
export async function askQuitChoice(
  dialog: Pick<Dialog, 'showMessageBox'>,
  parent: BrowserWindow | null,
  o: { running: number; canKeep: boolean; idleMs: number },
): Promise<QuitChoice> {
  const choices: QuitChoice[] = o.canKeep ? ['stop', 'keep', 'cancel'] : ['stop', 'cancel'];
  const agents = o.running === 1 ? '1 agent is' : `${o.running} agents are`;
  const options = {
    type: 'question' as const,
    title: 'Quit Forkbench',
    message: `${agents} still running`,
    detail: o.canKeep
      ? `Stop agents: their processes end and their claims are released.\n` +
        `Keep running in background: they go on working and keep their claims; the next start of Forkbench shows them again. ` +
        `If it does not start within ${duration(o.idleMs)}, they are stopped then.`
      : 'Quitting stops them: their processes end and their claims are released.',
    buttons: choices.map((c) => QUIT_BUTTONS[c]),
    defaultId: choices.indexOf(o.canKeep ? 'keep' : 'stop'),
    cancelId: choices.indexOf('cancel'),
    noLink: true,
  };
  const { response } = parent ? await dialog.showMessageBox(parent, options) : await dialog.showMessageBox(options);
  return choices[response] ?? 'cancel';
}

/** A duration as a person reads it: "1 h", "90 min", "3 s". */
function duration(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.max(1, Math.round(ms / 1000))} s`;
}
