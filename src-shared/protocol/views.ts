/**
 * What crosses a process boundary about claims. The host's monotonic deadlines mean nothing elsewhere, so a
 * claim travels as the time it has left, measured when it was sent (see reanchorDeadline in board/lease).
 */
export interface ClaimView {
  readonly taskId: string;
  readonly agentId: string;
  /** The fencing token: name it in every later write so a leftover write from an older claim is refused. */
  readonly token: number;
  readonly remainingMs: number;
}
