import { useMemo, useRef } from 'react';

/**
 * Where the focus was when a dialog, menu or panel opened, to give it back when that closes: keyboard users
 * go on where they were. An element gone meanwhile (redrawn, removed) is not focused.
 */
export function useReturnFocus(): { remember(): void; restore(): boolean } {
  const at = useRef<Element | null>(null);
  return useMemo(
    () => ({
      remember() {
        at.current = document.activeElement;
      },
      /** Focus goes back; false when there is nothing to go back to. */
      restore() {
        const back = at.current;
        at.current = null;
        if (!(back instanceof HTMLElement && back.isConnected)) return false;
        back.focus();
        return true;
      },
    }),
    [],
  );
}
