import { describe, expect, it } from 'vitest';
import { isSoftwareRenderer, probeWebgl, type ProbeContext } from '../../../src-renderer/terminal/webglSupport.js';

describe('software WebGL', () => {
  it('is recognised by the renderer name', () => {
    // headless Chromium on this machine kind, and other CPU renderers
    expect(isSoftwareRenderer('ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)')).toBe(true);
    expect(isSoftwareRenderer('Google SwiftShader')).toBe(true);
    expect(isSoftwareRenderer('llvmpipe (LLVM 15.0.6, 256 bits)')).toBe(true);
    expect(isSoftwareRenderer('Mesa/X.org, llvmpipe (LLVM 12.0.0, 256 bits)')).toBe(true);
    expect(isSoftwareRenderer('softpipe')).toBe(true);
    expect(isSoftwareRenderer('Software Rasterizer')).toBe(true);
    expect(isSoftwareRenderer('ANGLE (Microsoft, Microsoft Basic Render Driver Direct3D11 vs_5_0 ps_5_0, D3D11)')).toBe(true);
    // GPUs
    expect(isSoftwareRenderer('ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 (0x00002504) Direct3D11 vs_5_0 ps_5_0, D3D11)')).toBe(false);
    expect(isSoftwareRenderer('ANGLE (Intel, Mesa Intel(R) UHD Graphics 620 (KBL GT2), OpenGL 4.6)')).toBe(false);
    expect(isSoftwareRenderer('Apple M1')).toBe(false);
    expect(isSoftwareRenderer('AMD Radeon Pro 5500M OpenGL Engine')).toBe(false);
    // a browser that hides the name
    expect(isSoftwareRenderer('WebKit WebGL')).toBe(false);
    expect(isSoftwareRenderer(null)).toBe(false);
    expect(isSoftwareRenderer(undefined)).toBe(false);
  });

  const UNMASKED = 0x9246;
  const RENDERER = 0x1f01;
  function fakeGl(o: { unmasked?: string; renderer?: string; debugInfo?: boolean }) {
    const lost: boolean[] = [];
    const gl: ProbeContext = {
      RENDERER,
      getExtension: (name) => {
        if (name === 'WEBGL_debug_renderer_info') return o.debugInfo === false ? null : { UNMASKED_RENDERER_WEBGL: UNMASKED };
        if (name === 'WEBGL_lose_context') return { loseContext: () => lost.push(true) };
        return null;
      },
      getParameter: (p) => (p === UNMASKED ? o.unmasked : p === RENDERER ? (o.renderer ?? 'WebKit WebGL') : null),
    };
    return { gl, lost };
  }

  it('probes the unmasked renderer and releases the context', () => {
    const sw = fakeGl({ unmasked: 'ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero)), SwiftShader driver)' });
    expect(probeWebgl(() => sw.gl)).toEqual({ kind: 'software', renderer: 'ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero)), SwiftShader driver)' });
    expect(sw.lost).toEqual([true]);
    const gpu = fakeGl({ unmasked: 'ANGLE (NVIDIA, NVIDIA GeForce RTX 3060)' });
    expect(probeWebgl(() => gpu.gl).kind).toBe('hardware');
    // no debug extension: RENDERER is all there is
    expect(probeWebgl(() => fakeGl({ debugInfo: false, renderer: 'llvmpipe' }).gl).kind).toBe('software');
    expect(probeWebgl(() => fakeGl({ debugInfo: false }).gl).kind).toBe('hardware');
  });

  it('says none when no context can be made', () => {
    expect(probeWebgl(() => null)).toEqual({ kind: 'none', renderer: null });
    expect(
      probeWebgl(() => {
        throw new Error('blocklisted');
      }),
    ).toEqual({ kind: 'none', renderer: null });
  });
});
