/**
 * `forkbench status STATE --hook`: run by an agent CLI's own hooks, which hand the hook its event as JSON on
 * stdin. From the event comes the prompt's text (the tool and command a permission is asked for, or the
 * notification's message); some events are not what they say and are dropped here, before any call.
 */

/** How long to wait for the hook's stdin: CLIs write the event at once and close it; a hook run by hand
 *  from a terminal has no event and must not hang. */
export const HOOK_STDIN_WAIT_MS = 500;
/** An event bigger than this is not read further: the text needs only its first fields. */
const MAX_EVENT_CHARS = 256 * 1024;

/** Reads stdin to its end, or what came within the wait; '' for a terminal. */
export function readHookStdin(stdin: NodeJS.ReadStream = process.stdin, waitMs = HOOK_STDIN_WAIT_MS): Promise<string> {
  if (stdin.isTTY) return Promise.resolve('');
  return new Promise((resolve) => {
    let got = '';
    const done = () => {
      clearTimeout(timer);
      stdin.removeAllListeners('data');
      stdin.pause();
      resolve(got);
    };
    const timer = setTimeout(done, waitMs);
    stdin.setEncoding('utf8');
    stdin.on('data', (chunk: string) => {
      got += chunk;
      if (got.length > MAX_EVENT_CHARS) done();
    });
    stdin.once('end', done);
    stdin.once('error', done);
  });
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v : null);

/** What a hook event says about the prompt: null text when it says nothing; `skip` for an event to drop. */
export function readHookEvent(raw: string): { skip: boolean; text: string | null } {
  let e: unknown;
  try {
    e = JSON.parse(raw);
  } catch {
    return { skip: false, text: null };
  }
  if (typeof e !== 'object' || e === null) return { skip: false, text: null };
  const ev = e as Record<string, unknown>;
  // Claude Code's idle_prompt fires on a fixed 60 s timer, also while the agent is still thinking: it says
  // nothing about waiting. The profiles never hook it; this catches a matcher that lets it through.
  if (ev.notification_type === 'idle_prompt') return { skip: true, text: null };
  const message = str(ev.message);
  // Gemini CLI's Notification says "Tool Confirm Shell Command requires execution" and puts what is asked
  // for in its details: the command, the file, or the MCP tool.
  const details = (typeof ev.details === 'object' && ev.details !== null ? ev.details : {}) as Record<string, unknown>;
  const asked = str(details.command) ?? str(details.filePath) ?? str(details.fileName) ?? str(details.toolName);
  if (message) return { skip: false, text: asked ? `${message}: ${asked}` : message };
  const tool = str(ev.tool_name);
  if (tool) {
    const input = (typeof ev.tool_input === 'object' && ev.tool_input !== null ? ev.tool_input : {}) as Record<string, unknown>;
    const what = str(input.command) ?? str(input.file_path) ?? str(input.url) ?? str(input.description);
    return { skip: false, text: what ? `${tool}: ${what}` : tool };
  }
  return { skip: false, text: null };
}
