/**
 * Vitest's global set-up for every tier: the machine the whole suite runs on, made once per run, before any
 * worker starts (workers inherit this process's environment).
 *
 * A home folder of the run's own. Every shell and agent CLI the tests start reads its start-up files and
 * writes its history, caches and logs under $HOME and the XDG folders: with the developer's own, a slow or
 * PATH-resetting ~/.bashrc broke tests, a shell killed mid-start left pyenv's lock behind for every later
 * terminal, and opencode wrote its logs into the developer's home. Tests about start-up files write their
 * own into a home of their own (test/helpers/homes.ts).
 *
 * The browser is the e2e tier's alone (test/setup/testBrowser.ts).
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOME_VARIABLES, makeHome } from '../helpers/homes.js';

export default function setup(): () => void {
  const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-test-home-'));
  Object.assign(process.env, makeHome(root));
  // Variables that point a shell at the developer's files whatever HOME is.
  for (const name of HOME_VARIABLES.unset) delete process.env[name];
  return () => fs.rmSync(root, { recursive: true, force: true });
}
