import type { Dialog } from 'electron';
import { PtyHostVersionError } from '../ptyhost/ptyHostClient.js';
import { PtyHostLink } from '../ptyhost/ptyHostLink.js';

const REPLACE_BUTTONS = { replace: 'Stop it and its agents', quit: 'Quit' } as const;

/** The person chose to leave a pty host of another version alone, and so to quit. */
export class PtyHostKeptError extends Error {}

/**
 * The app's pty host. One of another Forkbench version (an update came while agents ran in the old one) is
 * not used; the person is asked whether to stop it, ending its agents, and start this version's, or to quit
 * and leave it (the older app can still take its agents back). Dialogs need the app ready: `ready` waits.
 */
export async function openAppPtyHost(
  dataRoot: string,
  o: { idleMs: number; warn: (m: string) => void; dialog: Pick<Dialog, 'showMessageBox'>; ready: () => Promise<unknown> },
): Promise<PtyHostLink> {
  try {
    return await PtyHostLink.open(dataRoot, { idleMs: o.idleMs, warn: o.warn });
  } catch (err) {
    if (!(err instanceof PtyHostVersionError)) throw err;
    await o.ready();
    const buttons = [REPLACE_BUTTONS.replace, REPLACE_BUTTONS.quit];
    const { response } = await o.dialog.showMessageBox({
      type: 'warning',
      title: 'Agents of another Forkbench version',
      message: `Forkbench ${err.theirs.version} still runs agents for this data folder`,
      detail:
        `Its pty host (pid ${err.theirs.pid}) holds them, and this Forkbench cannot use it.\n` +
        `Stop it and its agents: they end (their claims are released when their Threads open) and this version starts its own.\n` +
        `Quit: leave them running; Forkbench ${err.theirs.version} can take them back.`,
      buttons,
      defaultId: 1,
      cancelId: 1,
      noLink: true,
    });
    if (buttons[response] !== REPLACE_BUTTONS.replace) throw new PtyHostKeptError(err.message);
    return PtyHostLink.open(dataRoot, { idleMs: o.idleMs, warn: o.warn, replaceOther: true });
  }
}
