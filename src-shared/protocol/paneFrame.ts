/**
 * Pane output on serve's WebSocket: a binary message of its own rather than a JSON `pane-data` push, so a
 * flood costs no JSON per chunk at either end. The host writes the text's UTF-8 straight behind a short
 * header (no escaping: a terminal's output is full of ESC, which JSON spells as six characters), and the page
 * reads the header and decodes the rest in one TextDecoder call. Everything else on the socket is JSON text
 * (windowApi.ts). Electron's IPC carries pushes as structured clones and has no use for this.
 *
 * Layout: [u8 kind = 1][u8 key length][key][u8 agent id length][agent id][the output, UTF-8]. The key (16 hex
 * digits) and the agent id ([A-Za-z0-9._:-]) are ASCII, one byte a character.
 */

export const PaneFrame = {
  /** The first byte of a pane output message; other values are left for other binary messages. */
  kind: 1,
  /** A length is one byte. */
  maxIdChars: 255,
} as const;

/** Where a pane output message's text starts, and whose it is. */
interface PaneFrameHead {
  key: string;
  agentId: string;
  textAt: number;
}

function ascii(what: string, s: string): string {
  if (s.length === 0 || s.length > PaneFrame.maxIdChars) throw new RangeError(`a pane frame's ${what} must be 1 to ${PaneFrame.maxIdChars} characters, not ${s.length}`);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) throw new RangeError(`a pane frame's ${what} must be printable ASCII (character ${i} is U+${c.toString(16).padStart(4, '0')})`);
  }
  return s;
}

/** The header of a message carrying `agentId`'s output in Thread `key`; the text's UTF-8 follows it. */
export function paneFrameHead(key: string, agentId: string): Uint8Array {
  const k = ascii('key', key);
  const a = ascii('agent id', agentId);
  const head = new Uint8Array(3 + k.length + a.length);
  head[0] = PaneFrame.kind;
  head[1] = k.length;
  for (let i = 0; i < k.length; i++) head[2 + i] = k.charCodeAt(i);
  head[2 + k.length] = a.length;
  for (let i = 0; i < a.length; i++) head[3 + k.length + i] = a.charCodeAt(i);
  return head;
}

function readAscii(bytes: Uint8Array, from: number, length: number): string {
  let s = '';
  for (let i = from; i < from + length; i++) s += String.fromCharCode(bytes[i] as number);
  return s;
}

/** A binary message's header, or why it is no pane output message of ours (it is then dropped, not guessed at). */
export function readPaneFrame(bytes: Uint8Array): PaneFrameHead | { error: string } {
  if (bytes.length < 3 || bytes[0] !== PaneFrame.kind) return { error: `a binary message of ${bytes.length} bytes that is no pane output (kind ${bytes[0] ?? 'none'})` };
  const keyChars = bytes[1] as number;
  const idAt = 2 + keyChars;
  const idChars = bytes[idAt];
  if (idChars === undefined || idAt + 1 + idChars > bytes.length || keyChars === 0 || idChars === 0) return { error: 'a pane output message whose header is cut short' };
  return { key: readAscii(bytes, 2, keyChars), agentId: readAscii(bytes, idAt + 1, idChars), textAt: idAt + 1 + idChars };
}
