import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLayers, importsOf } from '../../scripts/check-layers.mjs';

const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'check-layers.mjs');
const FAIL = join(ROOT, 'test', 'fixtures', 'scripts', 'layers-fail');
const PASS = join(ROOT, 'test', 'fixtures', 'scripts', 'layers-pass');
const INNER_FAIL = join(ROOT, 'test', 'fixtures', 'scripts', 'inner-fail');
const INNER_PASS = join(ROOT, 'test', 'fixtures', 'scripts', 'inner-pass');

const sourceFiles = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.(?:[cm]?[jt]s|[jt]sx)$/.test(e.name) ? [p] : [];
  });

/** What the fail fixtures say must be reported: `file:line` → a part of the reason. */
function expectedProblems(dir = FAIL): Map<string, string> {
  const expected = new Map<string, string>();
  for (const file of sourceFiles(dir)) {
    fs.readFileSync(file, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        const m = /\/\/ layer-check: (.+)$/.exec(text);
        if (m) expected.set(`${relative(dir, file).split('\\').join('/')}:${i + 1}`, (m[1] as string).trim());
      });
  }
  return expected;
}

describe('scripts/check-layers.mjs', () => {
  it('reports every hole the old regex check let through, each at its line, and nothing else', () => {
    const expected = expectedProblems();
    expect(expected.size).toBeGreaterThanOrEqual(18);
    const { problems } = checkLayers(FAIL);
    expect(problems.map((p) => `${p.file}:${p.line}`).sort()).toEqual([...expected.keys()].sort());
    for (const p of problems) expect(p.reason).toContain(expected.get(`${p.file}:${p.line}`));
    // One hole per file: every fail fixture except the shell (which may use Electron) is reported once.
    const reported = new Set(problems.map((p) => p.file));
    expect(reported.size).toBe(problems.length);
    expect(sourceFiles(FAIL).length).toBe(reported.size + 1);
  });

  it('passes a legal tree: packages on the allowlists, Electron in the shell, import-like strings and comments', () => {
    const r = checkLayers(PASS);
    expect(r.problems).toEqual([]);
    expect(r.files).toBe(8);
  });

  it('the command prints file:line: reason and exits 1, or says ok and exits 0', () => {
    const bad = spawnSync(process.execPath, [SCRIPT, FAIL], { cwd: FAIL, encoding: 'utf8' });
    expect(bad.status).toBe(1);
    const lines = bad.stderr.trim().split('\n');
    const summary = lines.pop();
    expect(summary).toMatch(/^layer check: \d+ problem\(s\) in \d+ file\(s\)$/);
    expect(lines.length).toBe(expectedProblems().size);
    for (const line of lines) expect(line).toMatch(/^src-(shared|main|renderer)\/[^:]+:\d+: \S.*$/);
    expect(lines).toContain(
      "src-shared/requireNodeFs.ts:2: require 'node:fs': src-shared may not use Node builtins (no Node, no DOM)",
    );

    const good = spawnSync(process.execPath, [SCRIPT, PASS], { encoding: 'utf8' });
    expect(good.status).toBe(0);
    expect(good.stdout.trim()).toBe('layer check: ok (8 files)');
  });

  it('a root without the layers fails instead of passing with nothing checked', () => {
    const empty = fs.mkdtempSync(join(tmpdir(), 'forkbench-layers-'));
    try {
      const r = checkLayers(empty);
      expect(r.files).toBe(0);
      expect(r.problems).toHaveLength(1);
      expect(r.problems[0]?.reason).toMatch(/no source files/);
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });

  it('reads every form of import with the TypeScript parser', () => {
    const text = [
      "/// <reference types=\"node\" />",
      "import a from 'pkg-a';",
      "import {",
      "  b,",
      "} from 'pkg-b';",
      "import 'pkg-side';",
      "export * from 'pkg-c';",
      "export { d } from 'pkg-d';",
      "import e = require('pkg-e');",
      "const f = require('pkg-f');",
      "const g = await import('pkg-g');",
      "type H = import('pkg-h').H;",
      "const i = require.resolve('pkg-i');",
      "const j = await import(name);",
      "const k = `import('not-an-import')`; // require('not-either')",
    ].join('\n');
    const refs = importsOf('/virtual/x.ts', text).map((r) => `${r.line} ${r.kind} ${r.spec}`);
    expect(refs).toEqual([
      '1 reference types node',
      '2 import pkg-a',
      '5 import pkg-b',
      '6 import pkg-side',
      '7 export from pkg-c',
      '8 export from pkg-d',
      '9 import = require pkg-e',
      '10 require pkg-f',
      '11 import() pkg-g',
      '12 import type pkg-h',
      '13 require.resolve pkg-i',
      '14 import() null',
    ]);
  });

  it('inside each layer, an import upward or beside fails, each at its line', () => {
    const expected = expectedProblems(INNER_FAIL);
    // One per rank boundary of the src-main and src-renderer orders, the git/agents rank, and a folder nobody
    // placed; the ptyhost rank is crossed both ways (pty up into it, it up into agents). In src-shared, the
    // inversion main had (agents reading the profile list from the protocol) and board reading notices.
    expect(expected.size).toBe(20);
    for (const f of ['src-main/pty/remote.ts:1', 'src-main/ptyhost/client.ts:2']) expect(expected.get(f)).toMatch(/ptyhost/);
    expect(expected.get('src-shared/agents/installHints.ts:1')).toMatch(/src-shared\/agents imports upward, src-shared\/protocol/);
    const { problems } = checkLayers(INNER_FAIL);
    expect(problems.map((p) => `${p.file}:${p.line}`).sort()).toEqual([...expected.keys()].sort());
    for (const p of problems) expect(p.reason).toContain(expected.get(`${p.file}:${p.line}`));
    const bad = spawnSync(process.execPath, [SCRIPT, INNER_FAIL], { cwd: INNER_FAIL, encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(
      "src-shared/agents/installHints.ts:1: import '../protocol/windowApi.js': src-shared/agents imports upward, src-shared/protocol sits above it inside src-shared",
    );
  });

  it('inside each layer, imports downward and within a folder pass', () => {
    // ptyhost imports pty and base below it, and host above imports ptyhost; the protocol imports agents.
    const r = checkLayers(INNER_PASS);
    expect(r.problems).toEqual([]);
    expect(r.files).toBe(22);
  });
});
