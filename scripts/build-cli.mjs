#!/usr/bin/env node
// Bundles the agents' CLI fast path (every board command) into one CommonJS file. An ESM entry costs ~15 ms
// of loader start-up on its own, and the CLI's goal is to start within 1.3x of a bare `node`. `mcp` and
// `serve` stay separate ESM modules, loaded only when those commands run.
import { build } from 'esbuild';

const lazy = { './mcpServer.js': '../src-main/cli/mcpServer.js', '../serve/serveCommand.js': '../src-main/serve/serveCommand.js' };
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
