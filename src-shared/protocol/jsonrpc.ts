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
 */
export class LineSplitter {
  private buf = '';
  constructor(private readonly maxChars = MAX_FRAME_BYTES) {}

  /** Returns complete lines; throws FrameTooLarge once the pending line exceeds the limit. */
  push(chunk: string): string[] {
    this.buf += chunk;
    const lines = this.buf.split('\n');
    this.buf = lines.pop() ?? '';
    if (this.buf.length > this.maxChars || lines.some((l) => l.length > this.maxChars)) throw new FrameTooLarge(this.maxChars);
    return lines;
  }
}

export class FrameTooLarge extends Error {
  constructor(limit: number) {
    super(`frame larger than ${limit} bytes`);
    this.name = 'FrameTooLarge';
  }
}
