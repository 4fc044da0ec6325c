export const LAYERS: readonly string[];
export const ALLOWED_PACKAGES: Record<'src-shared' | 'src-main' | 'src-renderer', string[]>;
export const SHELL_ONLY_PACKAGES: string[];
export interface ModuleReference {
  /** import, export from, import = require, import type, import(), require, require.resolve, reference …, parse */
  kind: string;
  /** null when the specifier is computed, or the file does not parse. */
  spec: string | null;
  line: number;
  error?: string;
}
export interface LayerProblem {
  /** Relative to the root, '/'-separated. */
  file: string;
  line: number;
  reason: string;
}
export function packageOf(spec: string): { builtin: boolean; name: string };
export function importsOf(file: string, text?: string): ModuleReference[];
export function checkLayers(root?: string): { problems: LayerProblem[]; files: number };
