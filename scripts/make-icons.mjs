#!/usr/bin/env node
// Draws Forkbench's app icon and writes the files electron-builder looks for in its buildResources folder
// (`assets/`, see electron-builder.yml): icon.png (1024, Linux, and the source it converts for others),
// icons/<N>x<N>.png (the Linux icon set), icon.icns (macOS) and icon.ico (Windows).
// Regenerate with `node scripts/make-icons.mjs [outDir]` (default: assets/ at the repository root).
//
// Only node: built-ins. Each size is rendered from the shape itself (signed distances, 4x4 supersampling),
// not scaled down from the 1024 bitmap, and the small sizes snap their strokes to whole pixels. The output is
// byte-for-byte deterministic: the maths is + - * / and sqrt only, PNGs carry no timestamps, and deflate
// uses zlib's Z_RLE strategy, which uses no hash table, so the bytes do not depend on the CPU's SIMD
// hashing (Node's Chromium zlib hashes differently on different CPUs under the default strategy).
import * as fs from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants, deflateSync } from 'node:zlib';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Linux icon set (assets/icons/<N>x<N>.png). */
export const LINUX_SIZES = [16, 32, 48, 64, 128, 256, 512];
/** ICNS entry type → size; every entry holds a PNG. */
export const ICNS_TYPES = [
  ['icp4', 16],
  ['icp5', 32],
  ['icp6', 64],
  ['ic07', 128],
  ['ic08', 256],
  ['ic09', 512],
  ['ic10', 1024],
];
/** ICO entries, each a PNG. */
export const ICO_SIZES = [16, 24, 32, 48, 64, 128, 256];

// ---- the mark ------------------------------------------------------------------------------------------
// A rounded square in deep indigo (lighter at the top) holding a light fork: one stem that splits into
// three tines, the outer two leaving it in S-curves.

const BG_TOP = [76, 70, 214];
const BG_BOTTOM = [28, 25, 84];
const FG = [248, 245, 236];
const SS = 4; // supersampling per axis

/** The geometry for an N-pixel icon, in pixel units (x right, y down). */
function geometry(n) {
  const margin = Math.max(1, n * 0.0625);
  const box = { c: n / 2, half: n / 2 - margin, r: (n - 2 * margin) * 0.225 };
  let stroke = n * 0.09;
  let spread = n * 0.21; // the outer tines' distance from the middle one
  let cx = n / 2;
  if (n <= 64) {
    // Small sizes: whole-pixel stroke widths, tines on the pixel grid, at least one stroke width of gap.
    stroke = Math.max(2, Math.round(n * 0.09));
    spread = Math.max(2 * stroke, Math.round(spread));
    if (stroke % 2 === 1) cx += 0.5; // an odd width is crisp only centred on a pixel
  }
  let top = n * 0.22; // tine tips
  const split = n * 0.59; // where the outer tines leave the stem
  let foot = n * 0.78; // end of the stem
  if (n <= 64) {
    // and the round ends start on a pixel edge
    top = Math.round(top - stroke / 2) + stroke / 2;
    foot = Math.round(foot + stroke / 2) - stroke / 2;
  }
  return { box, hw: stroke / 2, cx, spread, top, split, foot };
}

function roundedBoxDistance(x, y, box) {
  const k = box.half - box.r;
  const qx = Math.abs(x - box.c) - k;
  const qy = Math.abs(y - box.c) - k;
  const ox = qx > 0 ? qx : 0;
  const oy = qy > 0 ? qy : 0;
  return Math.sqrt(ox * ox + oy * oy) + Math.min(Math.max(qx, qy), 0) - box.r;
}

/** Distance to a vertical segment from (x0, y0) to (x0, y1), y0 < y1. */
function vSegmentDistance(x, y, x0, y0, y1) {
  const dx = x - x0;
  const dy = y < y0 ? y - y0 : y > y1 ? y - y1 : 0;
  return Math.sqrt(dx * dx + dy * dy);
}

