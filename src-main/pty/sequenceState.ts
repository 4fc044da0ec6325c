/**
 * Whether a pane's output, as read so far, stops between escape sequences or inside one. The host writes its
 * own notices into a pane's output (paneNotice.ts); written while a program's sequence is half read (a pty
 * read can end after `ESC [ 3`, or in the middle of an OSC title), the notice's first bytes would be taken
 * as the rest of that sequence, by the host's mirror and by the window alike. So a notice waits for a read
 * that leaves the stream at rest.
 *
 * The states are the VT500 parser's (as xterm.js parses them), reduced to "at rest or not": C1 introducers
 * count too, since xterm.js takes U+009B as CSI and U+009D as OSC.
 */

// The parser's states.
const GROUND = 0;
const ESCAPE = 1;
/** ESC followed by intermediates (ESC ( B, ESC # 8): ends at a final byte. */
const ESCAPE_INTERMEDIATE = 2;
const CSI = 3;
/** OSC, DCS, SOS, PM, APC: a string ended by ST (ESC \ or U+009C), OSC by BEL too. */
const STRING = 4;
/** ESC inside a string: `\` ends it (ST); anything else starts a new escape. */
const STRING_ESCAPE = 5;

const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
const ESC = 0x1b;
/** String terminator as a C1 control. */
const ST = 0x9c;

export class SequenceState {
  private state = GROUND;

  /** True when the output read so far ends between sequences: text written now starts a sequence of its own. */
  get atRest(): boolean {
    return this.state === GROUND;
  }

  /** The next read, in order: one pass over its characters, a tight loop per state (charCodeAt, no
   *  allocation), a fraction of what the mirror's parse of the same read costs (figures in the commit). */
  feed(data: string): void {
    let st = this.state;
    const n = data.length;
    let i = 0;
    while (i < n) {
      if (st === GROUND) {
        for (; i < n; i++) {
          const c = data.charCodeAt(i);
          if (c === ESC || (c >= 0x90 && c <= 0x9f)) break;
        }
        if (i === n) break;
        const c = data.charCodeAt(i++);
        // ESC; C1 CSI; C1 DCS, SOS, OSC, PM, APC. Other C1 controls act at once.
        st = c === ESC ? ESCAPE : c === 0x9b ? CSI : c === 0x90 || c === 0x98 || c >= 0x9d ? STRING : GROUND;
      } else if (st === CSI) {
        for (; i < n; i++) {
          const c = data.charCodeAt(i);
          if (c === ESC) st = ESCAPE;
          else if ((c >= 0x40 && c <= 0x7e) || c === CAN || c === SUB) st = GROUND;
          else continue;
          i++;
          break;
        }
      } else if (st === STRING) {
        for (; i < n; i++) {
          const c = data.charCodeAt(i);
          if (c === ESC) st = STRING_ESCAPE;
          else if (c === BEL || c === ST || c === CAN || c === SUB) st = GROUND;
          else continue;
          i++;
          break;
        }
      } else if (st === STRING_ESCAPE) {
        // `\` ends the string; anything else starts a new escape, read again as an escape's.
        if (data.charCodeAt(i) === 0x5c) {
          st = GROUND;
          i++;
        } else st = ESCAPE;
      } else {
        const c = data.charCodeAt(i++);
        if (c === ESC) st = ESCAPE;
        else if (c === CAN || c === SUB) st = GROUND;
        else if (c < 0x20) {
          // other C0 controls act and leave the escape as it was
        } else if (c <= 0x2f) st = ESCAPE_INTERMEDIATE;
        else if (st === ESCAPE && c === 0x5b) st = CSI; // [
        else if (st === ESCAPE && (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f)) st = STRING; // ] P X ^ _
        else st = GROUND; // a final byte
      }
    }
    this.state = st;
  }
}
