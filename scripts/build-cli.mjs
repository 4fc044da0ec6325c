#!/usr/bin/env node
// Bundles the agents' CLI fast path (every board command) into one CommonJS file. An ESM entry costs ~15 ms
// of loader start-up on its own, and the CLI's goal is to start within 1.3x of a bare `node`. `mcp` stays
// a separate ESM module, and `serve` its own bundle, loaded only when those commands run.
import * as fs from 'node:fs';
import { build } from 'esbuild';

const lazy = { './mcpServer.js': '../src-main/cli/mcpServer.js', '../serve/serveCommand.js': './serve.mjs' };
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
for (const f of fs.readdirSync('dist-main/cli')) if (/^serve.*\.mjs$/.test(f)) fs.rmSync(`dist-main/cli/${f}`);
await build({
  entryPoints: { serve: 'src-main/serve/serveCommand.ts' },
  outdir: 'dist-main/cli',
  outExtension: { '.js': '.mjs' },
  chunkNames: 'serve-[name]-[hash]',
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  external: ['node-pty', 'bufferutil', 'utf-8-validate'],
  // Bundled CommonJS packages (ws, @xterm/headless) call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __forkbenchRequire } from 'node:module'; const require = __forkbenchRequire(import.meta.url);" },
});
