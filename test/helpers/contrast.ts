/**
 * WCAG 2 contrast between two colours, for the palette test and the theme e2e. Colours are CSS strings as
 * a stylesheet or getComputedStyle gives them: #rgb, #rrggbb, rgb(r, g, b) or rgba(r, g, b, a). A colour
 * with alpha is first laid over `under` (opaque), as the page paints it.
 */
export interface Rgba {
  r: number;
  g: number;
  b: number;
  a: number;
}

export function parseColor(css: string): Rgba {
  const s = css.trim().toLowerCase();
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/.exec(s);
  if (hex) {
    const h = hex[1] as string;
    const full = h.length === 3 ? [...h].map((c) => c + c).join('') : h;
    return { r: parseInt(full.slice(0, 2), 16), g: parseInt(full.slice(2, 4), 16), b: parseInt(full.slice(4, 6), 16), a: 1 };
  }
  const fn = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:\s*[,/]\s*([\d.]+))?\s*\)$/.exec(s);
  if (fn) return { r: Number(fn[1]), g: Number(fn[2]), b: Number(fn[3]), a: fn[4] === undefined ? 1 : Number(fn[4]) };
  throw new Error(`not a colour this test reads: "${css}"`);
}

/** `top` painted over `under`, as the browser composites it (alpha blending); the result is opaque. */
export function over(top: Rgba, under: Rgba): Rgba {
  const mix = (t: number, u: number) => t * top.a + u * (1 - top.a);
  return { r: mix(top.r, under.r), g: mix(top.g, under.g), b: mix(top.b, under.b), a: 1 };
}

/** Relative luminance (WCAG 2.x definition). */
export function luminance(c: Rgba): number {
  const lin = (v: number) => {
    const x = v / 255;
    return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
}

/** The contrast ratio of text `fg` on background `bg` (1 to 21); `bg` must be opaque. */
export function contrastRatio(fg: string, bg: string): number {
  const back = parseColor(bg);
  if (back.a !== 1) throw new Error(`the background must be opaque: "${bg}"`);
  return ratioOf(over(parseColor(fg), back), back);
}

/** The WCAG contrast ratio of two opaque colours (1 to 21). */
export function ratioOf(a: Rgba, b: Rgba): number {
  const [l1, l2] = [luminance(a), luminance(b)];
  return (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
}
