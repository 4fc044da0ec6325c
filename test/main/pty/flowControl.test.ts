import { describe, expect, it } from 'vitest';
import { FlowControl } from '../../../src-main/pty/flowControl.js';
import { FlowLimits } from '../../../src-shared/terminal/flowLimits.js';
import { OutputBatcherConstants } from '../../../src-main/pty/outputBatcher.js';

function make() {
  const calls: string[] = [];
  const fc = new FlowControl({ pause: () => calls.push('pause'), resume: () => calls.push('resume') });
  return { fc, calls };
}

const { highWatermarkChars: HIGH, lowWatermarkChars: LOW } = FlowLimits;

describe('FlowControl', () => {
  it('pauses above the high watermark and resumes only below the low one', () => {
    const { fc, calls } = make();
    fc.addConsumer('mirror');
    fc.onDelivered(HIGH);
    expect(calls).toEqual([]); // at the mark, not above it
    fc.onDelivered(1);
    expect(calls).toEqual(['pause']);
    fc.ack('mirror', HIGH + 1 - LOW); // exactly LOW outstanding: still paused
    expect(fc.isPaused).toBe(true);
    fc.ack('mirror', 1);
    expect(calls).toEqual(['pause', 'resume']);
  });

  it('is paced by the slowest consumer', () => {
    const { fc } = make();
    fc.addConsumer('mirror');
    fc.addConsumer('window');
    fc.onDelivered(HIGH + 10);
    fc.ack('mirror', HIGH + 10);
    expect(fc.isPaused).toBe(true); // the window has parsed nothing yet
    fc.ack('window', HIGH + 10);
    expect(fc.isPaused).toBe(false);
  });

  it('a window that goes away no longer holds the pane paused', () => {
    const { fc } = make();
    fc.addConsumer('mirror');
    fc.addConsumer('window');
    fc.onDelivered(HIGH + 10);
    fc.ack('mirror', HIGH + 10);
    fc.removeConsumer('window');
    expect(fc.isPaused).toBe(false);
  });

  it('never gives credit for over-acks or acks from unknown consumers', () => {
    const { fc } = make();
    fc.addConsumer('mirror');
    fc.ack('mirror', 1_000_000);
    fc.ack('ghost', 5);
    fc.onDelivered(HIGH + 1);
    expect(fc.isPaused).toBe(true);
    expect(fc.maxUnacked).toBe(HIGH + 1);
  });

  it('a newly attached consumer starts with no backlog', () => {
    const { fc } = make();
    fc.addConsumer('mirror');
    fc.onDelivered(50_000);
    fc.addConsumer('window');
    expect(fc.unackedOf('window')).toBe(0);
    expect(fc.unackedOf('mirror')).toBe(50_000);
  });

  it('release() resumes and never pauses again', () => {
    const { fc, calls } = make();
    fc.addConsumer('mirror');
    fc.onDelivered(HIGH + 1);
    fc.release();
    fc.onDelivered(HIGH * 3);
    expect(calls).toEqual(['pause', 'resume']);
    expect(fc.isOverHighWatermark).toBe(true);
  });
});

describe('FlowControl resume threshold (issue 11)', () => {
  it('resumes at half the window, so a consumer still has work in hand when the pty reads again', () => {
    expect(LOW).toBe(HIGH / 2);
    // A consumer that has parsed everything but an unsent partial ack must still count as caught up.
    expect(FlowLimits.charCountAckSize).toBeLessThanOrEqual(LOW);
    // Consumers ack per message: at resume a window must still hold at least one whole unparsed message.
    expect(OutputBatcherConstants.maxBatchChars).toBeLessThanOrEqual(LOW / 2);
    const { fc, calls } = make();
    fc.addConsumer('mirror');
    fc.addConsumer('window');
    fc.onDelivered(HIGH + 1);
    fc.ack('mirror', HIGH + 1);
    expect(calls).toEqual(['pause']);
    // The window acks in 5,000-char steps, as the renderer does: still paused while more than half is unparsed.
    const step = FlowLimits.charCountAckSize;
    let acked = 0;
    while (HIGH + 1 - (acked + step) >= LOW) {
      fc.ack('window', step);
      acked += step;
      expect(fc.isPaused, `after ${acked} acked`).toBe(true);
    }
    fc.ack('window', step);
    expect(calls).toEqual(['pause', 'resume']);
    // Resumed with ~half a window still to parse, not with an empty one (VS Code's 5,000).
    expect(fc.unackedOf('window')).toBeGreaterThan(LOW - step);
  });

  it('the higher resume mark does not loosen the pause: the backlog never exceeds the high mark plus one read', () => {
    const calls: string[] = [];
    const backlogAtResume: number[] = [];
    const fc: FlowControl = new FlowControl({
      pause: () => calls.push('pause'),
      resume: () => {
        calls.push('resume');
        backlogAtResume.push(fc.maxUnacked);
      },
    });
    fc.addConsumer('mirror');
    const READ = 64 * 1024;
    let maxSeen = 0;
    // A flood in 64 KiB reads against a consumer that parses 10,000 chars between reads.
    for (let i = 0; i < 1_000; i++) {
      if (!fc.isPaused) fc.onDelivered(READ);
      maxSeen = Math.max(maxSeen, fc.maxUnacked);
      fc.ack('mirror', 10_000);
    }
    expect(maxSeen).toBeLessThanOrEqual(HIGH + READ);
    expect(calls.filter((c) => c === 'pause').length).toBeGreaterThan(10);
    for (let i = 0; i < calls.length; i++) expect(calls[i]).toBe(i % 2 === 0 ? 'pause' : 'resume');
    for (const b of backlogAtResume) expect(b).toBeLessThan(LOW);
  });
});
