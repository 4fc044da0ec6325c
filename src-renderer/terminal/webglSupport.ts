/**
 * Whether a terminal should draw with WebGL. A browser without a GPU (headless Chromium, a VM, a blocklisted
 * driver) still hands out WebGL contexts, drawn on the CPU by SwiftShader, llvmpipe or the like: they do not
 * throw, so xterm's WebGL renderer loads and then costs far more CPU than its DOM renderer (measured: 33 s of
 * CPU per 50 MB of output under SwiftShader). Such a context is detected by its renderer's name and refused.
 */

/** Renderer names of WebGL drawn in software: Chromium's SwiftShader (also behind ANGLE), Mesa's llvmpipe and
 *  softpipe, Windows' "Microsoft Basic Render Driver", and anything that calls itself software. */
const SOFTWARE = /swiftshader|llvmpipe|softpipe|software|basic render driver/i;

/** True when a WebGL renderer name (UNMASKED_RENDERER_WEBGL, else RENDERER) says it draws on the CPU. */
export function isSoftwareRenderer(renderer: string | null | undefined): boolean {
  return typeof renderer === 'string' && SOFTWARE.test(renderer);
}

export type WebglSupport =
  /** WebGL 2 on a GPU: use the WebGL renderer. */
  | { kind: 'hardware'; renderer: string | null }
  /** WebGL 2 drawn on the CPU: use the DOM renderer. */
  | { kind: 'software'; renderer: string }
  /** No WebGL 2 context at all: the DOM renderer. */
  | { kind: 'none'; renderer: null };

/** The parts of a WebGL context the probe reads, so tests can hand it a fake. */
export interface ProbeContext {
  readonly RENDERER: number;
  getExtension(name: string): unknown;
  getParameter(pname: number): unknown;
}

interface DebugRendererInfo {
  readonly UNMASKED_RENDERER_WEBGL: number;
}

interface LoseContext {
  loseContext(): void;
}

/**
 * Ask a throwaway WebGL 2 context (what xterm's WebGL renderer uses) who draws it. The unmasked name comes from
 * WEBGL_debug_renderer_info; a browser that hides it answers RENDERER ("WebKit WebGL"), which is taken as a GPU,
 * as before. The context is released at once: browsers allow only a few per page.
 */
export function probeWebgl(getContext: () => ProbeContext | null): WebglSupport {
  let gl: ProbeContext | null;
  try {
    gl = getContext();
  } catch {
    gl = null;
  }
  if (!gl) return { kind: 'none', renderer: null };
  try {
    const info = gl.getExtension('WEBGL_debug_renderer_info') as DebugRendererInfo | null;
    const name = gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER);
    const renderer = typeof name === 'string' ? name : null;
    return renderer !== null && isSoftwareRenderer(renderer) ? { kind: 'software', renderer } : { kind: 'hardware', renderer };
  } catch {
    return { kind: 'hardware', renderer: null };
  } finally {
    try {
      (gl.getExtension('WEBGL_lose_context') as LoseContext | null)?.loseContext();
    } catch {
      /* already gone */
    }
  }
}

let cached: WebglSupport | null = null;

/** This page's WebGL, probed once (on the first terminal shown) and remembered. */
export function webglSupport(): WebglSupport {
  cached ??= probeWebgl(() => document.createElement('canvas').getContext('webgl2') as ProbeContext | null);
  return cached;
}
