/**
 * The pty host's wire: length-prefixed frames over a Unix socket. Pty output and input travel as binary
 * frames (a pane number and the UTF-8 bytes, no JSON per chunk); everything else is a small JSON control
 * frame. A frame is [u32 BE length of the rest][u8 kind][body]; a data body is [u32 BE pane][bytes].
 */

export const FrameKind = {
  control: 1,
  data: 2,
} as const;

export const FrameLimits = {
  /** A frame larger than this is garbage, not pty output: a batch is at most ~100k chars (~400 KB of
   *  UTF-8 at worst) and a screen with its scrollback a few MB. 64 MB bounds what a broken peer can make
   *  us buffer. */
  maxFrameBytes: 64 * 1024 * 1024,
} as const;

/** Bytes before a frame's body: the length (4) and the kind (1). */
const HEAD = 5;
/** Bytes of a data body before its payload: the pane number. */
const PANE = 4;

export function controlFrame(message: unknown): Buffer {
  const json = JSON.stringify(message);
  const len = Buffer.byteLength(json);
  const buf = Buffer.allocUnsafe(HEAD + len);
  buf.writeUInt32BE(1 + len, 0);
  buf.writeUInt8(FrameKind.control, 4);
  buf.write(json, HEAD, 'utf8');
  return buf;
}

/** One copy: the string is encoded straight into the frame's buffer. */
export function dataFrame(pane: number, data: string): Buffer {
  const len = Buffer.byteLength(data);
  const buf = Buffer.allocUnsafe(HEAD + PANE + len);
  buf.writeUInt32BE(1 + PANE + len, 0);
  buf.writeUInt8(FrameKind.data, 4);
  buf.writeUInt32BE(pane, HEAD);
  buf.write(data, HEAD + PANE, 'utf8');
  return buf;
}

export interface FrameSink {
  control(message: unknown): void;
  data(pane: number, data: string): void;
  /** A frame of a sane length that is no frame of ours (a control frame that is not JSON, an unknown kind,
   *  a data frame too short for its pane): skipped, since its length still says where the next one starts. */
  malformed(why: string): void;
}

/**
 * Reassembles frames from socket reads split anywhere. Reads are kept as a list and joined only when a
 * frame spans them, so a flood of whole frames costs no copy beyond the string decode.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;

  /** `limit`: the largest frame accepted now (a connection not yet adopted is allowed far less). */
  constructor(
    private readonly sink: FrameSink,
    private readonly limit: () => number = () => FrameLimits.maxFrameBytes,
  ) {}

  /** Throws on a length that cannot be ours (zero, or past the limit): the caller drops the connection, since
   *  nothing after it can be trusted to line up. Any other bad frame goes to the sink's `malformed`. */
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= HEAD) {
      const head = this.peek(HEAD);
      const len = head.readUInt32BE(0);
      if (len < 1 || len > this.limit()) throw new Error(`pty host frame of ${len} bytes`);
      if (this.buffered < 4 + len) return;
      const frame = this.take(4 + len);
      this.dispatch(frame);
    }
  }

  /** Bytes of a frame not yet whole: what a connection that ends now leaves unread. */
  get pending(): number {
    return this.buffered;
  }

  private dispatch(frame: Buffer): void {
    const kind = frame.readUInt8(4);
    if (kind === FrameKind.control) {
      let message: unknown;
      try {
        message = JSON.parse(frame.toString('utf8', HEAD));
      } catch (err) {
        return this.sink.malformed(`a control frame of ${frame.length - HEAD} bytes that is not JSON (${(err as Error).message})`);
      }
      this.sink.control(message);
    } else if (kind === FrameKind.data) {
      if (frame.length < HEAD + PANE) return this.sink.malformed('a data frame without a pane');
      this.sink.data(frame.readUInt32BE(HEAD), frame.toString('utf8', HEAD + PANE));
    } else {
      this.sink.malformed(`a frame of unknown kind ${kind}`);
    }
  }

  /** The first `n` bytes, joined only if they span reads (the list is rewritten so the join is kept). */
  private peek(n: number): Buffer {
    const first = this.chunks[0] as Buffer;
    if (first.length >= n) return first;
    const joined = Buffer.concat(this.chunks);
    this.chunks = [joined];
    return joined;
  }

  private take(n: number): Buffer {
    const first = this.peek(n);
    const frame = first.subarray(0, n);
    if (first.length === n) this.chunks.shift();
    else this.chunks[0] = first.subarray(n);
    this.buffered -= n;
    return frame;
  }
}
