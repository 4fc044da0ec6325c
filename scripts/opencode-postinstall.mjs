#!/usr/bin/env node
// Runs opencode-ai's own postinstall (it links the platform's binary into its bin/), which package.json's
// allowScripts keeps npm from running: its last step runs `opencode --version`, and opencode makes its
// folders under $HOME and the XDG folders as it starts, so `npm install` left .cache, .config, .local/share
// and .local/state entries in the developer's home. Here it runs with a home folder of its own.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const script = join('node_modules', 'opencode-ai', 'postinstall.mjs');
if (!fs.existsSync(script)) process.exit(0); // a production install: no devDependencies
const home = fs.mkdtempSync(join(tmpdir(), 'forkbench-opencode-install-'));
const xdg = { XDG_CONFIG_HOME: join(home, '.config'), XDG_DATA_HOME: join(home, '.local', 'share'), XDG_CACHE_HOME: join(home, '.cache'), XDG_STATE_HOME: join(home, '.local', 'state') };
const r = spawnSync(process.execPath, ['postinstall.mjs'], { cwd: join('node_modules', 'opencode-ai'), stdio: 'inherit', env: { ...process.env, HOME: home, ...xdg } });
fs.rmSync(home, { recursive: true, force: true });
process.exit(r.status ?? 1);
