#!/usr/bin/env node
// Keeps the layers one-way: src-shared (no Node, no DOM) <- src-main (Node) <- src-main/electron (the only
// place Electron may be imported); src-renderer imports only src-shared and browser packages. Inside each
// layer the folders are ranked too (INNER_ORDER below): a file may import its own folder and any
// folder ranked below it, never one ranked above or beside it.
//
//   node scripts/check-layers.mjs [ROOT]     ROOT defaults to this repository
//
// Imports are read with the TypeScript parser, not a regex, so every form counts: `import … from`,
// `export … from`, side-effect `import '…'`, `import x = require()`, `require()`, `require.resolve()`,
// dynamic `import()`, `import('…')` types and `/// <reference …>` directives, in .ts/.tsx/.mts/.cts/.js/.jsx/
// .mjs/.cjs files. It fails closed: a package not on its layer's allowlist below, a computed specifier, an
// absolute path or a file that does not parse is a problem. Each problem prints as `file:line: reason`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const LAYERS = ['src-shared', 'src-main', 'src-renderer'];
const SOURCE = /\.(?:[cm]?[jt]s|[jt]sx)$/;

/**
 * Packages (not Node builtins) each layer may import, derived from what the code imports today. A new one
 * is a decision: add it here on purpose. Builtins are allowed in src-main only.
 */
export const ALLOWED_PACKAGES = {
  'src-shared': ['zod'],
  'src-renderer': [
    'react',
    'react-dom',
    'zustand',
    '@xterm/xterm',
    '@xterm/addon-fit',
    '@xterm/addon-search',
    '@xterm/addon-web-links',
    '@xterm/addon-webgl',
    '@dnd-kit/core',
    '@dnd-kit/sortable',
    '@dnd-kit/utilities',
    'zod',
  ],
  'src-main': ['node-pty', 'ws', '@xterm/headless', '@xterm/addon-serialize', '@modelcontextprotocol/sdk', 'zod', 'conf', 'pg'],
};
/** Only src-main/electron, the thin shell, may import these. */
export const SHELL_ONLY_PACKAGES = ['electron', 'electron-store'];

/**
 * The order inside a layer, lowest first: each entry is one rank, a rank lists the rooms (folders, or files
 * at the layer's root) that sit on it. A room may import itself and any room of a lower rank; rooms on the
 * same rank may not import each other (git and agents do not today: git runs commands for claims, agents
 * speak to the agents' processes; keeping them apart keeps either movable). A room not listed here may be
 * neither imported nor import across rooms: placing it is a decision, taken here.
 */
export const INNER_ORDER = {
  // Words and small tools first; an agent's identity and profiles, and what its CLI spent (usage), below the
  // board that records them; the notices read the board's words; the protocol carries all of them, on top.
  'src-shared': [['text', 'lifecycle', 'terminal', 'git'], ['agents'], ['usage'], ['board'], ['notices'], ['protocol']],
  // cli sits above serve, not beside it: `forkbench serve` is a cli command that loads serve.
  // roster sits above agents and git: it owns each Agent, and clears a gone agent's locks in the task folders.
  // process is one host process (data folder, pty host link, Threads, windows, stop), as serve and Electron
  // both run it: above the Threads it opens, below the two shells that carry its windows.
  // usage (issue 47) reads each agent CLI's own records of what it spent: it knows where their sessions are
  // (agents) and records on the board; the roster runs a reader per live agent.
  // sandbox (issue 43) holds what an agent's sandbox reaches: git lays claims' folders out by it, roster wraps panes in it.
  // thread is one open Thread (ThreadHost and what it composes: notices, assignments, dispatch, the merge queue,
  // verify, claim worktrees); window is the windows' side above it (ThreadApi, the window's one door into a
  // Thread; the router; ThreadManager with recent Threads, installed profiles, the board setting and moves).
  'src-main': [['base'], ['board'], ['pty'], ['ptyhost'], ['sandbox'], ['git', 'agents'], ['usage'], ['roster'], ['thread'], ['window'], ['process'], ['serve'], ['cli'], ['electron']],
  'src-renderer': [
    // The page's address (?thread=) is read by the transport and the state alike: below both.
    ['address'],
    // Both are the page's ports to the outside: the host's channel and the browser's notification API.
    ['transport', 'notifications'],
    ['terminal'],
    ['state'],
    ['components'],
    // The entry point wires everything; other files at the root are entry points too until placed.
    ['main', '*root'],
  ],
};

/**
 * The room a file is in inside its layer ('thread'; 'address' for src-renderer/address.ts, whichever extension
 * the import spells; '*root' for an unplaced root file), or null for a file at the root of src-main.
 */
