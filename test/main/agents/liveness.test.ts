import { describe, expect, it } from 'vitest';
import { judgeLiveness } from '../../../src-main/agents/liveness.js';
import { socketPathFor } from '../../../src-main/agents/agentSocket.js';

describe('liveness verdict', () => {
  const lease = 120_000;
  it('renews a running or sleeping agent that showed progress within the lease window', () => {
    expect(judgeLiveness({ state: 'running', lastProgressAt: 1000, now: 1000 + lease - 1, leaseMs: lease })).toBe('renew');
    expect(judgeLiveness({ state: 'sleeping', lastProgressAt: 5000, now: 6000, leaseMs: lease })).toBe('renew');
  });
  it('does not renew an agent silent for the whole lease window', () => {
    expect(judgeLiveness({ state: 'sleeping', lastProgressAt: 1000, now: 1000 + lease, leaseMs: lease })).toBe('stalled');
  });
  it('never renews a stopped process or a zombie, however recent its output', () => {
    expect(judgeLiveness({ state: 'stopped', lastProgressAt: 1000, now: 1001, leaseMs: lease })).toBe('stalled');
    expect(judgeLiveness({ state: 'zombie', lastProgressAt: 1000, now: 1001, leaseMs: lease })).toBe('stalled');
  });
  it('reports a vanished process as gone (the exit event releases its claims)', () => {
    expect(judgeLiveness({ state: 'gone', lastProgressAt: 1000, now: 1001, leaseMs: lease })).toBe('gone');
  });
});

describe('socket paths', () => {
  it('are short enough for macOS (104 bytes) and become named pipes on Windows', () => {
    const p = socketPathFor('/Users/someone/Library/Caches/TemporaryItems/forkbench', '0123456789abcdef0123', 'darwin');
    expect(p).toBe('/Users/someone/Library/Caches/TemporaryItems/forkbench/fb-0123456789ab.sock');
    expect(Buffer.byteLength(p)).toBeLessThan(104);
    expect(socketPathFor('C:\\x', '0123456789abcdef', 'win32')).toBe('\\\\.\\pipe\\forkbench-fb-0123456789ab');
  });
});
