import { describe, expect, it } from 'vitest';
import { formatCopyFiles, parseBaseBranch, parseCopyFiles } from '../../../src-renderer/state/gitSettingsFields.js';

describe('settings fields', () => {
  it('reads an empty base branch as the current one (null)', () => {
    expect(parseBaseBranch('  ')).toBeNull();
    expect(parseBaseBranch(' develop ')).toBe('develop');
  });

  it('reads files to copy separated by commas or new lines, without blanks or repeats', () => {
    expect(parseCopyFiles('.env, config/local.json\n.env.local,,\n .env ')).toEqual(['.env', 'config/local.json', '.env.local']);
    expect(parseCopyFiles('')).toEqual([]);
    expect(formatCopyFiles(['.env', 'a/b'])).toBe('.env, a/b');
  });
});
