import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'make-icons.mjs');
const ASSETS = join(ROOT, 'assets');
const LINUX_SIZES = [16, 32, 48, 64, 128, 256, 512];
const ICNS_TYPES: [string, number][] = [
  ['icp4', 16],
  ['icp5', 32],
  ['icp6', 64],
  ['ic07', 128],
  ['ic08', 256],
  ['ic09', 512],
  ['ic10', 1024],
];
const ICO_SIZES = [16, 24, 32, 48, 64, 128, 256];
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const CRC_TABLE = Array.from({ length: 256 }, (_, i) => {
  let c = i;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const byte of buf) c = (CRC_TABLE[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

interface Png {
  width: number;
  height: number;
  bitDepth: number;
  colourType: number;
  /** The inflated IDAT stream: per row, a filter byte and the filtered bytes. */
  raw: Buffer;
}

/** Parses a whole PNG: signature, chunk CRCs, IHDR first, IEND last, the IDAT stream inflated. */
function readPng(buf: Buffer, what: string): Png {
  expect(buf.subarray(0, 8).equals(PNG_SIGNATURE), `${what}: PNG signature`).toBe(true);
  const chunks: { type: string; data: Buffer }[] = [];
  let o = 8;
  while (o < buf.length) {
    expect(o + 12, `${what}: chunk header at ${o} fits`).toBeLessThanOrEqual(buf.length);
    const length = buf.readUInt32BE(o);
    const type = buf.toString('latin1', o + 4, o + 8);
    expect(o + 12 + length, `${what}: ${type} fits in the file`).toBeLessThanOrEqual(buf.length);
    const data = buf.subarray(o + 8, o + 8 + length);
    expect(buf.readUInt32BE(o + 8 + length), `${what}: ${type} CRC`).toBe(crc32(buf.subarray(o + 4, o + 8 + length)));
    chunks.push({ type, data });
    o += 12 + length;
  }
  expect(o, `${what}: chunks end at the end of the file`).toBe(buf.length);
  expect(chunks[0]?.type, `${what}: IHDR first`).toBe('IHDR');
  expect(chunks.at(-1)?.type, `${what}: IEND last`).toBe('IEND');
  const ihdr = (chunks[0] as { data: Buffer }).data;
  expect(ihdr.length).toBe(13);
  const png: Png = {
    width: ihdr.readUInt32BE(0),
    height: ihdr.readUInt32BE(4),
    bitDepth: ihdr[8] as number,
    colourType: ihdr[9] as number,
    raw: inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data))),
  };
  expect([ihdr[10], ihdr[11], ihdr[12]], `${what}: deflate, adaptive filters, no interlace`).toEqual([0, 0, 0]);
  return png;
}

/** Checks a PNG is an n x n 8-bit RGBA image whose data decodes to the right length. */
function expectRgbaPng(buf: Buffer, n: number, what: string): Png {
  const png = readPng(buf, what);
  expect({ width: png.width, height: png.height, bitDepth: png.bitDepth, colourType: png.colourType }, what).toEqual({
    width: n,
    height: n,
    bitDepth: 8,
    colourType: 6,
  });
  expect(png.raw.length, `${what}: decoded length`).toBe(n * (1 + n * 4));
  return png;
}

/** Undoes the PNG row filters: RGBA bytes, row by row. */
function pixels(png: Png): Buffer {
  const stride = png.width * 4;
  const out = Buffer.alloc(png.height * stride);
  for (let y = 0; y < png.height; y++) {
    const filter = png.raw[y * (stride + 1)] as number;
    expect(filter, `row ${y} filter type`).toBeLessThanOrEqual(4);
    for (let i = 0; i < stride; i++) {
      const a = i >= 4 ? (out[y * stride + i - 4] as number) : 0;
      const b = y > 0 ? (out[(y - 1) * stride + i] as number) : 0;
      const c = y > 0 && i >= 4 ? (out[(y - 1) * stride + i - 4] as number) : 0;
      let pred = 0;
      if (filter === 1) pred = a;
      else if (filter === 2) pred = b;
      else if (filter === 3) pred = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      out[y * stride + i] = ((png.raw[y * (stride + 1) + 1 + i] as number) + pred) & 0xff;
    }
  }
  return out;
}

const read = (name: string) => fs.readFileSync(join(ASSETS, name));

/** Every file under dir, '/'-separated and sorted. */
function listFiles(dir: string, base = dir): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name), base) : [relative(base, join(dir, e.name)).split('\\').join('/')]))
    .sort();
}
const MADE = ['icon.icns', 'icon.ico', 'icon.png', ...LINUX_SIZES.map((n) => `icons/${n}x${n}.png`)].sort();

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

