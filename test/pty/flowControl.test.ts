import { describe, expect, it } from 'vitest';
import { FlowControl, FlowControlConstants } from '../../src-main/pty/flowControl.js';

function make() {
  const calls: string[] = [];
  const fc = new FlowControl({ pause: () => calls.push('pause'), resume: () => calls.push('resume') });
  return { fc, calls };
}

const { highWatermarkChars: HIGH, lowWatermarkChars: LOW } = FlowControlConstants;

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
