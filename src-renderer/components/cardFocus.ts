/**
 * The keyboard's place on the board after an action on a card (issue 44: after Assign and Approve the focus
 * fell to the page). Assign, Approve and Reject move a card to another column, where it is drawn anew once
 * the host's push arrives, which comes after the call's answer, and under load several frames later: a focus
 * put on the old card is lost when it goes. So the focus follows the card for a while: each frame, if the
 * focus has fallen to the page, it goes to the card (or the control of it named), wherever it is now drawn.
 * The person's own move elsewhere (a field, a terminal, a dialog) ends the following at once.
 */

/** How long the focus follows: the push that moves a card is tens of ms after the answer on an idle
 *  machine; two seconds cover a loaded one's late frames without pulling the focus back much later. */
const FOLLOW_MS = 2000;

const cardSelector = (taskId: string) => `.board article[data-testid="card-${CSS.escape(taskId)}"]`;

/** Follow `taskId`'s card with the focus: onto `control` (a test id inside the card) when it is drawn, else
 *  onto the card itself. */
export function followCard(taskId: string, control?: string): void {
  const until = performance.now() + FOLLOW_MS;
  const target = (): HTMLElement | null => {
    const card = document.querySelector<HTMLElement>(cardSelector(taskId));
    if (!card) return null;
    return (control ? card.querySelector<HTMLElement>(`[data-testid="${CSS.escape(control)}"]`) : null) ?? card;
  };
  const tick = () => {
    const active = document.activeElement;
    const fallen = !active || active === document.body || !active.isConnected;
    const card = document.querySelector<HTMLElement>(cardSelector(taskId));
    if (!fallen && !card?.contains(active)) return;
    if (fallen) target()?.focus();
    if (performance.now() < until) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}

/** Up / Down (and j / k) from a focused card: the card drawn before or after it on the board, in reading
 *  order (down a column, then the next column). False when there is none that way. */
export function stepCard(from: HTMLElement, by: 1 | -1): boolean {
  const cards = [...document.querySelectorAll<HTMLElement>('.board article[data-testid^="card-"]')];
  const at = cards.indexOf(from);
  const next = at < 0 ? undefined : cards[at + by];
  if (!next) return false;
  next.focus();
  return true;
}

/** The keys that move between cards: arrows as in a list, j and k as in a pager. */
export const CARD_STEP_KEYS: Readonly<Record<string, 1 | -1>> = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 };

/**
 * One Tab stop per card (issue 44: a compact card cost four, one per button). The card is the stop; its
 * buttons are a toolbar inside it (WAI-ARIA's toolbar pattern, each button tabindex -1), reached from the
 * focused card with Right, moved along with Left / Right / Home / End, left with Escape (or Left from the
 * first) back to the card. Tab from anywhere in the card goes on to the next card, since nothing else in it
 * is a stop. A menu a button opened (Assign to…) keeps its own keys.
 */
export function actionsOf(card: HTMLElement): HTMLElement[] {
  const bar = card.querySelector<HTMLElement>(':scope > .card-actions');
  return bar ? [...bar.querySelectorAll<HTMLElement>(':scope > button:not(:disabled)')] : [];
}

/** Right from a focused card: onto its first action. False when it has none. */
export function enterActions(card: HTMLElement): boolean {
  const first = actionsOf(card)[0];
  first?.focus();
  return first !== undefined;
}

/** A key pressed on one of a card's actions: moves along them or back to the card; true when it was one of
 *  the toolbar's keys (the caller prevents its default: no scrolling). */
export function moveInActions(card: HTMLElement, from: Element, key: string): boolean {
  if (from.closest('[role="menu"]')) return false;
  const items = actionsOf(card);
  const at = items.indexOf(from as HTMLElement);
  if (at < 0) return false;
  const to = (el: HTMLElement | undefined) => {
    el?.focus();
    return true;
  };
  switch (key) {
    case 'ArrowRight':
      return to(items[Math.min(at + 1, items.length - 1)]);
    case 'ArrowLeft':
      return to(at === 0 ? card : items[at - 1]);
    case 'Home':
      return to(items[0]);
    case 'End':
      return to(items[items.length - 1]);
    case 'Escape':
      return to(card);
    default:
      return false;
  }
}
