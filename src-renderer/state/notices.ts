import type { StoreApi } from 'zustand/vanilla';
import type { DisposableStore, TimerHandle } from '../../src-shared/lifecycle/disposableStore.js';
import type { Notice } from '../../src-shared/notices/notices.js';
import type { WindowError } from '../../src-shared/protocol/windowApi.js';
import { toWindowError } from '../transport/types.js';
import type { AppState, Banner, ControllerOptions, Toast } from './appState.js';

export const NoticeConstants = {
  /** The same notice (same task lapsing, same agent exiting) is not toasted twice within this window. */
  dedupeMs: 2_000,
  /** How long an in-page toast stays. */
  toastMs: 8_000,
  /** How long an error banner stays after its refusal last came. A banner is about something the person
   *  just did: a minute is time to read it (or to look back at the page after a slow merge), and past that
   *  it speaks of a page that has since moved on. Dismissing it, or the action succeeding, ends it sooner. */
  bannerMs: 60_000,
} as const;

/** Banners kept at once: older ones drop off so a storm of different errors cannot bury the page (the
 *  same error again adds to its banner's count instead). */
const MAX_BANNERS = 5;
const MAX_TOASTS = 5;

/** What the page's notices need of the rest of the window. */
export interface NoticePorts {
  /** Ask the host for the right to raise a notice's OS notification: true for the first window to ask. */
  claim(threadKey: string, noticeId: string): Promise<boolean>;
  /** Show an agent's tab (a click on a notice about it). */
  select(agentId: string): void;
}

/**
 * What the page tells the person: the host's notices (it is their one source), as one OS notification among
 * all the windows (the first to claim it from the host raises it) or, without permission, an in-page toast;
 * the current notices of the Thread on screen, standing; and the banners of refused calls.
 */
export class PageNotices {
  private readonly recent = new Map<string, number>();
  /** Each banner's expiry timer (in the controller's store, so none outlives the window). */
  private readonly expiry = new Map<number, TimerHandle>();
  private nextId = 1;

  constructor(
    private readonly store: StoreApi<AppState>,
    /** The controller's: toast timers go with the window. */
    private readonly disposables: DisposableStore,
    private readonly opts: ControllerOptions,
    private readonly ports: NoticePorts,
  ) {}

  private get state(): AppState {
    return this.store.getState();
  }

  /** A notice pushed by the host as it arose: kept while current if its Thread is on screen, and raised. */
  fromHost(threadKey: string, n: Notice): void {
    if (threadKey === this.state.activeKey) {
      const kept = this.state.hostNotices.filter((x) => x.about !== n.about && x.id !== n.id);
      this.store.setState({ hostNotices: [...kept, n] });
    }
    void this.raise(threadKey, n);
  }

  /** The host withdrew a notice: it is no longer true, in the page nor in the OS's notification list. */
  gone(threadKey: string, id: string): void {
    this.opts.closeSystemNotify?.(id);
    if (threadKey !== this.state.activeKey || !this.state.hostNotices.some((x) => x.id === id)) return;
    this.store.setState({ hostNotices: this.state.hostNotices.filter((x) => x.id !== id) });
  }

  /** The Thread's current notices from its snapshot: shown standing, and raised by this window if no other
   *  window has (one that arose while no window was open is raised now, once). Never toasted: it stands. */
  fromSnapshot(threadKey: string, notices: readonly Notice[]): void {
    const known = new Set(this.state.hostNotices.map((x) => x.id));
    this.store.setState({ hostNotices: [...notices] });
    for (const n of notices) if (!known.has(n.id)) void this.raise(threadKey, n, false);
  }

  dismissHostNotice(id: string): void {
    this.store.setState({ hostNotices: this.state.hostNotices.filter((x) => x.id !== id) });
  }

