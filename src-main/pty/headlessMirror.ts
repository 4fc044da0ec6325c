/**
 * A pane's in-process terminal state: a headless xterm fed with everything the pty prints, so a window
 * that attaches later (or the app after a reload) gets the screen back via serialize(), as VS Code's pty
 * host does.
 */
import serializeModule from '@xterm/addon-serialize';
import headlessModule from '@xterm/headless';
import { Emitter, type Disposable } from '../../src-shared/lifecycle/emitter.js';
import type { NoticeView } from './paneNotice.js';

// Both packages ship CommonJS only; under NodeNext their exports arrive on the default import.
const { Terminal } = headlessModule;
const { SerializeAddon } = serializeModule;

export const HeadlessMirrorConstants = {
  /** Lines kept above the screen. TOOLCHAIN measured RSS 58 MB bare, 72 MB with 1k scrollback, 107 MB with
   *  10k: 1,000 lines is a few screens of an agent's recent work for ~14 MB. */
  scrollback: 1_000,
} as const;

/**
 * What a program in the pane said to the terminal itself rather than onto the screen: a desktop notification
 * (OSC 9, or OSC 777;notify), the bell, a new window title, or a program status (OSC 7501;state=S:key=value…,
 * which Codex sends as its turn goes: idle, working, blocked on the person, done). Agent CLIs use them to ask
 * for attention.
 */
export type TerminalSignal =
  | { kind: 'notify'; text: string }
  | { kind: 'bell' }
  | { kind: 'title'; text: string }
  | { kind: 'status'; state: string; fields: Readonly<Record<string, string>> }
  /** A shell's prompt mark (OSC 133, FinalTerm's, which VS Code, iTerm2, kitty and WezTerm read): A the prompt
   *  starts, B the command line starts, C the command runs, D it finished. */
  | { kind: 'prompt'; mark: 'A' | 'B' | 'C' | 'D' };

/** OSC 7501's `state=blocked:app=codex:kind=permission` as its fields; null without a state. */
function parseProgramStatus(data: string): { state: string; fields: Record<string, string> } | null {
  const fields: Record<string, string> = {};
  for (const part of data.split(':')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields[part.slice(0, eq)] = part.slice(eq + 1);
  }
  const state = fields.state;
  if (!state) return null;
  delete fields.state;
  return { state, fields };
}

export class HeadlessMirror implements Disposable {
  private readonly term: InstanceType<typeof Terminal>;
  private readonly serializer: InstanceType<typeof SerializeAddon>;
  private disposed = false;
  /** Writes of the host's own being parsed (writeOwn): their notification is the host's, not the program's. */
  private own = 0;
  /** Fired as xterm parses them, in order with the output around them. */
  readonly onSignal = new Emitter<TerminalSignal>();

  constructor(cols: number, rows: number, scrollback: number = HeadlessMirrorConstants.scrollback) {
    // allowProposedApi: the serialize addon reads buffer internals that headless marks as proposed.
    this.term = new Terminal({ cols, rows, scrollback, allowProposedApi: true });
    this.serializer = new SerializeAddon();
    this.term.loadAddon(this.serializer);
    this.term.parser.registerOscHandler(9, (data) => {
      // OSC 9;4;… is ConEmu's progress bar (Windows Terminal and some CLIs set it while working), not a message.
      if (!/^4;/.test(data) && this.own === 0) this.onSignal.fire({ kind: 'notify', text: data });
      return true;
    });
    this.term.parser.registerOscHandler(777, (data) => {
      // rxvt's OSC 777;notify;TITLE;BODY
      const m = /^notify;([^;]*);?([\s\S]*)$/.exec(data);
      if (m && this.own === 0) this.onSignal.fire({ kind: 'notify', text: [m[1], m[2]].filter(Boolean).join(': ') });
      return true;
    });
    this.term.parser.registerOscHandler(7501, (data) => {
      const status = parseProgramStatus(data);
      if (status) this.onSignal.fire({ kind: 'status', ...status });
      return true;
    });
    this.term.parser.registerOscHandler(133, (data) => {
      const mark = data.charAt(0);
      if (mark === 'A' || mark === 'B' || mark === 'C' || mark === 'D') this.onSignal.fire({ kind: 'prompt', mark });
      return true;
    });
    this.term.onBell(() => this.onSignal.fire({ kind: 'bell' }));
    this.term.onTitleChange((text) => this.onSignal.fire({ kind: 'title', text }));
  }

  /** The lines on the screen now (not the scrollback), as text without trailing blanks. */
  visibleLines(): string[] {
    if (this.disposed) return [];
    const buf = this.term.buffer.active;
    const lines: string[] = [];
    for (let y = buf.viewportY; y < buf.viewportY + this.term.rows; y++) lines.push(buf.getLine(y)?.translateToString(true) ?? '');
    return lines;
  }

  /** Whether the program asked for bracketed paste (DECSET 2004), as far as its output is parsed. */
  get bracketedPaste(): boolean {
    return !this.disposed && this.term.modes.bracketedPasteMode;
  }

  /** Queues `data` for parsing; `parsed` runs once xterm has parsed it (xterm's write callback). */
  write(data: string, parsed?: () => void): void {
    if (this.disposed) return;
    this.term.write(data, parsed);
  }

  /**
   * Output of the host's own (a notice, paneNotice.ts), parsed in order with the program's: the notification
   * it carries is not the program asking for the person (an agent's "waiting for you"), so it is not
   * signalled. xterm runs each write's callback as soon as that write is parsed, before the next one, so the
   * count is up exactly while this write is parsed.
   */
  writeOwn(data: string, parsed?: () => void): void {
    if (this.disposed) return;
    this.term.write('', () => this.own++);
    this.term.write(data, () => {
      this.own--;
      parsed?.();
    });
  }

  /**
   * Where a notice can be drawn now (call once everything written is parsed), or null where drawing would
   * disturb the program: a full-screen program on the alternate screen (the notice would vanish with its
   * screen and shift what it drew), insert mode (the notice would push the line's text aside) or origin mode
   * (row numbers are the program's scroll region's).
   */
  noticeView(): NoticeView | null {
    if (this.disposed) return null;
    const buf = this.term.buffer.active;
    if (buf.type === 'alternate' || this.term.modes.insertMode || this.term.modes.originMode) return null;
    const row = (y: number) => buf.getLine(buf.baseY + y);
    let top = buf.cursorY;
    while (top > 0 && row(top)?.isWrapped) top--;
    let last = buf.cursorY;
    while (last + 1 < this.term.rows && row(last + 1)?.isWrapped) last++;
    const lineRows: string[] = [];
    for (let y = top; y <= last; y++) lineRows.push(row(y)?.translateToString(y === last) ?? '');
    return { x: buf.cursorX, y: buf.cursorY, lineTop: top, lineRows };
  }

  /** Resolves once everything written so far is parsed. */
  drained(): Promise<void> {
    if (this.disposed) return Promise.resolve();
    return new Promise((resolve) => this.term.write('', resolve));
  }

  resize(cols: number, rows: number): void {
    if (!this.disposed) this.term.resize(cols, rows);
  }

  /** The screen and scrollback as escape sequences that rebuild it in a fresh terminal. */
  serialize(): string {
    return this.disposed ? '' : this.serializer.serialize();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.onSignal.dispose();
    this.term.dispose();
  }
}
