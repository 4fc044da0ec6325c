import { describe, expect, it } from 'vitest';
import { PaneFrame, paneFrameHead, readPaneFrame } from '../../../src-shared/protocol/paneFrame.js';

const utf8 = new TextEncoder();
const message = (key: string, agentId: string, text: string) => {
  const head = paneFrameHead(key, agentId);
  const body = utf8.encode(text);
  const all = new Uint8Array(head.length + body.length);
  all.set(head);
  all.set(body, head.length);
  return all;
};

describe('pane output frames on the WebSocket', () => {
  it('carry the key, the agent id and the text as its UTF-8 bytes, behind a header of 3 bytes plus the ids', () => {
    const text = 'café \x1b[1mbold\x1b[0m 🙂\r\n';
    const m = message('0123456789abcdef', 'a-1.x:y', text);
    expect(m.length).toBe(3 + 16 + 7 + utf8.encode(text).length);
    expect(m[0]).toBe(PaneFrame.kind);
    const head = readPaneFrame(m);
    expect(head).toEqual({ key: '0123456789abcdef', agentId: 'a-1.x:y', textAt: 26 });
    expect(new TextDecoder().decode(m.subarray((head as { textAt: number }).textAt))).toBe(text);
    // No text is a message too (nothing to show, nothing lost).
    expect(readPaneFrame(message('k', 'a', ''))).toEqual({ key: 'k', agentId: 'a', textAt: 5 });
  });

  it('refuse ids that are not one to 255 printable ASCII characters, rather than writing a header that lies', () => {
    expect(() => paneFrameHead('', 'a')).toThrow(/key must be 1 to 255/);
    expect(() => paneFrameHead('k', 'x'.repeat(256))).toThrow(/agent id must be 1 to 255 characters, not 256/);
    expect(() => paneFrameHead('k', 'é')).toThrow(/printable ASCII \(character 0 is U\+00e9\)/);
    expect(() => paneFrameHead('k\n', 'a')).toThrow(/character 1 is U\+000a/);
    expect(paneFrameHead('k', 'x'.repeat(255)).length).toBe(3 + 1 + 255);
  });

  it('read a message that is no pane output, or whose header is cut short, as an error, never as output', () => {
    expect(readPaneFrame(new Uint8Array([]))).toEqual({ error: expect.stringMatching(/no pane output/) });
    expect(readPaneFrame(new Uint8Array([2, 1, 65, 1, 66]))).toEqual({ error: expect.stringMatching(/kind 2/) });
    const whole = message('0123456789abcdef', 'agent', 'x');
    for (let cut = 3; cut < paneFrameHead('0123456789abcdef', 'agent').length; cut++) expect(readPaneFrame(whole.subarray(0, cut))).toEqual({ error: expect.stringMatching(/cut short/) });
    expect(readPaneFrame(new Uint8Array([1, 0, 1, 65]))).toEqual({ error: expect.stringMatching(/cut short/) });
  });
});
