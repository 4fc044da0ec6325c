import { describe, expect, it } from 'vitest';
import { controlFrame, dataFrame, FrameDecoder, FrameKind } from '../../../src-main/ptyhost/frames.js';

type Got = { control: unknown } | { pane: number; data: string } | { malformed: string };

function decodeAll(chunks: Buffer[]): Got[] {
  const got: Got[] = [];
  const d = new FrameDecoder({ control: (m) => got.push({ control: m }), data: (pane, data) => got.push({ pane, data }), malformed: (why) => got.push({ malformed: why }) });
  for (const c of chunks) d.push(c);
  return got;
}

describe('pty host frames', () => {
  // Multi-byte characters (é, 漢, an emoji's surrogate pair) so a split inside a character shows up too.
  const frames = [
    controlFrame({ t: 'req', id: 1, m: 'hello', p: { version: '1.0', protocol: 1 } }),
    dataFrame(7, 'plain \x1b[31mred\x1b[0m é 漢 😀\r\n'),
    dataFrame(4294967295, ''),
    controlFrame({ t: 'exit', pane: 7, exit: { exitCode: 0, signal: 9, signalName: 'SIGKILL' } }),
    // Bigger than one socket read (64 KiB), so it spans reads in real use.
    dataFrame(2, 'x'.repeat(70_000)),
  ];
  const wire = Buffer.concat(frames);
  const want: Got[] = [
    { control: { t: 'req', id: 1, m: 'hello', p: { version: '1.0', protocol: 1 } } },
    { pane: 7, data: 'plain \x1b[31mred\x1b[0m é 漢 😀\r\n' },
    { pane: 4294967295, data: '' },
    { control: { t: 'exit', pane: 7, exit: { exitCode: 0, signal: 9, signalName: 'SIGKILL' } } },
    { pane: 2, data: 'x'.repeat(70_000) },
  ];

  it('decodes the stream whole, and split in two at every byte boundary', () => {
    expect(decodeAll([wire])).toEqual(want);
    // Every boundary of the small frames (the big one's tail fixed), then points inside the big frame.
    const small = Buffer.concat(frames.slice(0, 4)).length;
    const expected = JSON.stringify(want.slice(0, 4));
    const bad: number[] = [];
    for (let at = 0; at <= small + 20; at++) {
      const got = decodeAll([wire.subarray(0, at), wire.subarray(at)]);
      if (JSON.stringify(got.slice(0, 4)) !== expected || got.length !== 5 || (got[4] as { data: string }).data.length !== 70_000) bad.push(at);
    }
    for (const at of [small + 5, small + 9, small + 9 + 65_536, wire.length - 1]) {
      if (JSON.stringify(decodeAll([wire.subarray(0, at), wire.subarray(at)])) !== JSON.stringify(want)) bad.push(at);
    }
    expect(bad).toEqual([]);
  });

  it('decodes the stream fed one byte at a time', () => {
    expect(decodeAll([...wire].map((b) => Buffer.from([b])))).toEqual(want);
  });

  it('carries data as bytes, not JSON: a data frame is its payload plus 9 bytes', () => {
    const f = dataFrame(3, 'é');
    expect(f.length).toBe(9 + 2);
    expect(f.readUInt8(4)).toBe(FrameKind.data);
    expect(f.subarray(9).toString('utf8')).toBe('é');
  });

  it('skips a frame of a sane length that is not ours, says why, and reads the next one', () => {
    const frame = (kind: number, body: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, 1 + body.length, kind]), body]);
    const next = controlFrame({ t: 'ack', pane: 1, consumer: 'w', chars: 3 });
    const got = decodeAll([Buffer.concat([frame(9, Buffer.from('x')), next, frame(1, Buffer.from('{not json')), next, frame(2, Buffer.from([0, 1])), next])]);
    expect(got).toEqual([
      { malformed: 'a frame of unknown kind 9' },
      { control: { t: 'ack', pane: 1, consumer: 'w', chars: 3 } },
      { malformed: expect.stringMatching(/^a control frame of 9 bytes that is not JSON \(/) },
      { control: { t: 'ack', pane: 1, consumer: 'w', chars: 3 } },
      { malformed: 'a data frame without a pane' },
      { control: { t: 'ack', pane: 1, consumer: 'w', chars: 3 } },
    ]);
  });

  it('refuses a frame of absurd length rather than guessing where the next one starts', () => {
    const huge = Buffer.from([0xff, 0xff, 0xff, 0xff, 1]);
    expect(() => decodeAll([huge])).toThrow(/frame of 4294967295 bytes/);
    const empty = Buffer.from([0, 0, 0, 0, 1]);
    expect(() => decodeAll([empty])).toThrow(/frame of 0 bytes/);
  });
});
