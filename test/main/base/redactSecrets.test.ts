import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../../src-main/base/redactSecrets.js';
import { commandLineOf } from '../../../src-main/ptyhost/boardHostPeer.js';
import { waitFor } from '../../helpers/pty.js';

/** Issue 42: a command line in a log never carries a URL's credentials (the pty host's log named a serve by
 *  its command line, `--board postgres://user:password@…` included). */
describe('redactSecrets', () => {
  it('replaces every URL with a user or password, and password= settings; leaves the rest as it was', () => {
    expect(redactSecrets('forkbench serve /p --board postgres://fb:pw@db.example.com/boards --port 1')).toBe('forkbench serve /p --board postgres://…redacted… --port 1');
    expect(redactSecrets('a postgresql://bob:p@ss@h2/d?sslmode=require b https://TOKEN@github.com/x.git')).toBe('a postgresql://…redacted… b https://…redacted…');
    expect(redactSecrets('host=/tmp password=hunter2 user=x')).toBe('host=/tmp password=…redacted… user=x');
    expect(redactSecrets('postgres://db.example.com/boards and https://github.com/x')).toBe('postgres://db.example.com/boards and https://github.com/x');
  });

  it('a process’s command line as the pty host logs it has no password', async () => {
    const argv = ['-e', 'setTimeout(() => {}, 30000)', 'serve', '--board', 'postgres://fb:Sekrit-42@db/boards'];
    const child = spawn(process.execPath, argv, { stdio: 'ignore' });
    try {
      const line = await waitFor(() => {
        const l = commandLineOf(child.pid ?? null);
        return l.includes('serve') ? l : undefined;
      }, 5000, 'the child’s command line');
      expect(line).toContain('--board postgres://…redacted…');
      expect(line).not.toContain('Sekrit-42');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