/** Distance to the quarter circle around (ox, oy) of radius r in the quadrant (sx, sy), each -1 or 1. */
function quarterArcDistance(x, y, ox, oy, r, sx, sy) {
  const ax = x - ox;
  const ay = y - oy;
  if (ax * sx >= 0 && ay * sy >= 0) return Math.abs(Math.sqrt(ax * ax + ay * ay) - r);
  const ex = ax - sx * r; // the ends: (ox + sx r, oy) and (ox, oy + sy r)
  const ey = ay - sy * r;
  return Math.sqrt(Math.min(ex * ex + ay * ay, ax * ax + ey * ey));
}

/** Distance from the glyph's centre lines, minus half the stroke: negative inside. */
function glyphDistance(x, y, g) {
  const { cx, spread, top, split, foot } = g;
  const r = spread / 2; // each outer tine leaves the stem in an S of two quarter circles
  const rise = split - 2 * r; // where the S ends and the outer tines go straight up
  let d = vSegmentDistance(x, y, cx, top, foot); // middle tine and stem, one line
  for (const side of [-1, 1]) {
    const tx = cx + side * spread;
    d = Math.min(d, vSegmentDistance(x, y, tx, top, rise));
    d = Math.min(d, quarterArcDistance(x, y, cx + side * r, split, r, -side, -1));
    d = Math.min(d, quarterArcDistance(x, y, cx + side * r, rise, r, side, 1));
  }
  return d - g.hw;
}

const clamp01 = (v) => (v < 0 ? 0 : v > 1 ? 1 : v);

/** RGBA pixels (unpremultiplied) of the icon at n x n. */
export function renderIcon(n) {
  const g = geometry(n);
  const out = Buffer.alloc(n * n * 4);
  const bgAt = (y, ch) => {
    const t = clamp01((y - (g.box.c - g.box.half)) / (2 * g.box.half));
    return BG_TOP[ch] + (BG_BOTTOM[ch] - BG_TOP[ch]) * t;
  };
  // Coverage of one sample from its signed distance, a ramp one sample wide.
  const cover = (d) => clamp01(0.5 - d * SS);
  // Both distances are 1-Lipschitz: a pixel whose centre is farther than this from both edges is
  // uniformly inside or outside each shape, and supersampling it would change nothing.
  const FAR = 1;
  for (let py = 0; py < n; py++) {
    for (let px = 0; px < n; px++) {
      const x = px + 0.5;
      const y = py + 0.5;
      const db = roundedBoxDistance(x, y, g.box);
      const dg = glyphDistance(x, y, g);
      let a = 0;
      const rgb = [0, 0, 0];
      if (Math.abs(db) > FAR && Math.abs(dg) > FAR) {
        if (db < 0) {
          a = 1;
          for (let ch = 0; ch < 3; ch++) rgb[ch] = dg < 0 ? FG[ch] : bgAt(y, ch);
        }
      } else {
        let sumA = 0;
        const sum = [0, 0, 0];
        for (let sy = 0; sy < SS; sy++) {
          const y1 = py + (sy + 0.5) / SS;
          for (let sx = 0; sx < SS; sx++) {
            const x1 = px + (sx + 0.5) / SS;
            const ab = cover(roundedBoxDistance(x1, y1, g.box));
            if (ab === 0) continue;
            const ag = cover(glyphDistance(x1, y1, g));
            for (let ch = 0; ch < 3; ch++) sum[ch] += ab * (bgAt(y1, ch) + (FG[ch] - bgAt(y1, ch)) * ag);
            sumA += ab;
          }
        }
        a = sumA / (SS * SS);
        if (sumA > 0) for (let ch = 0; ch < 3; ch++) rgb[ch] = sum[ch] / sumA;
      }
      const o = (py * n + px) * 4;
      const alpha = Math.round(a * 255);
      if (alpha === 0) continue; // fully transparent pixels stay 0,0,0,0
      for (let ch = 0; ch < 3; ch++) out[o + ch] = Math.round(rgb[ch]);
      out[o + 3] = alpha;
    }
  }
  return out;
}

// ---- PNG -----------------------------------------------------------------------------------------------

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

