import type { BoardEvent } from '../../src-shared/board/events.js';
import type { ThreadHost } from '../../src-main/host/threadHost.js';

/** Resolves with the first board event that matches, waiting on events rather than on time. */
export function nextEvent(host: ThreadHost, match: (e: BoardEvent) => boolean, timeoutMs = 20_000, what = 'a board event'): Promise<BoardEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const sub = host.board.onEvent((e) => {
      if (match(e)) {
        clearTimeout(timer);
        sub();
        resolve(e);
      }
    });
  });
}