function roomOf(root, layer, abs) {
  const parts = relative(join(root, layer), abs).split(sep);
  if (parts.length > 1) return parts[0];
  const stem = parts[0].replace(SOURCE, '');
  if (layer === 'src-renderer') return INNER_ORDER[layer].flat().includes(stem) ? stem : '*root';
  return null;
}

function rankOf(layer, room) {
  const i = INNER_ORDER[layer]?.findIndex((rank) => rank.includes(room));
  return i === undefined || i < 0 ? null : i;
}

/** Why `file` (room `from`) may not import `target` inside `layer`, or null if the order allows it. */
function judgeInner(root, layer, file, target, what) {
  // Stylesheets and other assets hold no code that could reach back up: only code is ranked.
  if (!INNER_ORDER[layer] || (/\.[^./\\]+$/.test(target) && !SOURCE.test(target))) return null;
  const from = roomOf(root, layer, file);
  const to = roomOf(root, layer, target);
  if (from === to) return null;
  const name = (room) => (room === '*root' ? `an unplaced file at the root of ${layer}` : `${layer}/${room}`);
  const fromRank = rankOf(layer, from);
  const toRank = rankOf(layer, to);
  if (fromRank === null) return `${what}: ${layer}/${from ?? relative(join(root, layer), file)} is not placed in the order inside ${layer} (scripts/check-layers.mjs INNER_ORDER)`;
  if (toRank === null) return `${what}: ${layer}/${to ?? relative(join(root, layer), target)} is not placed in the order inside ${layer} (scripts/check-layers.mjs INNER_ORDER)`;
  if (toRank > fromRank) return `${what}: ${name(from)} imports upward, ${name(to)} sits above it inside ${layer}`;
  if (toRank === fromRank) return `${what}: ${name(from)} and ${name(to)} share a rank inside ${layer} and may not import each other`;
  return null;
}

/** 'node:fs', 'fs/promises' → Node builtin; '@a/b/c' → '@a/b'; 'a/b' → 'a'. */
export function packageOf(spec) {
  if (spec.startsWith('node:') || isBuiltin(spec)) return { builtin: true, name: spec };
  const parts = spec.split('/');
  return { builtin: false, name: spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0] };
}

function listFiles(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (err.code === 'ENOENT') return [];
    throw err;
  }
  return entries.flatMap((e) => {
    const p = join(dir, e.name);
    const isDir = e.isDirectory() || (e.isSymbolicLink() && statSync(p).isDirectory());
    if (isDir) return e.name === 'node_modules' ? [] : listFiles(p);
    return SOURCE.test(e.name) ? [p] : [];
  });
}

