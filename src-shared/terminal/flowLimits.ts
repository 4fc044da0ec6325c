/**
 * The flow-control numbers both ends of a pane's output share: the host pauses and resumes the pty by them
 * (src-main/pty/flowControl.ts), the window acks by them (src-renderer/terminal/ackBatcher.ts). Stated here
 * once because they only work together: see `charCountAckSize`.
 */
export const FlowLimits = {
  /** Pause above this many unacknowledged chars. VS Code uses 100,000 (FlowControlConstants.HighWatermarkChars)
   *  for Electron IPC; a page behind a WebSocket acks through a busy main thread (xterm's parse and the DOM
   *  renderer's frames share it), so 100k (~4 ms of parsing) ran out before an ack could come back: a 20 MB
   *  `cat` reached the page at 5.7-6.5 MB/s. 1,000,000 (~40 ms of parsing) keeps the page fed through those
   *  stalls: 9.4-9.8 MB/s in bench/browserBench.ts on this 2-core machine. It still alone bounds memory: at
   *  most this plus one read chunk (~2 MB of UTF-16) per consumer, far under xterm's 50 MB discard limit. */
  highWatermarkChars: 1_000_000,
  /** Resume below this: half the window, so a consumer still has half a window in hand when the pty reads
   *  again. (VS Code resumes at 5,000, i.e. once the consumer has all but emptied its window; then every
   *  cycle it sits idle for the resume's round trip: the review saw a page waiting 52-78 % of a flood.) The
   *  pty is toggled at most once per 500,000 chars, not on every ack. */
  lowWatermarkChars: 500_000,
  /** Consumers ack in steps of this many parsed chars: one message per 50 KB. VS Code's 5,000
   *  (CharCountAckSize) meant 4,000 acks, each a WebSocket message and a validated host call, for a 20 MB
   *  flood; at 50,000 the page's share of the bench above rose ~5 %.
   *
   *  It must stay below `lowWatermarkChars`: a window that has parsed everything still holds back up to one
   *  step short of an ack, and the host counts that as unparsed. Were a step the low watermark or more, a
   *  paused pty could wait for an ack the window will only send after more output, which the paused pty
   *  never gives: the pane would stall for good. */
  charCountAckSize: 50_000,
} as const;
