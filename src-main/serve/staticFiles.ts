import * as fs from 'node:fs';
import type * as http from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

/** What a request's path names, or why it names nothing. */
type Lookup = { file: string; rel: string } | { status: 400 | 403 };

/**
 * The path a request-target names inside `root`, decoded, or why it cannot name one there: 400 for what is
 * not a path at all (`/%`, `/%E0%A4%A`, a NUL, which ends a path at the system call), 403 for a way out.
 * Never throws: every request-target a client can send gets one of these answers.
 */
export function lookupPath(root: string, target: string | undefined): Lookup {
  // A browser always sends origin-form (`/…`); the absolute and authority forms are for proxies.
  if (!target?.startsWith('/')) return { status: 400 };
  let rel: string;
  try {
    rel = decodeURIComponent(new URL(target, 'http://127.0.0.1').pathname);
  } catch {
    return { status: 400 };
  }
  if (/[\0-\x1f\x7f]/.test(rel)) return { status: 400 };
  if (rel === '/' || !extname(rel)) rel = '/index.html';
  const file = normalize(join(root, rel));
  if (!file.startsWith(root + sep)) return { status: 403 };
  return { file, rel };
}

/**
 * The built renderer over HTTP, GET and HEAD only. Serves only files that really are inside the folder:
 * a symlink that points out of it is not found, like a path that climbs out with `..` is refused.
 * The returned handler never throws and its promise never rejects; what fails is answered.
 */
export function staticFiles(root: string, warn: (message: string) => void): (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> {
  // The folder itself may be reached through a symlink (an install in a linked folder): compare real paths.
  const realRoot = fs.promises.realpath(root).catch(() => root);
  return async (req, res) => {
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405).end();
      const found = lookupPath(root, req.url);
      if ('status' in found) return void res.writeHead(found.status).end();
      const data = await readInside(await realRoot, found.file);
      if (data === null) {
        const missing = found.rel === '/index.html';
        res.writeHead(missing ? 500 : 404, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(missing ? 'The window is not built: run `npm run build`.\n' : 'not found\n');
        return;
      }
      res.writeHead(200, {
        'Content-Type': MIME[extname(found.file)] ?? 'application/octet-stream',
        'Cache-Control': 'no-cache',
        'X-Content-Type-Options': 'nosniff',
        // The page's CSP is also in its <meta> (with the loopback sockets the dev server needs); the header
        // covers every response and, both applying, keeps the served page's connections to its own server
        // ('self' takes in its ws: since CSP 3): nothing else on loopback is reached from it.
        'Content-Security-Policy': "default-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; script-src 'self'",
      });
      res.end(req.method === 'HEAD' ? undefined : data);
    } catch (err) {
      warn(`forkbench serve: ${req.method} ${String(req.url).slice(0, 200)} failed: ${(err as Error).message}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  };
}

/** The file's bytes if it exists and its real path is inside `realRoot`; null for anything else it could be. */
async function readInside(realRoot: string, file: string): Promise<Buffer | null> {
  let real: string;
  try {
    real = await fs.promises.realpath(file);
  } catch {
    return null;
  }
  if (!real.startsWith(realRoot + sep)) return null;
  try {
    return await fs.promises.readFile(real);
  } catch {
    return null; // a folder, or gone since realpath
  }
}
