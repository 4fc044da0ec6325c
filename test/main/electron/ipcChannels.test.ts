import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import * as bridge from '../../../src-main/electron/ipcBridge.js';

import { ensureBuilt } from '../../helpers/cli.js';

ensureBuilt();
// The compiled preload, as Electron loads it (CommonJS, sandboxed).
const preload = createRequire(import.meta.url)('../../../dist-main/src-main/electron/preload.cjs') as typeof import('../../../src-main/electron/preload.cjs');

/** Every `forkbench:` channel a file names, as written in its source. */
const channelsIn = (file: string) => [...new Set(readFileSync(new URL(`../../../src-main/electron/${file}`, import.meta.url), 'utf8').match(/'forkbench:[a-z-]+'/g) ?? [])].sort();

describe('IPC channel names', () => {
  it('the bridge and the preload (which may import nothing of ours) name the same channels', () => {
    expect({ call: preload.CALL_CHANNEL, push: preload.PUSH_CHANNEL }).toEqual({ call: bridge.CALL_CHANNEL, push: bridge.PUSH_CHANNEL });
    expect(channelsIn('preload.cts')).toEqual(channelsIn('ipcBridge.ts'));
    expect(channelsIn('ipcBridge.ts')).toEqual([`'${bridge.CALL_CHANNEL}'`, `'${bridge.PUSH_CHANNEL}'`].sort());
  });
});
