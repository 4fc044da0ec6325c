import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { controlProblem, describeControl, findControl, jsonShowControls, outputAsText, showControls } from '../../../src-shared/text/controlChars.js';

/** Every raw character the helper must never let through, as a test sees it (its own list, not the helper's). */
const RAW = /[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('control characters in board text', () => {
  it('names each class for a message', () => {
    expect(describeControl(0x1b)).toBe('U+001B (ESC)');
    expect(describeControl(0x00)).toBe('U+0000 (NUL)');
    expect(describeControl(0x9b)).toBe('U+009B (CSI)');
    expect(describeControl(0x9f)).toBe('U+009F (APC)');
    expect(describeControl(0x202e)).toBe('U+202E (RIGHT-TO-LEFT OVERRIDE)');
    expect(describeControl(0x2029)).toBe('U+2029 (PARAGRAPH SEPARATOR)');
  });

  it('shows them as escapes, keeping tab and newline where the text may hold them', () => {
    expect(showControls('a\x1b]0;t\x07b\x9b2J\u202ec\u2028', 'none')).toBe('a\\x1b]0;t\\x07b\\x9b2J\\u202ec\\u2028');
    expect(showControls('l1\n\tl2\r', 'tab-newline')).toBe('l1\n\tl2\\x0d');
    expect(showControls('l1\n\tl2', 'none')).toBe('l1\\x0a\\x09l2');
    const plain = 'café 日本語 \\x1b stays as typed';
    expect(showControls(plain, 'none')).toBe(plain);
  });

  it('property: shown text never holds a raw control, and text without one is left as it is', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (s) => {
        expect(showControls(s, 'none')).not.toMatch(RAW);
        expect(showControls(s, 'tab-newline').replace(/[\t\n]/g, '')).not.toMatch(RAW);
        if (!RAW.test(s)) expect(showControls(s, 'none')).toBe(s);
        expect(findControl(s, 'none') === null).toBe(!RAW.test(s));
      }),
    );
  });

  it('property: JSON with them escaped parses to the same value and holds none raw', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary', maxLength: 40 }), (v, s) => {
        const value = { v, s };
        const text = jsonShowControls(JSON.stringify(value, null, 2));
        expect(text.replace(/\n/g, '')).not.toMatch(RAW);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('a refusal names the character, its position and the text around it', () => {
    expect(controlProblem('ok', 'the title', 'none')).toBeNull();
    expect(controlProblem('abcd\x1b[2J', 'the title', 'none')).toBe('the title has a control character U+001B (ESC) at position 5: "abcd\\x1b[2J" (title may hold no control characters)');
    expect(controlProblem(`${'x'.repeat(50)}\x9b${'y'.repeat(50)}`, 'the note', 'tab-newline')).toMatch(/at position 51: "…x{20}\\x9by{20}…"/);
  });

  it('terminal output becomes note text: colours dropped, CR as newline, the rest escaped', () => {
    expect(outputAsText('\x1b[31mFAIL\x1b[0m test\r\nprogress 10%\rprogress 100%\n\x1b]0;t\x07')).toBe('FAIL test\nprogress 10%\nprogress 100%\n\\x1b]0;t\\x07');
  });
});
