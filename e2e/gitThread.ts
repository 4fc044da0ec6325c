import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { openWindow, type WindowSession } from './harness.js';

/** Who the e2e tests' commits are by, for git in the test and in the served host alike. */
export const GIT_IDENTITY = { GIT_AUTHOR_NAME: 'E2E', GIT_AUTHOR_EMAIL: 'e2e@example.com', GIT_COMMITTER_NAME: 'E2E', GIT_COMMITTER_EMAIL: 'e2e@example.com' };

/** git in `cwd` as the e2e identity; its output trimmed. */
export const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_IDENTITY }, encoding: 'utf8' }).trim();

/** The window on a Thread whose folder is a git repository: branch main, one commit of notes.txt. */
export function openWindowOnRepo(): Promise<WindowSession> {
  return openWindow({
    env: GIT_IDENTITY,
    prepare: (folder) => {
      git(folder, 'init', '-q', '-b', 'main');
      fs.writeFileSync(join(folder, 'notes.txt'), 'first line\n');
      git(folder, 'add', '-A');
      git(folder, 'commit', '-qm', 'first');
    },
  });
}