function scriptKindOf(file) {
  if (/\.tsx$/.test(file)) return ts.ScriptKind.TSX;
  if (/\.jsx$/.test(file)) return ts.ScriptKind.JSX;
  if (/\.[cm]?js$/.test(file)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

/**
 * Every module reference in one file: { spec, line, kind } — or { spec: null, … } where the specifier is
 * computed and so cannot be checked.
 */
export function importsOf(file, text = readFileSync(file, 'utf8')) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKindOf(file));
  const found = [];
  const lineOf = (pos) => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const literal = (n) => (n && (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) ? n.text : null);
  const add = (kind, specNode, at = specNode) =>
    found.push({ kind, spec: literal(specNode), line: lineOf((at ?? specNode).getStart(sf)) });

  // A file that does not parse may hide imports from the walk below: that is a problem in itself (the first
  // syntax error is enough to report). parseDiagnostics is internal to TypeScript, hence the guard.
  const syntaxError = sf.parseDiagnostics?.[0];
  if (syntaxError)
    found.push({ kind: 'parse', spec: null, line: lineOf(syntaxError.start ?? 0), error: ts.flattenDiagnosticMessageText(syntaxError.messageText, ' ') });
  for (const r of sf.typeReferenceDirectives) found.push({ kind: 'reference types', spec: r.fileName, line: lineOf(r.pos) });
  for (const r of sf.referencedFiles) found.push({ kind: 'reference path', spec: r.fileName.startsWith('.') ? r.fileName : `./${r.fileName}`, line: lineOf(r.pos) });
  for (const r of sf.libReferenceDirectives) found.push({ kind: 'reference lib', spec: r.fileName, line: lineOf(r.pos) });

  const visit = (node) => {
    if (ts.isImportDeclaration(node)) add('import', node.moduleSpecifier);
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier) add('export from', node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add('import = require', node.moduleReference.expression);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add('import type', node.argument.literal);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const kind =
        callee.kind === ts.SyntaxKind.ImportKeyword
          ? 'import()'
          : ts.isIdentifier(callee) && callee.text === 'require'
            ? 'require'
            : ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'require' && callee.name.text === 'resolve'
              ? 'require.resolve'
              : null;
      if (kind && node.arguments.length > 0) add(kind, node.arguments[0], node);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** The layer a path is in ('src-main/electron' for the shell), or null outside the three layers. */
function placeOf(root, abs) {
  const parts = relative(root, abs).split(sep);
  if (!LAYERS.includes(parts[0])) return null;
  if (parts[0] === 'src-main' && parts[1] === 'electron' && parts.length > 2) return 'src-main/electron';
  return parts[0];
}

/** Why one reference from `file` (in `layer`, at `place`) is not allowed, or null if it is. */
function judge(root, file, place, layer, ref) {
  const { spec, kind } = ref;
  if (kind === 'parse') return `does not parse (${ref.error}); its imports cannot be checked`;
  if (spec === null) return `${kind} with a computed specifier: the layer check cannot see what it loads; use a string literal`;
  const what = `${kind} '${spec}'`;
  if (kind === 'reference lib') {
    if (layer !== 'src-renderer' && /^(dom|webworker)/i.test(spec)) return `${what}: only src-renderer may use the DOM`;
    return null;
  }
  if (spec.startsWith('.')) {
    const target = resolve(dirname(file), spec);
    const to = placeOf(root, target);
    const toLayer = to === 'src-main/electron' ? 'src-main' : to;
    if (layer === 'src-shared' && toLayer !== 'src-shared') return `${what}: src-shared may import only src-shared`;
    if (layer === 'src-renderer' && !['src-shared', 'src-renderer'].includes(toLayer))
      return `${what}: src-renderer may import only src-shared and src-renderer`;
    if (layer === 'src-main') {
      if (toLayer === 'src-renderer') return `${what}: src-main must never import src-renderer`;
      if (!['src-shared', 'src-main'].includes(toLayer)) return `${what}: src-main may import only src-shared and src-main`;
      if (to === 'src-main/electron' && place !== 'src-main/electron') return `${what}: the host must not depend on the Electron shell (src-main/electron)`;
    }
    if (toLayer === layer) return judgeInner(root, layer, file, target, what);
    return null;
  }
  if (/^([a-z]:)?[\\/]/i.test(spec) || (/^[a-z][a-z0-9+.-]*:/i.test(spec) && !spec.startsWith('node:')))
    return `${what}: absolute paths and URLs are not allowed; import by relative path or package name`;
  if (spec.startsWith('#')) return `${what}: package.json "imports" aliases are not allowed; the layer check cannot follow them`;
  if (kind === 'reference types' && (spec === 'node' || spec.startsWith('node/'))) {
    return layer === 'src-main' ? null : `${what}: ${layer} may not use Node types`;
  }
  const pkg = packageOf(spec);
  if (pkg.builtin) {
    if (layer === 'src-shared') return `${what}: src-shared may not use Node builtins (no Node, no DOM)`;
    if (layer === 'src-renderer') return `${what}: src-renderer runs in a browser: no Node builtins`;
    return isBuiltin(spec) ? null : `${what}: not a Node builtin`;
  }
  if (SHELL_ONLY_PACKAGES.includes(pkg.name))
    return place === 'src-main/electron' ? null : `${what}: only src-main/electron may import ${pkg.name}`;
  if (!ALLOWED_PACKAGES[layer].includes(pkg.name))
    return `${what}: package '${pkg.name}' is not on the ${layer} allowlist (scripts/check-layers.mjs ALLOWED_PACKAGES)`;
  return null;
}

/**
 * Checks the three layers under `root`. Returns every problem as { file (relative to root, '/'-separated),
 * line, reason } plus how many files were read; no files at all is a problem too (a wrong root must not pass).
 */
export function checkLayers(root = REPO) {
  root = resolve(root);
  const problems = [];
  let files = 0;
  for (const layer of LAYERS) {
    for (const file of listFiles(join(root, layer))) {
      files++;
      const rel = relative(root, file).split(sep).join('/');
      const place = placeOf(root, file);
      for (const ref of importsOf(file)) {
        const reason = judge(root, file, place, layer, ref);
        if (reason) problems.push({ file: rel, line: ref.line, reason });
      }
    }
  }
  if (files === 0) problems.push({ file: '.', line: 0, reason: `no source files under ${LAYERS.join(', ')}: wrong root?` });
  problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return { problems, files };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const root = resolve(process.argv[2] ?? REPO);
  const { problems, files } = checkLayers(root);
  if (problems.length) {
    for (const p of problems) {
      const abs = join(root, p.file);
      const shown = abs.startsWith(process.cwd() + sep) ? relative(process.cwd(), abs).split(sep).join('/') : abs;
      console.error(p.line ? `${shown}:${p.line}: ${p.reason}` : `${shown}: ${p.reason}`);
    }
    console.error(`layer check: ${problems.length} problem(s) in ${files} file(s)`);
    process.exit(1);
  }
  console.log(`layer check: ok (${files} files)`);
}
