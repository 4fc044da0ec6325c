import { PointerSensor, type PointerSensorProps } from '@dnd-kit/core';

/**
 * dnd-kit's pointer sensor, letting the page go when the pointer does. dnd-kit 6.3.1 keeps its document
 * listeners for 50 ms after a drag's release (a timer): every click in that time is stopped before it reaches
 * React, and every text selection is cleared, the caret of a field that took the focus included (dnd-kit
 * issue 1037). A person's next click or keystroke right after a drag, or after a click on a card (a press
 * and release of this sensor), was lost: the Up button of the merge queue did nothing, the details panel's
 * field dropped what was typed, and its × stayed open. On a loaded machine the 50 ms stretch far longer, as
 * Chromium runs input before a due timer (CI, issue 48: taskWaits, mergeQueue).
 *
 * So the selection guard and the click guard end with the release, and only the click that the release
 * itself makes is swallowed (the browser sends it at once, before any other press or key).
 */
export class ReleasingPointerSensor extends PointerSensor {
  constructor(props: PointerSensorProps) {
    super(props);
    const self = this as unknown as SensorInternals;
    // Another dnd-kit than the pinned one: its own behaviour stays (the e2e tests of issue 48 say so).
    if (typeof self.detach !== 'function' || typeof self.documentListeners?.removeAll !== 'function') return;
    const detach = self.detach.bind(this);
    const doc = props.event.target instanceof Node ? (props.event.target.ownerDocument ?? document) : document;
    self.detach = () => {
      detach();
      self.documentListeners.removeAll();
      if (self.activated) swallowReleaseClick(doc);
    };
  }
}

/** What dnd-kit 6.3.1's AbstractPointerSensor keeps private and ReleasingPointerSensor amends (the version is
 *  pinned in package.json). */
interface SensorInternals {
  /** A drag started (its activation constraint, if any, was met): only then are clicks guarded. */
  activated: boolean;
  /** Ends the sensor's listening: at the release, at a cancel. */
  detach(): void;
  /** The click guard, the selection guard and Escape, which detach leaves for 50 ms. */
  documentListeners: { removeAll(): void };
}

/**
 * Stop the click a drag's release produces from reaching the page (as dnd-kit's guard did), and nothing else:
 * the listener goes with that click, or with the next press or key if the browser sent none (a release where
 * the press's element is gone).
 */
function swallowReleaseClick(doc: Document): void {
  const swallow = (e: Event) => {
    e.stopPropagation();
    done();
  };
  const done = () => {
    doc.removeEventListener('click', swallow, true);
    doc.removeEventListener('pointerdown', done, true);
    doc.removeEventListener('keydown', done, true);
  };
  doc.addEventListener('click', swallow, true);
  doc.addEventListener('pointerdown', done, true);
  doc.addEventListener('keydown', done, true);
}
