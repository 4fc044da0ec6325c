import { describe, expect, it } from 'vitest';
import { readHookEvent } from '../../../src-main/cli/hookInput.js';

/** The events as the CLIs hand them to `forkbench status --hook` on stdin (their own field names). */
describe("a hook event's prompt text", () => {
  it("Claude Code's PermissionRequest: the tool and its command", () => {
    const e = { hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'touch permitted.txt', description: 'Create the file' } };
    expect(readHookEvent(JSON.stringify(e))).toEqual({ skip: false, text: 'Bash: touch permitted.txt' });
  });

  it("Gemini CLI's ToolPermission notification: its message and what its details ask for", () => {
    // As Gemini CLI 0.61 sends it for a shell command (details as serializeConfirmationDetails writes them).
    const exec = { hook_event_name: 'Notification', notification_type: 'ToolPermission', message: 'Tool Confirm Shell Command requires execution', details: { type: 'exec', title: 'Confirm Shell Command', command: 'touch permitted.txt', rootCommand: 'touch' } };
    expect(readHookEvent(JSON.stringify(exec)).text).toBe('Tool Confirm Shell Command requires execution: touch permitted.txt');
    const edit = { ...exec, message: 'Tool Edit requires editing', details: { type: 'edit', fileName: 'a.txt', filePath: '/p/a.txt' } };
    expect(readHookEvent(JSON.stringify(edit)).text).toBe('Tool Edit requires editing: /p/a.txt');
    const bare = { ...exec, details: undefined };
    expect(readHookEvent(JSON.stringify(bare)).text).toBe('Tool Confirm Shell Command requires execution');
  });

  it("drops Claude's idle_prompt, and reads no text from what is not an event", () => {
    expect(readHookEvent(JSON.stringify({ hook_event_name: 'Notification', notification_type: 'idle_prompt', message: 'waiting' }))).toEqual({ skip: true, text: null });
    expect(readHookEvent('')).toEqual({ skip: false, text: null });
    expect(readHookEvent('not json')).toEqual({ skip: false, text: null });
    expect(readHookEvent(JSON.stringify({ details: 'text' }))).toEqual({ skip: false, text: null });
  });
});
