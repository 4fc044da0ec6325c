/**
 * What runs Forkbench's own scripts as processes of their own: the pty host, and every agent's `forkbench`
 * and `forkbench mcp`. Which one depends on how Forkbench itself runs, and is chosen once by its entry point:
 *
 * - `serve`, the CLI and the tests: the Node that runs this process, on this checkout;
 * - the app in development (`npm start`): Electron's own binary as Node (ELECTRON_RUN_AS_NODE), on the checkout;
 * - the packaged app: the Node shipped beside it in resources/node (electron-builder.yml's extraResources),
 *   on the scripts in app.asar.unpacked. The package turns Electron's runAsNode fuse off, so its binary
 *   cannot serve as Node, and a plain Node cannot read inside app.asar.
 */
import { join } from 'node:path';
import { appRoot } from './packageRoot.js';

export interface NodeRuntime {
  /** The executable. */
  node: string;
  /** What it needs in its environment besides the caller's. */
  env: Record<string, string>;
  /** The folder holding bin/ and dist-main/ as plain files. */
  root: string;
  /** Whether the pty host runs from its one-module bundle (a package: its packages are inside app.asar)
   *  rather than from the compiled modules beside node_modules. */
  bundled?: boolean;
}

export const APP_ROOT = appRoot();

export function checkoutRuntime(): NodeRuntime {
  return { node: process.execPath, env: {}, root: APP_ROOT };
}

/** Electron's binary as Node: only where its runAsNode fuse is on, as in development. */
export function electronDevRuntime(): NodeRuntime {
  return { node: process.execPath, env: { ELECTRON_RUN_AS_NODE: '1' }, root: APP_ROOT };
}

/** Where the packaged app keeps its Node, in `resources` (what electron-builder.yml's extraResources puts
 *  there: the `to` of its node entry). */
export const PACKAGED_NODE_DIR = 'node';

export function packagedRuntime(resourcesPath: string, platform: NodeJS.Platform = process.platform): NodeRuntime {
  const node = platform === 'win32' ? join(resourcesPath, PACKAGED_NODE_DIR, 'node.exe') : join(resourcesPath, PACKAGED_NODE_DIR, 'bin', 'node');
  return { node, env: {}, root: join(resourcesPath, 'app.asar.unpacked'), bundled: true };
}

let current: NodeRuntime | undefined;

/** Set once by the entry point, before any agent or pty host starts. */
export function useNodeRuntime(runtime: NodeRuntime): void {
  current = runtime;
}

export function nodeRuntime(): NodeRuntime {
  return (current ??= checkoutRuntime());
}

/** The agents' CLI entry script. */
export const cliScript = (rt: NodeRuntime = nodeRuntime()): string => join(rt.root, 'bin', 'forkbench.cjs');

/**
 * The pty host's script. A package runs the bundle (one module, node-pty beside it), which needs nothing
 * from app.asar. A checkout runs the compiled modules, as it always has: with the bundle, serve's "spawn
 * unread when serve is killed -9" fault test failed 4 runs in 38 under load (0 in 24 with the modules),
 * cause not yet found, so the bundle is used only where it must be.
 */
export const ptyHostScript = (rt: NodeRuntime = nodeRuntime()): string =>
  rt.bundled ? join(rt.root, 'dist-main', 'ptyhost', 'ptyHostMain.mjs') : join(rt.root, 'dist-main', 'src-main', 'ptyhost', 'ptyHostMain.js');
