import type { StoreApi } from 'zustand/vanilla';
import type { DisposableStore } from '../../src-shared/lifecycle/disposableStore.js';
import type { WindowError } from '../../src-shared/protocol/windowApi.js';
import { toWindowError } from '../transport/types.js';
import type { AppState, Banner, ControllerOptions, Toast } from './appState.js';

export const NoticeConstants = {
  /** The same notice (same task lapsing, same agent exiting) is not repeated within this window. */
  dedupeMs: 2_000,
  /** How long an in-page toast stays. */
  toastMs: 8_000,
} as const;

/** Banners kept at once: older ones drop off so a storm of errors cannot bury the page. */
const MAX_BANNERS = 5;
const MAX_TOASTS = 5;

/**
 * What the page tells the person: the host's notices (it is their one source), as one OS notification or,
 * without permission, an in-page toast; and the banners of refused calls.
 */
export class PageNotices {
  private readonly recent = new Map<string, number>();
  private nextId = 1;

  constructor(
    private readonly store: StoreApi<AppState>,
    /** The controller's: toast timers go with the window. */
    private readonly disposables: DisposableStore,
    private readonly opts: ControllerOptions,
  ) {}

  private get state(): AppState {
    return this.store.getState();
  }

  /** A notice pushed by the host, its one source (src-shared/notices): shown at once. */
  notify(title: string, body: string, about: string): void {
    this.show(about, title, body);
  }

  /** A system notification if allowed, else an in-page toast; the same notice at most once per window. */
  private show(key: string, title: string, body: string): void {
    const now = Date.now();
    const last = this.recent.get(key);
    if (last !== undefined && now - last < NoticeConstants.dedupeMs) return;
    this.recent.set(key, now);
    if (this.recent.size > 200) this.recent.clear();
    if (this.opts.systemNotify?.(title, body)) return;
    this.toast(title, body);
  }

  toast(title: string, body: string): void {
    const t: Toast = { id: this.nextId++, title, body };
    this.store.setState({ toasts: [...this.state.toasts, t].slice(-MAX_TOASTS) });
    if (!this.disposables.isDisposed) this.disposables.timeout(() => this.dismissToast(t.id), this.opts.toastMs ?? NoticeConstants.toastMs);
  }

  dismissToast(id: number): void {
    this.store.setState({ toasts: this.state.toasts.filter((t) => t.id !== id) });
  }

  showError(action: string, err: unknown): WindowError {
    const e = toWindowError(err);
    const b: Banner = { id: this.nextId++, code: e.code, message: e.message, action };
    this.store.setState({ errors: [...this.state.errors, b].slice(-MAX_BANNERS) });
    return e;
  }

  dismissError(id: number): void {
    this.store.setState({ errors: this.state.errors.filter((b) => b.id !== id) });
  }

  async requestNotifications(): Promise<void> {
    if (!this.opts.requestNotifyPermission) return;
    const p = await this.opts.requestNotifyPermission();
    this.store.setState({ notifyPermission: p });
  }
}
