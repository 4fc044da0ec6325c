import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import type { PtyHostClient } from '../../src-main/ptyhost/ptyHostClient.js';
import { connectPtyHost } from '../../src-main/ptyhost/ptyHostLauncher.js';

/**
 * Pty hosts started by one test file, each ended after its test (its board host leaves, then SIGTERM), and
 * their data folders removed after the file. Call once at the top of a test file.
 */
export function ptyHostsOfThisFile(prefix = 'fb-ptyhost-') {
  const roots: string[] = [];
  const hostPids: number[] = [];
  const clients: PtyHostClient[] = [];
  afterEach(() => {
    for (const c of clients.splice(0)) c.leave();
    for (const pid of hostPids.splice(0)) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // gone already
      }
    }
  });
  afterAll(() => {
    for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
  });
  return {
    /** A new data folder, removed after the file. */
    dataRoot(): string {
      const r = fs.mkdtempSync(join(tmpdir(), prefix));
      roots.push(r);
      return r;
    },
    /** Start (or reach) the pty host of `root`; it is ended after the test. */
    async connect(root: string, o: Parameters<typeof connectPtyHost>[1] = {}) {
      const got = await connectPtyHost(root, o);
      clients.push(got.client);
      hostPids.push(got.client.hostPid);
      return got;
    },
    /** A pid that is not the client's own pty host, ended after the test too (a second pty host). */
    endAfterTest(pid: number): void {
      hostPids.push(pid);
    },
  };
}
