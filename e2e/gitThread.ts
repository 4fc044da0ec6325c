import { GIT_IDENTITY, gitSync, makeRepo } from '../test/helpers/gitFixture.js';
import { openWindow, type WindowSession } from './harness.js';

/** git in `cwd` as the tests' identity, for reading back what the host did; its output trimmed. */
export const git = (cwd: string, ...args: string[]): string => gitSync(cwd, args);

/** The window on a Thread whose folder is a git repository: branch main, one commit of notes.txt. The
 *  served host commits (merges) as the tests' identity too. */
export function openWindowOnRepo(): Promise<WindowSession> {
  return openWindow({ env: GIT_IDENTITY, prepare: (folder) => makeRepo(folder, { 'notes.txt': 'first line\n' }) });
}
