import { describe, expect, it } from 'vitest';
import { fenceScript, reportScript } from '../../../src-main/git/fenceScript.js';
import { FENCE_SCRIPT_BEFORE, REPORT_SCRIPT_BEFORE } from '../../fixtures/git/fenceScriptBefore.js';

// The hooks' words and exit codes now come from the shared modules the CLI uses; the perl they make must be
// exactly what it was when they were literals, or every fenced folder's behaviour would have moved with them.
describe('fence scripts are unchanged by stating their words once', () => {
  it('fenceScript is byte-identical to its literal form', () => {
    expect(fenceScript()).toBe(FENCE_SCRIPT_BEFORE);
  });

  it('reportScript is byte-identical to its literal form', () => {
    expect(reportScript()).toBe(REPORT_SCRIPT_BEFORE);
  });
});
