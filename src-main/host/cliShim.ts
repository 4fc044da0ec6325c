import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shellQuote } from '../../src-shared/text/shellQuote.js';
import { writeFileAtomic } from '../base/atomicWrite.js';

/** The folder that holds package.json: two levels above this file in source, three in dist-main. */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (fs.existsSync(join(dir, 'package.json')) && fs.existsSync(join(dir, 'bin', 'forkbench.cjs'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('cannot find the Forkbench folder (bin/forkbench.cjs) above ' + fileURLToPath(import.meta.url));
}

export const PROJECT_ROOT = projectRoot();
/** The compiled CLI's entry script. */
export const CLI_SCRIPT = join(PROJECT_ROOT, 'bin', 'forkbench.cjs');

/**
 * The shim's folder, one per install (the CLI it runs and the Node that runs it): two installs of Forkbench
 * (a release and a checkout, say) share the per-user runtime folder, and a shared shim would make one
 * install's agents run the other's CLI, whichever host started last.
 */
export function shimDirFor(runtime: string, cli: string = CLI_SCRIPT, node: string = process.execPath): string {
  return join(runtime, `bin-${createHash('sha256').update(`${node}\0${cli}`).digest('hex').slice(0, 12)}`);
}

/**
 * A `forkbench` command on the agents' PATH. Agents run `forkbench claim` whether or not Forkbench was
 * installed globally, and always get the CLI of the host that launched them, run by the same Node.
 */
export function ensureCliShim(runtime: string, cli: string = CLI_SCRIPT): string {
  const bin = shimDirFor(runtime, cli);
  fs.mkdirSync(bin, { recursive: true, mode: 0o700 });
  if (process.platform === 'win32') {
    fs.writeFileSync(join(bin, 'forkbench.cmd'), `@"${process.execPath}" "${cli}" %*\r\n`);
  } else {
    const shim = join(bin, 'forkbench');
    const text = `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(cli)} "$@"\n`;
    writeFileAtomic(shim, text, { mode: 0o700 }); // an agent running `forkbench` never sees half a script
  }
  return bin;
}
