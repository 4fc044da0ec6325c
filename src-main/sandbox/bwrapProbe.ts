/**
 * Whether bubblewrap can contain agents on this machine, asked once per process (the pty host and the board
 * host each ask at most once): bwrap on PATH, and a sandbox of the shape every agent gets (new pid and IPC
 * namespace, own /dev and /proc) actually started. A kernel without unprivileged user namespaces, or an
 * AppArmor policy that refuses them (Ubuntu 24.04's `kernel.apparmor_restrict_unprivileged_userns`), lets
 * bwrap start and then fail at its first unshare: only running it tells.
 */
import { execFile } from 'node:child_process';
import { findOnPath } from '../base/pathLookup.js';

export type SandboxSupport = { ok: true; bwrap: string } | { ok: false; reason: string; fix: string };

/** The one command that fixes a missing bwrap, as the window says it. */
export const INSTALL_FIX = 'sudo apt install bubblewrap (Debian, Ubuntu; dnf install bubblewrap on Fedora)';
/** Where bwrap is there but refused: the distributions' switch for unprivileged user namespaces. */
export const USERNS_FIX = 'sudo sysctl -w kernel.unprivileged_userns_clone=1 (or, on Ubuntu 24.04+, an AppArmor profile for bwrap: see docs/sandbox.md)';

/** A start of bwrap takes ~5 ms here; a machine so loaded that it takes 10 s cannot be told from a hang. */
const PROBE_TIMEOUT_MS = 10_000;

/** The shape every agent's sandbox has (sandboxArgs.ts), around `true`. */
export const PROBE_ARGS = ['--unshare-pid', '--unshare-ipc', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true'];

export function probeBwrap(bwrap: string | null = findOnPath('bwrap'), platform = process.platform): Promise<SandboxSupport> {
  if (platform !== 'linux') return Promise.resolve({ ok: false, reason: `no sandbox is built for ${platform} yet`, fix: 'none yet: see docs/sandbox.md' });
  if (!bwrap) return Promise.resolve({ ok: false, reason: 'bubblewrap (bwrap) is not installed', fix: INSTALL_FIX });
  return new Promise((resolve) => {
    execFile(bwrap, PROBE_ARGS, { timeout: PROBE_TIMEOUT_MS }, (err, _out, stderr) => {
      if (!err) return resolve({ ok: true, bwrap });
      const said = String(stderr).trim().split('\n').at(-1) || err.message;
      resolve({ ok: false, reason: `bubblewrap is installed but refused to start a sandbox (${said})`, fix: USERNS_FIX });
    });
  });
}

let asked: Promise<SandboxSupport> | undefined;

/** This process's answer, probed on first use. */
export function sandboxSupport(): Promise<SandboxSupport> {
  asked ??= probeBwrap();
  return asked;
}
