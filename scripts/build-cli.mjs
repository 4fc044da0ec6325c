#!/usr/bin/env node
// Bundles the agents' CLI fast path (every board command) into one CommonJS file. An ESM entry costs ~15 ms
// of loader start-up on its own, and the CLI's goal is to start within 1.3x of a bare `node`. `mcp` and
// `serve` are bundles of their own, loaded only when those commands run.
//
// What runs outside the app as plain Node (the CLI, `forkbench mcp`, the pty host) is bundled whole, with
// only node-pty (native) beside it: in the packaged app these files sit in app.asar.unpacked, and a plain
// Node cannot read the packages inside app.asar (nodeRuntime.ts).
import * as fs from 'node:fs';
import { build } from 'esbuild';

const lazy = { './mcpServer.js': './mcp.mjs', '../serve/serveCommand.js': './serve.mjs' };
await build({
  entryPoints: ['src-main/cli/main.ts'],
  outfile: 'dist-main/cli/forkbench.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
  plugins: [
    {
      name: 'lazy-commands',
      setup(b) {
        b.onResolve({ filter: /(mcpServer|serveCommand)\.js$/ }, (args) => ({ path: lazy[args.path] ?? args.path, external: true }));
      },
    },
  ],
});

// `serve` as one ES module plus chunks for what it imports only on first use (`conf`, with ajv and semver).
// Node resolving, reading and linking the ~150 files of the unbundled host and its packages took most of
// serve's start: 260-360 ms to the printed URL here, 145-180 ms bundled (bare node: 60-100 ms).
// node-pty is a native module and stays outside, as do ws's optional native helpers.
for (const f of fs.readdirSync('dist-main/cli')) if (/^(serve|mcp).*\.mjs$/.test(f)) fs.rmSync(`dist-main/cli/${f}`);
const esmBundle = {
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  external: ['node-pty', 'bufferutil', 'utf-8-validate'],
  // Bundled CommonJS packages (ws, @xterm/headless) call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __forkbenchRequire } from 'node:module'; const require = __forkbenchRequire(import.meta.url);" },
};
await build({
  ...esmBundle,
  entryPoints: { serve: 'src-main/serve/serveCommand.ts', mcp: 'src-main/cli/mcpServer.ts' },
  outdir: 'dist-main/cli',
  outExtension: { '.js': '.mjs' },
  chunkNames: 'serve-[name]-[hash]',
});

// The pty host: one module, started by the board host as `node ptyHostMain.mjs` (nodeRuntime.ptyHostScript).
fs.rmSync('dist-main/ptyhost', { recursive: true, force: true });
await build({ ...esmBundle, splitting: false, entryPoints: ['src-main/ptyhost/ptyHostMain.ts'], outfile: 'dist-main/ptyhost/ptyHostMain.mjs' });