describe('assets/: the app icons electron-builder packs (scripts/make-icons.mjs)', () => {
  it('icon.png is a 1024 RGBA PNG with transparent corners and an opaque centre', () => {
    const png = expectRgbaPng(read('icon.png'), 1024, 'icon.png');
    const px = pixels(png);
    const alphaAt = (x: number, y: number) => px[(y * 1024 + x) * 4 + 3];
    for (const [x, y] of [
      [0, 0],
      [1023, 0],
      [0, 1023],
      [1023, 1023],
    ] as const)
      expect(alphaAt(x, y), `corner ${x},${y}`).toBe(0);
    expect(alphaAt(512, 512), 'centre').toBe(255);
    // Not blank: the light glyph on the dark square, so there are both light and dark opaque pixels.
    const lum = (x: number, y: number) => {
      const o = (y * 1024 + x) * 4;
      return (px[o] as number) + (px[o + 1] as number) + (px[o + 2] as number);
    };
    expect(lum(512, 512), 'the stem is light').toBeGreaterThan(600);
    expect(lum(160, 512), 'the square is dark').toBeLessThan(350);
    expect(alphaAt(160, 512)).toBe(255);
  });

  it('icons/<N>x<N>.png: the Linux icon set, each an RGBA PNG of its size', () => {
    expect(fs.readdirSync(join(ASSETS, 'icons')).sort()).toEqual(LINUX_SIZES.map((n) => `${n}x${n}.png`).sort());
    for (const n of LINUX_SIZES) {
      const png = expectRgbaPng(read(`icons/${n}x${n}.png`), n, `icons/${n}x${n}.png`);
      const px = pixels(png);
      expect(px[3], `${n}: corner transparent`).toBe(0);
      expect(px[((n / 2) * n + n / 2) * 4 + 3], `${n}: centre opaque`).toBe(255);
    }
  });

  it('icon.icns: a whole-file length header and the seven PNG entries, each of its size', () => {
    const icns = read('icon.icns');
    expect(icns.toString('latin1', 0, 4)).toBe('icns');
    expect(icns.readUInt32BE(4)).toBe(icns.length);
    const seen: string[] = [];
    let o = 8;
    while (o < icns.length) {
      const type = icns.toString('latin1', o, o + 4);
      const length = icns.readUInt32BE(o + 4);
      expect(length, `${type}: length includes its 8-byte header`).toBeGreaterThan(8);
      expect(o + length, `${type} fits in the file`).toBeLessThanOrEqual(icns.length);
      const size = ICNS_TYPES.find(([t]) => t === type)?.[1];
      expect(size, `${type} is one of the expected types`).toBeDefined();
      expectRgbaPng(icns.subarray(o + 8, o + length), size as number, `icns ${type}`);
      seen.push(type);
      o += length;
    }
    expect(o).toBe(icns.length);
    expect(seen.sort()).toEqual(ICNS_TYPES.map(([t]) => t).sort());
  });

  it('icon.ico: seven PNG entries, 16 to 256, each pointing at a PNG of its size inside the file', () => {
    const ico = read('icon.ico');
    expect(ico.readUInt16LE(0), 'reserved').toBe(0);
    expect(ico.readUInt16LE(2), 'type 1: icon').toBe(1);
    expect(ico.readUInt16LE(4), 'entries').toBe(ICO_SIZES.length);
    const sizes: number[] = [];
    const spans: [number, number][] = [];
    for (let i = 0; i < ICO_SIZES.length; i++) {
      const e = 6 + 16 * i;
      const width = ico[e] === 0 ? 256 : (ico[e] as number);
      const height = ico[e + 1] === 0 ? 256 : (ico[e + 1] as number);
      expect(height, `entry ${i}: square`).toBe(width);
      expect(ico[e + 3], `entry ${i}: reserved`).toBe(0);
      expect(ico.readUInt16LE(e + 4), `entry ${i}: planes`).toBe(1);
      expect(ico.readUInt16LE(e + 6), `entry ${i}: bits per pixel`).toBe(32);
      const bytes = ico.readUInt32LE(e + 8);
      const offset = ico.readUInt32LE(e + 12);
      expect(offset, `entry ${i}: after the directory`).toBeGreaterThanOrEqual(6 + 16 * ICO_SIZES.length);
      expect(offset + bytes, `entry ${i}: inside the file`).toBeLessThanOrEqual(ico.length);
      expectRgbaPng(ico.subarray(offset, offset + bytes), width, `ico entry ${i} (${width})`);
      sizes.push(width);
      spans.push([offset, offset + bytes]);
    }
    expect(sizes).toEqual(ICO_SIZES);
    spans.sort((a, b) => a[0] - b[0]);
    spans.forEach(([start], i) => {
      if (i > 0) expect(start, 'entries do not overlap').toBeGreaterThanOrEqual((spans[i - 1] as [number, number])[1]);
    });
  });

  it('the script is deterministic: run again into a temp folder, it writes the same files, byte for byte', () => {
    const out = fs.mkdtempSync(join(tmpdir(), 'forkbench-icons-'));
    temps.push(out);
    const run = spawnSync(process.execPath, [SCRIPT, out], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(listFiles(out)).toEqual(MADE);
    for (const f of MADE)
      expect(fs.readFileSync(join(out, f)).equals(read(f)), `${f} differs from assets/: run node scripts/make-icons.mjs`).toBe(true);
  });

  it('keeps the committed icons small', () => {
    const total = MADE.reduce((s, f) => s + fs.statSync(join(ASSETS, f)).size, 0);
    expect(total).toBeLessThan(1.5 * 1024 * 1024);
  });
});
