/** The sizes a pane's terminal may have, for the host that sizes the pty and the window that sizes xterm. */
export const TerminalSize = {
  /** A common terminal's size, until the window says what fits. */
  defaultCols: 100,
  defaultRows: 30,
  /** Below this a shell's redraw garbles and a TUI cannot lay itself out. */
  minCols: 2,
  minRows: 2,
  /** What the window ever sizes a pane to: a narrow or half-laid-out window clips the terminal rather
   *  than shrink it, since a shell prompt, a TUI's status line or an agent's diff is unreadable narrower. */
  usableCols: 40,
  usableRows: 8,
  /** Wider than any screen at any font size; a bound so a bad resize cannot ask for gigabytes of buffer. */
  maxCols: 1000,
  maxRows: 500,
} as const;

export const DEFAULT_TERMINAL_SIZE = { cols: TerminalSize.defaultCols, rows: TerminalSize.defaultRows } as const;
