/** Whether a key press belongs to a field (or a terminal, whose input is a textarea), not to the page. */
export const typingIn = (t: EventTarget | null): boolean =>
  t instanceof HTMLElement && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName));
