import type { ITheme } from '@xterm/xterm';

/**
 * The terminals' colours come from the page's stylesheet (styles/palette.css), so each colour scheme has one palette
 * for the page and its terminals alike. Each theme key is read from its custom property; a property the
 * scheme leaves unset leaves xterm's own default for that colour.
 */
export const TERMINAL_THEME_PROPERTIES: Readonly<Partial<Record<keyof ITheme, string>>> = {
  background: '--bg-term',
  foreground: '--term-foreground',
  cursor: '--term-cursor',
  cursorAccent: '--bg-term',
  selectionBackground: '--term-selection',
  black: '--term-black',
  red: '--term-red',
  green: '--term-green',
  yellow: '--term-yellow',
  blue: '--term-blue',
  magenta: '--term-magenta',
  cyan: '--term-cyan',
  white: '--term-white',
  brightBlack: '--term-bright-black',
  brightRed: '--term-bright-red',
  brightGreen: '--term-bright-green',
  brightYellow: '--term-bright-yellow',
  brightBlue: '--term-bright-blue',
  brightMagenta: '--term-bright-magenta',
  brightCyan: '--term-bright-cyan',
  brightWhite: '--term-bright-white',
  scrollbarSliderBackground: '--term-scrollbar',
  scrollbarSliderHoverBackground: '--term-scrollbar-hover',
  scrollbarSliderActiveBackground: '--term-scrollbar-active',
};

/** The terminal theme that `read` (a custom property's value, '' when unset) describes. */
export function themeFrom(read: (property: string) => string): ITheme {
  const theme: Record<string, string> = {};
  for (const [key, property] of Object.entries(TERMINAL_THEME_PROPERTIES)) {
    const value = property ? read(property).trim() : '';
    if (value) theme[key] = value;
  }
  return theme as ITheme;
}

/** The terminal theme of the scheme the page shows now. */
export function pageTerminalTheme(): ITheme {
  const style = getComputedStyle(document.documentElement);
  return themeFrom((p) => style.getPropertyValue(p));
}

/** The media query the page's palettes follow (styles/palette.css). */
export const LIGHT_SCHEME_QUERY = '(prefers-color-scheme: light)';

/** Call `onChange` whenever the system's colour scheme changes; the returned function stops listening. */
export function watchColorScheme(onChange: () => void): () => void {
  if (typeof matchMedia !== 'function') return () => undefined;
  const query = matchMedia(LIGHT_SCHEME_QUERY);
  query.addEventListener('change', onChange);
  return () => query.removeEventListener('change', onChange);
}