  /**
   * One OS notification for a notice among every window: raised here only if this window may (permission)
   * and the host gives it the claim. Without permission, and only for a Thread not on screen, an in-page
   * toast instead, at most once per window for the same thing: a notice of the Thread on screen stands
   * already, and one notice is shown in one place (issue 44: each was a standing notice and a toast). None
   * about the agent whose tab the person is looking at.
   */
  private async raise(threadKey: string, n: Notice, toast = threadKey !== this.state.activeKey): Promise<void> {
    const s = this.state;
    if (n.agentId && threadKey === s.activeKey && n.agentId === s.activeAgentId && (this.opts.looking?.() ?? true)) return;
    const onClick = () => {
      if (n.agentId && threadKey === this.state.activeKey) this.ports.select(n.agentId);
    };
    if (this.opts.systemNotify && this.opts.notifyPermission?.() === 'granted') {
      if (!(await this.ports.claim(threadKey, n.id))) return;
      if (this.disposables.isDisposed || this.opts.systemNotify(n.title, n.body, n.id, onClick)) return;
    }
    if (toast) this.toastOnce(n.about, n.title, n.body);
  }

  private toastOnce(about: string, title: string, body: string): void {
    const now = Date.now();
    const last = this.recent.get(about);
    if (last !== undefined && now - last < NoticeConstants.dedupeMs) return;
    this.recent.set(about, now);
    if (this.recent.size > 200) this.recent.clear();
    this.toast(title, body, about);
  }

  toast(title: string, body: string, about?: string): void {
    const t: Toast = { id: this.nextId++, title, body, ...(about ? { about } : {}) };
    this.store.setState({ toasts: [...this.state.toasts, t].slice(-MAX_TOASTS) });
    if (!this.disposables.isDisposed) this.disposables.timeout(() => this.dismissToast(t.id), this.opts.toastMs ?? NoticeConstants.toastMs);
  }

  dismissToast(id: number): void {
    this.store.setState({ toasts: this.state.toasts.filter((t) => t.id !== id) });
  }

  /**
   * A refused action, in a banner. The same refusal again (same code and message) is the same banner with
   * its count up and its expiry restarted, whichever action it came from; a banner goes when it is
   * dismissed, when every action it speaks of has since succeeded (`succeeded`), or `bannerMs` after its
   * refusal last came.
   */
  showError(action: string, err: unknown): WindowError {
    const e = toWindowError(err);
    const same = this.state.errors.find((b) => b.code === e.code && b.message === e.message);
    let errors: Banner[];
    let id: number;
    if (same) {
      id = same.id;
      const actions = [...same.actions.filter((a) => a !== action), action];
      errors = this.state.errors.map((b) => (b === same ? { ...same, action, actions, count: same.count + 1 } : b));
    } else {
      id = this.nextId++;
      errors = [...this.state.errors, { id, code: e.code, message: e.message, action, actions: [action], count: 1 }];
      for (const dropped of errors.slice(0, -MAX_BANNERS)) this.endExpiry(dropped.id);
      errors = errors.slice(-MAX_BANNERS);
    }
    this.store.setState({ errors });
    this.endExpiry(id);
    if (!this.disposables.isDisposed) this.expiry.set(id, this.disposables.timeout(() => this.dismissError(id), this.opts.bannerMs ?? NoticeConstants.bannerMs));
    return e;
  }

  /** `action` went through: it is no longer a reason for any banner, and a banner left with none goes. */
  succeeded(action: string): void {
    const errors = this.state.errors;
    if (!errors.some((b) => b.actions.includes(action))) return;
    const kept: Banner[] = [];
    for (const b of errors) {
      if (!b.actions.includes(action)) kept.push(b);
      else if (b.actions.length > 1) {
        const actions = b.actions.filter((a) => a !== action);
        kept.push({ ...b, actions, action: actions.at(-1) as string });
      } else this.endExpiry(b.id);
    }
    this.store.setState({ errors: kept });
  }

  dismissError(id: number): void {
    this.endExpiry(id);
    this.store.setState({ errors: this.state.errors.filter((b) => b.id !== id) });
  }

  private endExpiry(id: number): void {
    this.expiry.get(id)?.dispose();
    this.expiry.delete(id);
  }

  async requestNotifications(): Promise<void> {
    if (!this.opts.requestNotifyPermission) return;
    const p = await this.opts.requestNotifyPermission();
    this.store.setState({ notifyPermission: p });
  }
}