function crc32(buf) {
  let c = 0xffffffff;
  for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** Per row, the PNG filter whose output has the smallest sum of absolute (signed) bytes. */
function filterRows(rgba, n) {
  const stride = n * 4;
  const out = Buffer.alloc(n * (stride + 1));
  const cand = Buffer.alloc(stride);
  for (let y = 0; y < n; y++) {
    const row = rgba.subarray(y * stride, (y + 1) * stride);
    const prev = y > 0 ? rgba.subarray((y - 1) * stride, y * stride) : null;
    let best = -1;
    let bestScore = Infinity;
    for (let f = 0; f < 5; f++) {
      let score = 0;
      for (let i = 0; i < stride; i++) {
        const a = i >= 4 ? row[i - 4] : 0;
        const b = prev ? prev[i] : 0;
        const c = prev && i >= 4 ? prev[i - 4] : 0;
        let pred = 0;
        if (f === 1) pred = a;
        else if (f === 2) pred = b;
        else if (f === 3) pred = (a + b) >> 1;
        else if (f === 4) {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
        }
        const v = (row[i] - pred) & 0xff;
        cand[i] = v;
        score += v < 128 ? v : 256 - v;
      }
      if (score < bestScore) {
        bestScore = score;
        best = f;
        out[y * (stride + 1)] = f;
        cand.copy(out, y * (stride + 1) + 1);
      }
    }
  }
  return out;
}

export function encodePng(rgba, n) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(n, 0);
  ihdr.writeUInt32BE(n, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  ihdr[10] = 0; // deflate
  ihdr[11] = 0; // adaptive filtering
  ihdr[12] = 0; // no interlace
  const idat = deflateSync(filterRows(rgba, n), { level: 9, memLevel: 9, strategy: constants.Z_RLE });
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// ---- containers ----------------------------------------------------------------------------------------

export function encodeIcns(pngs) {
  const entries = ICNS_TYPES.map(([type, size]) => {
    const png = pngs.get(size);
    const head = Buffer.alloc(8);
    head.write(type, 0, 'latin1');
    head.writeUInt32BE(png.length + 8, 4);
    return Buffer.concat([head, png]);
  });
  const head = Buffer.alloc(8);
  head.write('icns', 0, 'latin1');
  head.writeUInt32BE(8 + entries.reduce((s, e) => s + e.length, 0), 4);
  return Buffer.concat([head, ...entries]);
}

export function encodeIco(pngs) {
  const dir = Buffer.alloc(6 + 16 * ICO_SIZES.length);
  dir.writeUInt16LE(0, 0); // reserved
  dir.writeUInt16LE(1, 2); // 1 = icon
  dir.writeUInt16LE(ICO_SIZES.length, 4);
  let offset = dir.length;
  ICO_SIZES.forEach((size, i) => {
    const png = pngs.get(size);
    const e = 6 + 16 * i;
    dir[e] = size >= 256 ? 0 : size; // 0 means 256
    dir[e + 1] = size >= 256 ? 0 : size;
    dir[e + 2] = 0; // no palette
    dir[e + 3] = 0; // reserved
    dir.writeUInt16LE(1, e + 4); // colour planes
    dir.writeUInt16LE(32, e + 6); // bits per pixel
    dir.writeUInt32LE(png.length, e + 8);
    dir.writeUInt32LE(offset, e + 12);
    offset += png.length;
  });
  return Buffer.concat([dir, ...ICO_SIZES.map((s) => pngs.get(s))]);
}

export function makeIcons(outDir) {
  const sizes = [...new Set([1024, ...LINUX_SIZES, ...ICNS_TYPES.map(([, s]) => s), ...ICO_SIZES])];
  const pngs = new Map(sizes.map((n) => [n, encodePng(renderIcon(n), n)]));
  fs.mkdirSync(join(outDir, 'icons'), { recursive: true });
  const written = [];
  const write = (name, data) => {
    fs.writeFileSync(join(outDir, name), data);
    written.push([name, data.length]);
  };
  write('icon.png', pngs.get(1024));
  for (const n of LINUX_SIZES) write(join('icons', `${n}x${n}.png`), pngs.get(n));
  write('icon.icns', encodeIcns(pngs));
  write('icon.ico', encodeIco(pngs));
  return written;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = resolve(process.argv[2] ?? join(ROOT, 'assets'));
  for (const [name, bytes] of makeIcons(outDir)) console.log(`${join(outDir, name)}  ${bytes} bytes`);
}
