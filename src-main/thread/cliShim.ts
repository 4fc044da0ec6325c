import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { shellQuote } from '../../src-shared/text/shellQuote.js';
import { writeFileAtomic } from '../base/atomicWrite.js';
import { APP_ROOT, cliScript, nodeRuntime, type NodeRuntime } from '../base/nodeRuntime.js';

/** The checkout's (or the package's) own folder: serve's page and Electron's window load from it. */
export const PROJECT_ROOT = APP_ROOT;

/**
 * The shim's folder, one per install (the CLI it runs and the Node that runs it): two installs of Forkbench
 * (a release and a checkout, say) share the per-user runtime folder, and a shared shim would make one
 * install's agents run the other's CLI, whichever host started last.
 */
export function shimDirFor(runtime: string, cli: string = cliScript(), node: string = nodeRuntime().node): string {
  return join(runtime, `bin-${createHash('sha256').update(`${node}\0${cli}`).digest('hex').slice(0, 12)}`);
}

/** The shim's text: the runtime's Node, with what it needs in its environment, on the CLI script. */
export function shimText(cli: string, rt: NodeRuntime = nodeRuntime(), platform: NodeJS.Platform = process.platform): string {
  const vars = Object.entries(rt.env);
  if (platform === 'win32') return `@${vars.map(([k, v]) => `set "${k}=${v}"&& `).join('')}"${rt.node}" "${cli}" %*\r\n`;
  return `#!/bin/sh\n${vars.map(([k, v]) => `export ${k}=${shellQuote(v)}\n`).join('')}exec ${shellQuote(rt.node)} ${shellQuote(cli)} "$@"\n`;
}

/**
 * A `forkbench` command on the agents' PATH. Agents run `forkbench claim` whether or not Forkbench was
 * installed globally, and always get the CLI of the host that launched them, run by the same Node.
 */
export function ensureCliShim(runtime: string, cli: string = cliScript(), rt: NodeRuntime = nodeRuntime()): string {
  const bin = shimDirFor(runtime, cli, rt.node);
  fs.mkdirSync(bin, { recursive: true, mode: 0o700 });
  if (process.platform === 'win32') {
    fs.writeFileSync(join(bin, 'forkbench.cmd'), shimText(cli, rt));
  } else {
    // An agent running `forkbench` never sees half a script.
    writeFileAtomic(join(bin, 'forkbench'), shimText(cli, rt), { mode: 0o700 });
  }
  return bin;
}
