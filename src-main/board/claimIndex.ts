/**
 * Which tasks each agent holds, for the host's per-agent operations (the liveness renewal, the hard release).
 * Each task has one slot, kept for the board's lifetime and linked into its holder's list; a change of holder
 * relinks the slot. Sets of task ids per agent would add and delete keys on every claim and release, and on
 * a 10k-task board that map churn (rehashing) cost more than the rest of a claim.
 */
interface Slot {
  readonly taskId: string;
  agentId: string | null;
  prev: Slot | null;
  next: Slot | null;
}

export class ClaimIndex {
  private readonly slots = new Map<string, Slot>();
  private readonly heads = new Map<string, Slot>();

  /** Record that `taskId` is now held by `agentId` (null: by nobody). */
  set(taskId: string, agentId: string | null): void {
    let slot = this.slots.get(taskId);
    if (slot?.agentId === agentId) return;
    if (!slot) this.slots.set(taskId, (slot = { taskId, agentId: null, prev: null, next: null }));
    if (slot.agentId !== null) this.unlink(slot, slot.agentId);
    slot.agentId = agentId;
    if (agentId === null) return;
    const head = this.heads.get(agentId);
    slot.prev = null;
    slot.next = head ?? null;
    if (head) head.prev = slot;
    this.heads.set(agentId, slot);
  }

  tasksOf(agentId: string): string[] {
    const out: string[] = [];
    for (let s = this.heads.get(agentId); s; s = s.next ?? undefined) out.push(s.taskId);
    return out;
  }

  agents(): string[] {
    return [...this.heads.keys()];
  }

  private unlink(slot: Slot, agentId: string): void {
    if (slot.prev) slot.prev.next = slot.next;
    else if (slot.next) this.heads.set(agentId, slot.next);
    else this.heads.delete(agentId);
    if (slot.next) slot.next.prev = slot.prev;
    slot.prev = slot.next = null;
  }
}
