#!/usr/bin/env node
// Stages the Node runtime the packaged app ships (electron-builder.yml: extraResources dist-node -> node):
// the Node running this script, which is the Node the bundles were built and tested with. It runs the pty
// host and the agents' CLI there (src-main/base/nodeRuntime.ts). A package for another platform or arch
// needs that platform's Node: FORKBENCH_DIST_NODE names the binary to ship instead.
import * as fs from 'node:fs';
import { join } from 'node:path';

const from = process.env.FORKBENCH_DIST_NODE || process.execPath;
const windows = /\.exe$/i.test(from);
const to = windows ? join('dist-node', 'node.exe') : join('dist-node', 'bin', 'node');
fs.rmSync('dist-node', { recursive: true, force: true });
fs.mkdirSync(join(to, '..'), { recursive: true });
fs.copyFileSync(from, to);
fs.chmodSync(to, 0o755);
console.log(`stage-node-runtime: ${from} (${process.version}) -> ${to} (${(fs.statSync(to).size / 1e6).toFixed(1)} MB)`);
