import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

/**
 * The dev server (only) injects an inline script (React Fast Refresh preamble) and talks HMR over a
 * WebSocket, both of which the page's strict CSP forbids. Relax it for `vite dev`; builds keep it strict.
 */
function devCsp(): Plugin {
  return {
    name: 'forkbench-dev-csp',
    apply: 'serve',
    transformIndexHtml: (html) => html.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'"),
  };
}

export default defineConfig({
  root: 'src-renderer',
  // Electron loads the built page from file://, so every asset URL must be relative.
  base: './',
  plugins: [react(), devCsp()],
  build: {
    outDir: '../dist-renderer',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // Loaded from disk or 127.0.0.1, never over a network: one ~0.8 MB chunk (mostly xterm) is fine.
    chunkSizeWarningLimit: 2_000,
  },
});
