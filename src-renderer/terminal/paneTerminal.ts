import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { SearchAddon } from '@xterm/addon-search';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { WebglAddon } from '@xterm/addon-webgl';
import type { Transport } from '../transport/types.js';
import { PaneFeed } from './paneFeed.js';
import { pageTerminalTheme, watchColorScheme } from './terminalTheme.js';
import { webglSupport } from './webglSupport.js';
import { TerminalSize } from '../../src-shared/terminal/terminalSize.js';

export const TerminalConstants = {
  /** Lines of scrollback each pane keeps in the window (the host's mirror keeps its own for restore). */
  scrollback: 5_000,
  /** A lost WebGL context is retried this many times per pane before it stays on the DOM renderer. */
  maxWebglAttempts: 3,
} as const;

export type ReportError = (action: string, err: unknown) => void;

/** Open a link from terminal output in a new browser context; Electron's main validates the URL again. */
export function openLink(uri: string): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return;
  const w = window.open(url.href, '_blank', 'noopener,noreferrer');
  if (w) w.opener = null;
}

/**
 * One agent's terminal in the window. It lives as long as the agent's tab, visible or not: a hidden pane
 * keeps parsing its output (and acking it), so switching tabs is instant. Only the visible pane holds a
 * WebGL context (browsers allow ~16 per page); hidden ones drop back to the DOM renderer. Where WebGL is drawn
 * in software (no GPU: SwiftShader, llvmpipe), every pane keeps the DOM renderer, which costs far less CPU.
 */
export class PaneTerminal {
  readonly element: HTMLDivElement;
  readonly term: Terminal;
  readonly feed: PaneFeed;
  readonly search = new SearchAddon();
  private readonly fit = new FitAddon();
  private webgl: WebglAddon | null = null;
  private webglAttempts = 0;
  private opened = false;
  private visible = false;
  private disposed = false;
  private resizeObserver: ResizeObserver | null = null;
  private fitFrame = 0;
  private sentSize: { cols: number; rows: number } | null = null;
  /** Stops following the system's colour scheme (dispose). */
  private readonly stopSchemeWatch: () => void;
  /** Set by the component showing this pane: Ctrl/Cmd+F was pressed inside the terminal. */
  onFindRequested: (() => void) | null = null;
  /** Called with the size after each fit, so new agents can be launched at the size a pane shows. */
  onFitted: ((size: { cols: number; rows: number }) => void) | null = null;

  constructor(
    readonly key: string,
    readonly agentId: string,
    private readonly transport: Transport,
    private readonly reportError: ReportError,
  ) {
    this.element = document.createElement('div');
    this.element.className = 'xterm-host';
    this.term = new Terminal({
      scrollback: TerminalConstants.scrollback,
      fontFamily: 'ui-monospace, "Cascadia Code", "JetBrains Mono", Menlo, Consolas, monospace',
      fontSize: 13,
      theme: pageTerminalTheme(),
      cursorBlink: false,
      convertEol: false,
    });
    // The scheme changes while the pane lives (the system goes dark at dusk): the terminal follows at once,
    // hidden panes too, so a tab switch never shows the other scheme's colours.
    this.stopSchemeWatch = watchColorScheme(() => {
      if (!this.disposed) this.term.options.theme = pageTerminalTheme();
    });
    this.term.loadAddon(this.fit);
    this.term.loadAddon(this.search);
    this.term.loadAddon(new WebLinksAddon((_event, uri) => openLink(uri)));
    this.term.attachCustomKeyEventHandler((e) => {
      if (e.type === 'keydown' && (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'f') {
        e.preventDefault();
        this.onFindRequested?.();
        return false;
      }
      return true;
    });
    this.term.onData((data) => {
      this.transport.call('agent.input', { key, agentId, data }).catch((err) => this.report('type into the terminal', err));
    });
    this.feed = new PaneFeed(
      { write: (data, parsed) => this.term.write(data, parsed), reset: () => this.term.reset() },
      (chars) => {
        this.transport.call('agent.ack', { key, agentId, chars }).catch((err) => this.report('acknowledge terminal output', err));
      },
    );
  }

  /** Fetch the host's screen + scrollback and show it before any further live output. */
  restore(): Promise<void> {
    this.feed.resetAcks();
    return this.feed.restore(() => this.transport.call('agent.screen', { key: this.key, agentId: this.agentId })).catch((err) =>
      this.report('restore the terminal', err),
    );
  }

  show(container: HTMLElement): void {
    if (this.disposed) return;
    if (this.element.parentElement !== container) container.appendChild(this.element);
    if (!this.opened) {
      this.term.open(this.element);
      this.opened = true;
    }
    this.visible = true;
    this.enableWebgl();
    this.resizeObserver = new ResizeObserver(() => this.scheduleFit());
    this.resizeObserver.observe(container);
    this.fitNow();
    this.term.refresh(0, this.term.rows - 1);
    this.term.focus();
  }

  hide(): void {
    this.visible = false;
    this.resizeObserver?.disconnect();
    this.resizeObserver = null;
    if (this.fitFrame) cancelAnimationFrame(this.fitFrame);
    this.fitFrame = 0;
    this.disableWebgl();
    this.element.remove();
  }

  get isVisible(): boolean {
    return this.visible;
  }

  get usesWebgl(): boolean {
    return this.webgl !== null;
  }

  focus(): void {
    this.term.focus();
  }

  /** The terminal's text (scrollback + screen), trailing blanks trimmed: for the debug hook in e2e tests. */
  text(): string {
    const buf = this.term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < buf.length; i++) lines.push(buf.getLine(i)?.translateToString(true) ?? '');
    return lines.join('\n').replace(/\s+$/, '');
  }

