/** Random bytes in a window write's idempotency key: 128 bits, as many as a UUID's, so two actions never
 *  share one, across windows and page loads. */
const WRITE_KEY_BYTES = 16;

/**
 * A new idempotency key for one action a person takes (issue 31): sent with the action's write, and with it
 * again if the page resends that write (transport/wsTransport.ts). Hex, so it fits the keys' pattern
 * (WRITE_KEY_PATTERN). `getRandomValues`, not `randomUUID`: a page served over plain HTTP to another machine
 * is no secure context, and only the former is there.
 */
export function newWriteKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(WRITE_KEY_BYTES));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
