/**
 * Pty throughput: `cat` of a ~32 MB text file through node-pty alone, then through a PtySession (5 ms
 * batching, flow control, headless xterm mirror), in the same run so both see the same machine state.
 *
 * Standalone: `node --import tsx bench/ptyBench.ts` prints a table.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import headlessModule from '@xterm/headless';
import { spawn as ptySpawn } from 'node-pty';
import { PtySession } from '../src-main/pty/ptySession.js';

export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  note?: string;
}

/** 32 MiB: large enough that spawn and exit costs (~ms) vanish against ~0.3 s of transfer at ~100 MB/s,
 *  small enough to stay under xterm's 50 MB write-discard limit even if flow control were broken. */
const FILE_BYTES = 32 * 1024 * 1024;

/** Terminal-like text: ~80-column lines of varied ASCII, the shape of build logs and agent transcripts. */
function makeFile(path: string): number {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < 64 * 1024; i++) {
    const line = `${String(i).padStart(6, '0')} ${'lorem ipsum dolor sit amet consectetur '.repeat(2).slice(i % 17, 60 + (i % 13))}\n`;
    lines.push(line);
    size += line.length;
  }
  const block = Buffer.from(lines.join(''));
  const buf = Buffer.alloc(Math.floor(FILE_BYTES / block.length) * block.length);
  for (let off = 0; off < buf.length; off += block.length) block.copy(buf, off);
  writeFileSync(path, buf);
  return buf.length;
}

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: tmpdir() };

/** node-pty with a listener that only counts: the ceiling for anything built on top. */
function rawCat(file: string): Promise<{ ms: number; chars: number }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const pty = ptySpawn('cat', [file], { name: 'xterm-256color', cols: 120, rows: 40, cwd: tmpdir(), env });
    let chars = 0;
    pty.onData((d) => (chars += d.length));
    pty.onExit(() => resolve({ ms: performance.now() - t0, chars }));
  });
}

/** The full pane pipeline, timed until the mirror has parsed everything. */
async function sessionCat(file: string): Promise<{ ms: number; chars: number; maxBacklog: number }> {
  const t0 = performance.now();
  const session = PtySession.spawn('cat', [file], { cols: 120, rows: 40, cwd: tmpdir(), env });
  let chars = 0;
  let maxBacklog = 0;
  session.onData((d) => {
    chars += d.length;
    maxBacklog = Math.max(maxBacklog, session.flowStats.maxUnackedChars);
  });
  await session.exited;
  await session.flushMirror();
  const ms = performance.now() - t0;
  session.dispose();
  return { ms, chars, maxBacklog };
}

/** xterm's parser alone on the same bytes (64 KiB writes, no pty): the ceiling for the mirror. ONLCR is
 *  applied by hand so it parses the same \r\n stream the pty produces. */
async function parseOnly(file: string): Promise<{ ms: number }> {
  const text = readFileSync(file, 'utf8').replaceAll('\n', '\r\n');
  const term = new headlessModule.Terminal({ cols: 120, rows: 40, scrollback: 1000, allowProposedApi: true });
  const t0 = performance.now();
  const CHUNK = 64 * 1024;
  for (let off = 0; off < text.length; off += CHUNK) {
    const chunk = text.slice(off, off + CHUNK);
    // Wait every 16 chunks (1 MiB): far below xterm's 50 MB discard limit, enough to keep it busy.
    if ((off / CHUNK) % 16 === 15) await new Promise<void>((r) => term.write(chunk, r));
    else term.write(chunk);
  }
  await new Promise<void>((r) => term.write('', r));
  const ms = performance.now() - t0;
  term.dispose();
  return { ms };
}

export async function ptyBench(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'forkbench-ptybench-'));
  try {
    const file = join(dir, 'cat-me.txt');
    const bytes = makeFile(file);
    const mb = bytes / 1e6;
    const rssBefore = process.memoryUsage().rss;
    const raw = await rawCat(file);
    const session = await sessionCat(file);
    const rssAfter = process.memoryUsage().rss;
    const parse = await parseOnly(file);
    const rawMbps = mb / (raw.ms / 1000);
    const sessionMbps = mb / (session.ms / 1000);
    return [
      { name: 'pty raw read (cat -> node-pty)', value: round(rawMbps), unit: 'MB/s', note: `${round(mb)} MB file, ${raw.chars} chars read` },
      {
        name: 'pty -> headless xterm (PtySession)',
        value: round(sessionMbps),
        unit: 'MB/s',
        note: `batching + flow control + mirror parse; max backlog ${session.maxBacklog} chars`,
      },
      { name: 'headless / raw throughput', value: round(sessionMbps / rawMbps, 3), unit: 'ratio' },
      { name: 'headless xterm parse alone (no pty)', value: round(mb / (parse.ms / 1000)), unit: 'MB/s', note: 'the ceiling for the line above' },
      { name: 'RSS growth during both runs', value: round((rssAfter - rssBefore) / 2 ** 20), unit: 'MiB', note: `file size ${statSync(file).size} bytes` },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  ptyBench().then(
    (rows) => console.table(rows),
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
