/**
 * Whether a pane's output, as read so far, stops between escape sequences or inside one. The host writes its
 * own notices into a pane's output (paneNotice.ts); written while a program's sequence is half read (a pty
 * read can end after `ESC [ 3`, or in the middle of an OSC title), the notice's first bytes would be taken
 * as the rest of that sequence, by the host's mirror and by the window alike. So a notice waits for a read
 * that leaves the stream at rest.
 *
 * The states are the VT500 parser's (as xterm.js parses them), reduced to "at rest or not": C1 introducers
 * count too, since xterm.js takes U+009B as CSI and U+009D as OSC. Each read is scanned by jumping to the
 * next byte that can change the state (a native regex search), so text between sequences costs nothing.
 */

const S = {
  Ground: 0,
  Escape: 1,
  /** ESC followed by intermediates (ESC ( B, ESC # 8): ends at a final byte. */
  EscapeIntermediate: 2,
  Csi: 3,
  /** OSC, DCS, SOS, PM, APC: a string ended by ST (ESC \ or U+009C), OSC by BEL too. */
  Str: 4,
  /** ESC inside a string: `\` ends it (ST); anything else starts a new escape. */
  StrEscape: 5,
} as const;
type S = (typeof S)[keyof typeof S];

const CAN = 0x18;
const SUB = 0x1a;
const ESC = 0x1b;

/** Bytes that leave the ground state: ESC and the C1 introducers of CSI and of the strings. */
const FROM_GROUND = /[\x1b\x90\x98\x9b\x9d\x9e\x9f]/g;
/** Bytes that end or abort a CSI: a final byte, ESC, CAN, SUB. */
const FROM_CSI = /[\x40-\x7e\x1b\x18\x1a]/g;
/** Bytes that end or abort a string: BEL, ST, ESC, CAN, SUB. */
const FROM_STR = /[\x07\x9c\x1b\x18\x1a]/g;

export class SequenceState {
  private state: S = S.Ground;

  /** True when the output read so far ends between sequences: text written now starts a sequence of its own. */
  get atRest(): boolean {
    return this.state === S.Ground;
  }

  /** The next read, in order. */
  feed(data: string): void {
    let i = 0;
    const n = data.length;
    while (i < n) {
      switch (this.state) {
        case S.Ground: {
          FROM_GROUND.lastIndex = i;
          const m = FROM_GROUND.exec(data);
          if (!m) return;
          const c = data.charCodeAt(m.index);
          this.state = c === ESC ? S.Escape : c === 0x9b ? S.Csi : S.Str;
          i = m.index + 1;
          break;
        }
        case S.Csi: {
          FROM_CSI.lastIndex = i;
          const m = FROM_CSI.exec(data);
          if (!m) return;
          this.state = data.charCodeAt(m.index) === ESC ? S.Escape : S.Ground;
          i = m.index + 1;
          break;
        }
        case S.Str: {
          FROM_STR.lastIndex = i;
          const m = FROM_STR.exec(data);
          if (!m) return;
          this.state = data.charCodeAt(m.index) === ESC ? S.StrEscape : S.Ground;
          i = m.index + 1;
          break;
        }
        case S.StrEscape: {
          if (data.charCodeAt(i) === 0x5c) {
            this.state = S.Ground;
            i++;
          } else this.state = S.Escape; // the same byte, read again as an escape's
          break;
        }
        case S.Escape:
        case S.EscapeIntermediate: {
          const c = data.charCodeAt(i++);
          if (c === ESC) this.state = S.Escape;
          else if (c === CAN || c === SUB) this.state = S.Ground;
          else if (c < 0x20) {
            // other C0 controls act and leave the escape as it was
          } else if (c <= 0x2f) this.state = S.EscapeIntermediate;
          else if (this.state === S.Escape && c === 0x5b) this.state = S.Csi; // [
          else if (this.state === S.Escape && (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f)) this.state = S.Str; // ] P X ^ _
          else this.state = S.Ground; // a final byte
          break;
        }
      }
    }
  }
}
