import type { Page } from 'playwright-core';
import { over, parseColor, ratioOf, type Rgba } from '../test/helpers/contrast.js';

/**
 * What a picky person checks by eye, measured in the page for the window-walk e2e: text they can see and
 * its contrast on what it is drawn on, boxes whose content is wider than they are, fields showing a
 * scrollbar, and floating boxes (menus, dialogs) that leave the viewport.
 */

/** One piece of visible text: its colour, the background colours under it (outermost first), and size. */
export interface TextSample {
  what: string;
  color: string;
  backgrounds: string[];
  /** The product of the opacities of the element and its ancestors. */
  opacity: number;
  /** WCAG's large text (24 px, or 18.66 px bold): 3:1 is enough. */
  large: boolean;
}

/**
 * Every text node under `root` a person can see: on screen, not covered (a hit test at its first line), not
 * decoration (aria-hidden) and not in an inactive control (disabled, inert), which WCAG leaves out.
 */
export function visibleTexts(page: Page, root: string): Promise<TextSample[]> {
  return page.evaluate((rootSel) => {
    const out: TextSample[] = [];
    const top = document.querySelector(rootSel);
    if (!top) throw new Error(`${rootSel} is not in the page`);
    const walker = document.createTreeWalker(top, NodeFilter.SHOW_TEXT);
    const seen = new Set<Element>();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || seen.has(el) || !n.textContent?.trim()) continue;
      seen.add(el);
      if (el.closest('[inert], :disabled, [aria-disabled="true"], [aria-hidden="true"]')) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      const r = range.getClientRects()[0];
      if (!r || r.width < 1 || r.height < 1) continue;
      const x = r.left + Math.min(r.width, 6) / 2;
      const y = r.top + r.height / 2;
      if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
      const hit = document.elementFromPoint(x, y);
      if (!hit || !(el === hit || el.contains(hit) || hit.contains(el))) continue;
      const cs = getComputedStyle(el);
      if (cs.visibility !== 'visible') continue;
      const backgrounds: string[] = [];
      let opacity = 1;
      for (let e: Element | null = el; e; e = e.parentElement) {
        const s = getComputedStyle(e);
        backgrounds.unshift(s.backgroundColor);
        opacity *= Number(s.opacity);
      }
      const size = parseFloat(cs.fontSize);
      const id = el.closest('[data-testid]')?.getAttribute('data-testid');
      out.push({
        what: `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}${id ? ` in ${id}` : ''}: "${n.textContent.trim().slice(0, 40)}"`,
        color: cs.color,
        backgrounds,
        opacity,
        large: size >= 24 || (size >= 18.66 && Number(cs.fontWeight) >= 700),
      });
    }
    return out;
  }, root);
}

/** The contrast of a sample as painted: its backgrounds laid over white in order, its colour over them. */
export function paintedContrast(s: TextSample): number {
  let bg: Rgba = { r: 255, g: 255, b: 255, a: 1 };
  for (const b of s.backgrounds) bg = over(parseColor(b), bg);
  const c = parseColor(s.color);
  return ratioOf(over({ ...c, a: c.a * s.opacity }, bg), bg);
}

/** The samples under WCAG AA (4.5:1, or 3:1 for large text), said as "ratio: what". */
export function poorContrast(samples: TextSample[]): string[] {
  return samples.filter((s) => paintedContrast(s) < (s.large ? 3 : 4.5)).map((s) => `${paintedContrast(s).toFixed(2)}: ${s.what} (${s.color})`);
}

/**
 * Boxes under `root` that cut their content off: wider content in a box that does not scroll (a title
 * that does not fit and has no ellipsis), and fields whose text or placeholder does not fit their height
 * (a scrollbar in a one-line field). Terminals are left out (xterm sizes its own rows); so are boxes of
 * one pixel (the visually hidden announcers of drag and drop).
 */
export function clippedBoxes(page: Page, root: string): Promise<string[]> {
  return page.evaluate((rootSel) => {
    const out: string[] = [];
    for (const el of document.querySelectorAll(`${rootSel}, ${rootSel} *`)) {
      if (el.closest('.xterm') || el.clientWidth <= 1) continue;
      const cs = getComputedStyle(el);
      if (cs.display === 'none' || cs.visibility !== 'visible') continue;
      const what = `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}${el.getAttribute('data-testid') ? `[${el.getAttribute('data-testid')}]` : ''}`;
      const scrolls = cs.overflowX === 'auto' || cs.overflowX === 'scroll';
      if (!scrolls && cs.textOverflow !== 'ellipsis' && el.scrollWidth > el.clientWidth + 1) out.push(`${what}: ${el.scrollWidth} px of content in ${el.clientWidth}`);
      if (el instanceof HTMLTextAreaElement && el.scrollHeight > el.clientHeight && el.value.split('\n').length <= 1)
        out.push(`${what}: one line needs ${el.scrollHeight} px, has ${el.clientHeight} (a scrollbar)`);
      if ((el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) && el.placeholder && !el.value) {
        const ctx = document.createElement('canvas').getContext('2d') as CanvasRenderingContext2D;
        ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
        const need = ctx.measureText(el.placeholder).width;
        const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
        if (need > room + 1) out.push(`${what}: placeholder "${el.placeholder}" needs ${Math.ceil(need)} px, has ${Math.floor(room)}`);
      }
    }
    return out;
  }, root);
}

/** How far the box of `selector` reaches outside the viewport, in px on its worst side (0: wholly inside). */
export function outsideViewport(page: Page, selector: string): Promise<number> {
  return page.locator(selector).evaluate((el) => {
    const r = el.getBoundingClientRect();
    return Math.max(0, -r.left, -r.top, r.right - innerWidth, r.bottom - innerHeight);
  });
}
