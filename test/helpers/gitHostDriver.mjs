// A Thread host in a process of its own (gitAcrossHosts, mergeQueue.git), so a test can kill -9 it as a machine dies:
// it opens the folder's Thread on the shared board, runs one idle agent that claims T-1, and prints one JSON
// line with what an agent's git needs to commit through the fence there (socket, secret, id) and the claim's
// worktree. Then it stays up until killed.
//
// argv: FOLDER DATA_ROOT RUNTIME_ROOT [BOARD_URL] (none: the Thread's own journal board)
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [folder, dataRoot, runtimeRoot, url] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const { ThreadHost } = await import(pathToFileURL(join(here, '..', '..', 'dist-main', 'src-main', 'thread', 'threadHost.js')).href);
const { paneJudge } = await import(pathToFileURL(join(here, '..', '..', 'dist-main', 'src-main', 'agents', 'peerJudge.js')).href);
// The test commits with the printed secret from its own process, outside any pane: test/helpers/peerJudges.ts's
// secretsFromTheTestProcess, written again here as this driver runs the built modules.
const secretsFromTheTestProcess = (panes) => ({ callerOf: paneJudge()(panes).callerOf, refusal: async () => null });

const host = await ThreadHost.open({ folder, dataRoot, runtimeRoot, liveness: false, peerJudge: secretsFromTheTestProcess, ...(url ? { sharedBoard: { url } } : {}) });
const a = await host.roster.launch('custom', { command: 'exec sleep 600' });
const c = await host.board.run((e) => e.claim(a.id, 'T-1'));
if (!c.ok) throw new Error(`claim: ${c.error.message}`);
const wt = await host.worktrees.worktreeOf('T-1', c.value.token);
const rec = host.roster.agent(a.id);
process.stdout.write(`${JSON.stringify({ agentId: a.id, secret: rec.secret, socket: host.socket.path, wt: wt.path, hostId: host.board.engine.here?.id })}\n`);
setInterval(() => undefined, 60_000);
