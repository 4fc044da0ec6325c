// A Thread host in a process of its own whose parked folders' clean-up a test kills -9 (parkedKill.test.ts): it
// opens the folder's Thread, and at the clean-up step named by STEP prints one JSON line ({ step, path }) and
// stops there, for the test to kill it between two steps. With STEP `in-git` it prints at `saving` and goes on,
// for the test to kill it while one of the clean-up's git processes runs. Then it stays up until killed.
//
// argv: FOLDER DATA_ROOT RUNTIME_ROOT STEP
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [folder, dataRoot, runtimeRoot, stop] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const { ThreadHost } = await import(pathToFileURL(join(here, '..', '..', 'dist-main', 'src-main', 'thread', 'threadHost.js')).href);

const step = async (s, f) => {
  if (s !== stop && !(stop === 'in-git' && s === 'saving')) return;
  process.stdout.write(`${JSON.stringify({ step: s, path: f.path })}\n`);
  if (stop !== 'in-git') await new Promise(() => undefined);
};
await ThreadHost.open({ folder, dataRoot, runtimeRoot, liveness: false, parked: { step } });
setInterval(() => undefined, 60_000);
