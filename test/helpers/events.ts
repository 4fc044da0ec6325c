import type { BoardEvent } from '../../src-shared/board/events.js';
import type { ThreadHost } from '../../src-main/thread/threadHost.js';

/** Resolves with the first board event that matches, waiting on events rather than on time. */
export function nextEvent(host: ThreadHost, match: (e: BoardEvent) => boolean, timeoutMs = 20_000, what = 'a board event'): Promise<BoardEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const sub = host.board.onEvent((e) => {
      if (match(e)) {
        clearTimeout(timer);
        sub.dispose();
        resolve(e);
      }
    });
  });
}

/** Resolves with what an agent's pane printed, once it matches: output, not time, is what is waited on. */
export function paneText(host: ThreadHost, agentId: string, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      d.dispose();
      reject(new Error(`timed out waiting for ${pattern} in pane; saw: ${seen.slice(-500)}`));
    }, timeoutMs);
    const d = host.roster.relay.onData.event(({ agentId: id, data }) => {
      if (id !== agentId) return;
      seen += data;
      if (pattern.test(seen)) {
        clearTimeout(timer);
        d.dispose();
        resolve(seen);
      }
    });
  });
}
