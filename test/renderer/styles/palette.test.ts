import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TERMINAL_THEME_PROPERTIES, themeFrom } from '../../../src-renderer/terminal/terminalTheme.js';
import { contrastRatio, parseColor } from '../../helpers/contrast.js';

/**
 * The window's two palettes as palette.css defines them: every colour any of the window's stylesheets uses has
 * a value in both schemes, and text stays readable on the backgrounds it is drawn on (WCAG AA, 4.5:1) in each.
 */
const styles = join(import.meta.dirname, '../../../src-renderer/styles');
const css = readFileSync(join(styles, 'palette.css'), 'utf8');
/** Every stylesheet of the window: app.css's parts and the ones components import themselves. */
const sheets = readdirSync(styles).filter((f) => f.endsWith('.css'));
const everySheet = sheets.map((f) => readFileSync(join(styles, f), 'utf8')).join('\n');

function properties(block: string): Map<string, string> {
  return new Map([...block.matchAll(/(--[\w-]+):\s*([^;]+);/g)].map((m) => [m[1] as string, (m[2] as string).trim()]));
}

const darkBlock = /^:root \{([^}]*)\}/m.exec(css)?.[1] ?? '';
const lightBlock = /@media \(prefers-color-scheme: light\) \{\s*:root \{([^}]*)\}/.exec(css)?.[1] ?? '';
const dark = properties(darkBlock);
/** The light scheme overrides; what it leaves alone (fonts, radius) is the dark block's. */
const light = new Map([...dark, ...properties(lightBlock)]);
const isColor = (v: string) => /^(#|rgba?\()/.test(v);

/** Text colours and the backgrounds the stylesheet draws them on. */
const TEXT_ON: ReadonlyArray<[string, string[]]> = [
  ['--text', ['--bg', '--bg-2', '--bg-3', '--bg-term']],
  // also the rows a menu or the palette marks (an active row's group label) and the banners' asides
  ['--muted', ['--bg', '--bg-2', '--bg-3', '--menu-hover', '--hover-bg', '--warn-bg', '--bad-bg', '--info-bg', '--good-bg']],
  ['--on-accent', ['--accent-2']],
  ['--good-text', ['--bg-2', '--bg-3', '--good-bg']],
  ['--bad-text', ['--bg-2', '--bg-3', '--bad-bg']],
  ['--warn-text', ['--bg-2', '--warn-bg']],
  ['--info-text', ['--bg-2', '--bg-3', '--info-bg']],
  ['--review-text', ['--bg-2', '--bg-3']],
  ['--code-text', ['--bg', '--warn-bg']],
  ['--amber', ['--bg-2', '--bg-3']],
  ['--accent', ['--bg', '--bg-2']],
  ['--state-needs-input', ['--bg-2', '--bg-3', '--bg-term']],
  ['--state-idle', ['--bg-2', '--bg-3', '--bg-term']],
  ['--state-stalled', ['--bg-2', '--bg-3', '--bg-term']],
  ['--state-working', ['--bg-2', '--bg-3', '--bg-term']],
  ['--term-foreground', ['--bg-term']],
];

describe('the page palettes', () => {
  it('finds both schemes in palette.css', () => {
    expect(dark.size).toBeGreaterThan(30);
    expect(properties(lightBlock).size).toBeGreaterThan(30);
    expect(css).toMatch(/:root \{[^}]*color-scheme: dark;/);
    expect(lightBlock).toMatch(/color-scheme: light;/);
  });

  it('defines every custom property the stylesheets use', () => {
    expect(sheets.length).toBeGreaterThan(20);
    const used = new Set([...everySheet.matchAll(/var\((--[\w-]+)[,)]/g)].map((m) => m[1] as string));
    // `.countdown` sets its own --c before using it.
    const local = new Set(['--c']);
    expect([...used].filter((p) => !dark.has(p) && !local.has(p))).toEqual([]);
  });

  it('gives every colour of the dark scheme a light value, so nothing dark is left in a light page', () => {
    const darkOnly = [...dark].filter(([p, v]) => isColor(v) && !properties(lightBlock).has(p)).map(([p]) => p);
    expect(darkOnly).toEqual([]);
  });

  for (const [name, scheme] of [
    ['dark', dark],
    ['light', light],
  ] as const) {
    it(`keeps text at 4.5:1 or more on its backgrounds in the ${name} scheme`, () => {
      const poor: string[] = [];
      for (const [fg, backs] of TEXT_ON) {
        for (const bg of backs) {
          const ratio = contrastRatio(scheme.get(fg) as string, scheme.get(bg) as string);
          if (ratio < 4.5) poor.push(`${fg} on ${bg}: ${ratio.toFixed(2)}`);
        }
      }
      expect(poor).toEqual([]);
    });
  }

  it('gives the light terminal a full ANSI palette readable on its background', () => {
    const theme = themeFrom((p) => light.get(p) ?? '');
    const bg = theme.background as string;
    expect(parseColor(bg)).toMatchObject({ r: 255, g: 255, b: 255 });
    // The eight normal colours carry text (ls, git, compilers): 4.5:1. The bright ones are emphasis on top
    // of it, 3:1 (WCAG's figure for large or bold text). Black on a light terminal is its foreground colour.
    for (const key of ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'] as const) {
      expect(contrastRatio(theme[key] as string, bg), key).toBeGreaterThanOrEqual(4.5);
    }
    for (const key of ['brightBlack', 'brightRed', 'brightGreen', 'brightYellow', 'brightBlue', 'brightMagenta', 'brightCyan', 'brightWhite'] as const) {
      expect(contrastRatio(theme[key] as string, bg), key).toBeGreaterThanOrEqual(3);
    }
  });

  it('reads a terminal theme from the custom properties, leaving unset colours to xterm', () => {
    const theme = themeFrom((p) => dark.get(p) ?? '');
    expect(theme.background).toBe(dark.get('--bg-term'));
    expect(theme.foreground).toBe(dark.get('--term-foreground'));
    expect(theme.red).toBeUndefined();
    expect(Object.keys(theme).every((k) => k in TERMINAL_THEME_PROPERTIES)).toBe(true);
  });
});