  private scheduleFit(): void {
    if (this.fitFrame) return;
    this.fitFrame = requestAnimationFrame(() => {
      this.fitFrame = 0;
      this.fitNow();
    });
  }

  /** Fit the terminal to its container and tell the host the new size (only when it changed). */
  fitNow(): void {
    if (!this.visible || this.disposed) return;
    const dims = this.fit.proposeDimensions();
    if (!dims || !Number.isFinite(dims.cols) || !Number.isFinite(dims.rows) || dims.cols < 2 || dims.rows < 2) return;
    // Never below a usable size: a squeezed box clips the terminal (its container hides the overflow)
    // instead of telling the pty a width at which the shell's redraw garbles its screen for good.
    const cols = clamp(dims.cols, TerminalSize.usableCols, TerminalSize.maxCols);
    const rows = clamp(dims.rows, TerminalSize.usableRows, TerminalSize.maxRows);
    if (cols !== this.term.cols || rows !== this.term.rows) this.term.resize(cols, rows);
    this.onFitted?.({ cols, rows });
    if (this.sentSize?.cols === cols && this.sentSize.rows === rows) return;
    this.sentSize = { cols, rows };
    this.transport.call('agent.resize', { key: this.key, agentId: this.agentId, cols, rows }).catch((err) => this.report('resize the terminal', err));
  }

  private enableWebgl(): void {
    if (this.webgl || !this.opened || this.webglAttempts >= TerminalConstants.maxWebglAttempts) return;
    // Software WebGL does not throw, it is just slow: only a GPU is worth leaving the DOM renderer for.
    if (webglSupport().kind !== 'hardware') {
      this.webglAttempts = TerminalConstants.maxWebglAttempts;
      return;
    }
    this.webglAttempts++;
    let addon: WebglAddon | null = null;
    try {
      addon = new WebglAddon();
      const a = addon;
      // Context lost (GPU reset, too many contexts): drop to the DOM renderer, which xterm resumes by itself.
      a.onContextLoss(() => {
        if (this.webgl === a) this.disableWebgl();
      });
      this.term.loadAddon(a);
      this.webgl = a;
    } catch {
      // No WebGL here (headless, blocklisted GPU): the DOM renderer stays, and we stop trying.
      try {
        addon?.dispose();
      } catch {
        /* half-initialised addon */
      }
      this.webglAttempts = TerminalConstants.maxWebglAttempts;
    }
  }

  private disableWebgl(): void {
    const a = this.webgl;
    this.webgl = null;
    if (!a) return;
    try {
      a.dispose();
    } catch {
      /* already gone with its context */
    }
  }

  private report(action: string, err: unknown): void {
    if (this.disposed) return;
    // While disconnected the connection badge already says so; everything else is shown to the person.
    if ((err as { code?: unknown })?.code === 'disconnected') return;
    this.reportError(action, err);
  }

  dispose(): void {
    if (this.disposed) return;
    this.hide();
    this.disposed = true;
    this.stopSchemeWatch();
    this.feed.dispose();
    this.term.dispose();
  }
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, n));
}
