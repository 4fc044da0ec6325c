import { closeSync, constants as fsConstants, openSync } from 'node:fs';
import type { IPty } from 'node-pty';
import type { DisposableStore, TimerHandle } from '../../src-shared/lifecycle/disposableStore.js';
import type { Disposable } from '../../src-shared/lifecycle/emitter.js';

/** Opens the pty's slave side for ourselves (see ptySession.ts's file comment). O_NOCTTY: it must never
 *  become this process's controlling terminal. Without a slave path (Windows) or on failure the session
 *  simply behaves like plain node-pty. */
function openSlave(pty: IPty): number | undefined {
  const path = (pty as unknown as { ptsName?: unknown }).ptsName;
  if (typeof path !== 'string' || path.length === 0) return undefined;
  try {
    return openSync(path, fsConstants.O_RDWR | fsConstants.O_NOCTTY);
  } catch {
    return undefined;
  }
}

/**
 * The session's own fd on the pty's slave side, held until the child is dead and its output drained, and
 * node-pty's socket destroy held back while it is.
 *
 * Output at exit: on Linux the pty master can return EIO while the child's last output is still in
 * flight, and node-pty then drops it (its issues #72/#85/#726; reproduced here in 2 of 20 runs). The session
 * holds the slave side open itself, so EIO cannot come early; it learns of the child's death from SIGCHLD
 * (childExitWatcher), reads until the pty has been quiet for a moment, and only then lets go of the slave,
 * after which the master reaches EOF and node-pty reports the exit.
 *
 * node-pty (1.1.0, lib/unixTerminal.js) destroys its read socket 200 ms after the child is reaped if the
 * pty has not closed by then. While we hold the slave the pty cannot close, so on a loaded machine (a CI
 * run with a browser and other ptys busy) the drain can take longer than that, and the timer would cut the
 * read short and lose exactly the tail the slave is held for. Until the drain lets the slave go, that
 * destroy is held back; afterwards the pty closes by itself once its last byte is read, and the held call
 * runs after a grace period in case it does not (the macOS case node-pty's timer exists for).
 */
export class SlaveHold implements Disposable {
  private fd: number | undefined;
  /** node-pty's socket destroy, held while the slave is. */
  private heldDestroy: (() => unknown) | undefined;
  /** The grace after the slave was let go, before the held destroy runs anyway. */
  private heldDestroyTimer: TimerHandle | undefined;

  /**
   * @param store the owner's store: the grace timer goes with it
   * @param ownerDisposed whether the owner is disposed: then nothing is held, and a release runs the held
   *   destroy at once (nobody is left to read the tail)
   * @param onDestroyHeld node-pty tried to destroy its socket, which it does only after it reaped the child
   */
  constructor(
    private readonly pty: IPty,
    private readonly store: DisposableStore,
    private readonly graceMs: number,
    private readonly ownerDisposed: () => boolean,
    onDestroyHeld: () => void,
  ) {
    this.fd = openSlave(pty);
    if (this.fd !== undefined) this.holdSocketDestroy(onDestroyHeld);
  }

  get isHeld(): boolean {
    return this.fd !== undefined;
  }

  private holdSocketDestroy(onDestroyHeld: () => void): void {
    const sock = (this.pty as unknown as { _socket?: { destroy?: (...a: unknown[]) => unknown } })._socket;
    if (!sock || typeof sock.destroy !== 'function') return;
    const destroy = sock.destroy.bind(sock);
    sock.destroy = (...args: unknown[]) => {
      if (this.fd !== undefined && !this.ownerDisposed()) {
        this.heldDestroy = () => destroy(...args);
        onDestroyHeld();
        return sock;
      }
      return destroy(...args);
    };
  }

  /** Lets go of the slave, so the master reaches EOF once its last byte is read. */
  release(): void {
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed: nothing to release
      }
      this.fd = undefined;
    }
    if (!this.heldDestroy) return;
    if (this.ownerDisposed()) this.runHeldDestroy();
    else if (!this.heldDestroyTimer) {
      this.heldDestroyTimer = this.store.timeout(() => this.runHeldDestroy(), this.graceMs, { unref: true });
    }
  }

  private runHeldDestroy(): void {
    const held = this.heldDestroy;
    this.heldDestroy = undefined;
    this.heldDestroyTimer?.dispose();
    this.heldDestroyTimer = undefined;
    held?.();
  }

  /** With the owner disposed: the slave goes and a held destroy runs now, so node-pty reports the exit. */
  dispose(): void {
    this.release();
  }
}
