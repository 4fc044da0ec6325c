import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The user's data folder for boards and settings. FORKBENCH_DATA_DIR overrides it (tests, portable
 * installs); Electron passes app.getPath('userData') instead.
 */
export function defaultDataRoot(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (env.FORKBENCH_DATA_DIR) return env.FORKBENCH_DATA_DIR;
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'Forkbench');
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'Forkbench');
  return join(env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'forkbench');
}
