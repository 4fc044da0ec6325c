import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Where `command` would be found on PATH (with Windows' PATHEXT endings), or null. Reads the folders rather
 * than spawning `which`: the window asks for five agent CLIs at once, and the git fence asks for perl.
 */
export function findOnPath(command: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD').split(';') : [''];
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const p = join(dir, command + ext);
      if (existsSync(p)) return p;
    }
  }
  return null;
}
