/**
 * JSON-RPC 2.0 over newline-delimited JSON, as the agents' socket speaks it. Plain code with no Node or DOM
 * so the host, the CLI and tests share one framing.
 */

/** A frame larger than this is refused and the connection closed: a task body is at most 64 KiB, so a
 *  legitimate request is far smaller, and the host must not buffer without bound for a misbehaving client. */
export const MAX_FRAME_BYTES = 1024 * 1024;

export const RpcCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** The board refused the write; `data.reason` is the RejectionCode. */
  rejected: -32000,
  /** Missing or unknown agent secret. */
  unauthorized: -32001,
} as const;

/** An agent's call as it goes on the wire (the CLI writes it; its test reads it back). */
export interface RpcRequest {
  jsonrpc: '2.0';
  id: number | string;
  method: string;
  params?: Record<string, unknown>;
  /** The calling agent's secret. Outside `params` so no method can ever echo it into the board. */
  auth?: string;
}

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

export type RpcResponse =
  | { jsonrpc: '2.0'; id: number | string | null; result: unknown }
  | { jsonrpc: '2.0'; id: number | string | null; error: RpcError };

/**
 * Splits a byte stream into lines, refusing any line longer than MAX_FRAME_BYTES. Feed it text already
 * decoded (a UTF-8 decoder in streaming mode upstream keeps multi-byte characters whole).
 *
 * Each chunk is scanned once, and a pending line is joined once, when its newline arrives: appending every
 * chunk to one buffer and splitting that again made a slow writer's big line cost time quadratic in its
 * length (issue 16: four writers of 1 MiB in 256-byte chunks took 5.7 s of the host's CPU).
 */
export class LineSplitter {
  /** The pending line, in the pieces it arrived in. */
  private parts: string[] = [];
  private pendingChars = 0;
  constructor(private readonly maxChars = MAX_FRAME_BYTES) {}

  /** Returns complete lines; throws FrameTooLarge once the pending line exceeds the limit. */
  push(chunk: string): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', start)) {
      const piece = chunk.slice(start, nl);
      this.take(piece.length);
      lines.push(this.parts.length === 0 ? piece : this.parts.join('') + piece);
      this.parts = [];
      this.pendingChars = 0;
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = start === 0 ? chunk : chunk.slice(start);
      this.take(rest.length);
      this.parts.push(rest);
    }
    return lines;
  }

  /** Counts `chars` more into the pending line, refusing it once it is over the limit. */
  private take(chars: number): void {
    this.pendingChars += chars;
    if (this.pendingChars > this.maxChars) throw new FrameTooLarge(this.maxChars);
  }
}

export class FrameTooLarge extends Error {
  constructor(limit: number) {
    super(`frame larger than ${limit} bytes`);
    this.name = 'FrameTooLarge';
  }
}
