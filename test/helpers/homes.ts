/** Home folders of the tests' own: what a shell or an agent CLI started by a test reads and writes. */
import * as fs from 'node:fs';
import { join } from 'node:path';

export const HOME_VARIABLES = {
  /** Set by a developer's own start-up to files in their home; a test's shell must not follow them there. */
  unset: ['HISTFILE', 'ZDOTDIR', 'BASH_ENV', 'ENV', 'INPUTRC', 'GIT_CONFIG_GLOBAL'],
} as const;

/**
 * Makes `home` (and its XDG folders) with the given start-up files, e.g. `{ '.profile': 'PATH=/usr/bin:/bin\n' }`,
 * and returns the variables that point a process at it.
 */
export function makeHome(home: string, startupFiles: Record<string, string> = {}): Record<string, string> {
  const vars = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
  };
  for (const dir of Object.values(vars)) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const [name, text] of Object.entries(startupFiles)) fs.writeFileSync(join(home, name), text);
  return vars;
}
