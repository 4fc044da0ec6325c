/**
 * A notice of the host's shown in a pane's terminal OUTPUT, never typed into its input: what a plain shell
 * is told (a task assigned or taken, its folder about to be removed). Typed into a shell, a notice is a
 * command line (a `#` comment at best: zsh without interactive_comments runs it, and it lands in the history
 * either way) and a shell in a removed folder answers it with getcwd errors. Written to the output, nothing
 * runs: the person sees it in the pane, and it stays in the pane's scrollback, in the host's mirror and in
 * every window alike, since it goes down the same ordered path as the program's own output (ptySession.ts).
 *
 * The notice goes on lines of its own ABOVE the line the cursor is on, which is written again below it as it
 * was (its text, at the same column): a shell's line editor (readline, zle) keeps only where its cursor is
 * within its own line and redraws with relative moves, so a half-typed command line goes on as it was. It is
 * drawn in italics and marked "Forkbench:", so it reads as the host's word and not the program's. Not dim:
 * a terminal draws dim at half its colour's strength, under WCAG's contrast ratio on either scheme (axe-core
 * in the window's accessibility e2e said so).
 *
 * Board text inside a notice (a task title, written by an agent) is shown, never acted on: every control
 * character becomes a visible escape (`\x1b`) before anything of ours is put around it, so a title cannot
 * move the cursor, retitle the pane or write the clipboard of another agent's terminal.
 */
import { showControls } from '../../src-shared/text/controlChars.js';

export const PaneNoticeLimits = {
  /** The longest notice (an assignment naming a long title and its worktree) is ~600 characters; a title can
   *  be long, and a notice past this is cut, so one cannot fill a screen. */
  maxChars: 2_000,
  /** A desktop notification shows a line or two: the signal carries the notice's start. */
  maxSignalChars: 200,
} as const;

/** What the notice is drawn around: the pane's screen as its mirror has parsed all output so far. */
export interface NoticeView {
  /** Cursor column and row (0-based, on the screen). */
  x: number;
  y: number;
  /** The screen row where the cursor's line starts (a long command line wraps over several rows). */
  lineTop: number;
  /** That line's rows as text, from lineTop down to its last wrapped row: every row but the last at full
   *  width (it wrapped there), the last without trailing blanks. */
  lineRows: readonly string[];
}

const SGR_RESET = '\x1b[0m';
const ITALIC = '\x1b[3m';
/** OSC 9: the notification iTerm2, WezTerm, kitty, Ghostty and Windows Terminal show; not 9;4 (progress). */
const notification = (text: string) => `\x1b]9;${text}\x07`;

/** The notice as it may reach a terminal: one line, every control shown as an escape, bounded. */
export function noticeText(text: string): string {
  const plain = showControls(text, 'none');
  return plain.length > PaneNoticeLimits.maxChars ? `${plain.slice(0, PaneNoticeLimits.maxChars - 1)}…` : plain;
}

/** The terminal's own notification of a notice (text already made plain by noticeText). */
export function noticeSignal(text: string): string {
  const short = text.length > PaneNoticeLimits.maxSignalChars ? `${text.slice(0, PaneNoticeLimits.maxSignalChars - 1)}…` : text;
  return notification(`Forkbench: ${short}`);
}

/**
 * The output that shows `texts` (plain, from noticeText) above the cursor's line: to the line's first row,
 * clear from there down, the notices in italics on lines of their own, then the line again and the cursor back at
 * its column. The terminal wraps and scrolls the notices itself (they push earlier output into the
 * scrollback), so no width is counted here: moves after them are relative to where the line is written.
 */
export function noticeOutput(texts: readonly string[], v: NoticeView): string {
  const lines = texts.map((t) => `${SGR_RESET}${ITALIC}Forkbench: ${t}${SGR_RESET}`).join('\r\n');
  const lastRow = v.lineTop + v.lineRows.length - 1;
  const up = lastRow - v.y;
  return (
    `\x1b[${v.lineTop + 1};1H\x1b[J` +
    `${lines}\r\n` +
    v.lineRows.join('') +
    (up > 0 ? `\x1b[${up}A` : '') +
    `\x1b[${v.x + 1}G`
  );
}
