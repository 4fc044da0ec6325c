import type * as net from 'node:net';
import { findOnPath } from '../base/pathLookup.js';
import { peerPid, type Caller, type Whereabouts } from './peerCredentials.js';

/**
 * Who is at the other end of a connection to the agents' socket, and whether it may use the secret it sent:
 * the host's one place for the pane binding (issue 29, finding 6: a secret read from another agent's
 * /proc/<pid>/environ was a full identity). The host takes a judge as a seam (ThreadHostOptions.peerJudge);
 * Electron and serve take the real one, `paneJudge`, as does every test that has no reason to act as an
 * agent from outside its pane.
 */
export interface PeerJudge {
  /** The calling process, for a call with no secret (a git hook's person check, a person's record): a person
   *  is a process in no pane. */
  callerOf(socket: net.Socket): Promise<Caller>;
  /** Null when this connection may use `agent`'s secret; otherwise why not, in the refusal's words. */
  refusal(socket: net.Socket, agent: { readonly id: string; readonly name: string }): Promise<string | null>;
}

/** What a judge asks the host about its panes (the Roster answers). */
export interface Panes {
  /** The pane a process runs in (its name), or a person's process in none. */
  callerOf(pid: number | null): Caller;
  /** The agent whose pane (or verify command) a process runs in, by id. */
  paneOf(pid: number | null): Whereabouts<string>;
  /** An agent's name, for a refusal's message. */
  nameOf(agentId: string): string;
}

/** How a host makes its judge once its panes exist. */
export type PeerJudgeFactory = (panes: Panes) => PeerJudge;

/**
 * The real judge: the kernel names the calling process (SO_PEERCRED, read by perl), the host says which pane
 * it runs in, and a secret works only from its own agent's pane. Where a connection's process runs is read
 * once, at its first call that needs it: a connection does not change process.
 */
export const paneJudge =
  (perl: string | null = findOnPath('perl')): PeerJudgeFactory =>
  (panes) => {
    const where = new WeakMap<net.Socket, Promise<Whereabouts<string>>>();
    return {
      callerOf: async (socket) => panes.callerOf(await peerPid(socket, perl)),
      async refusal(socket, agent) {
        let from = where.get(socket);
        if (!from) where.set(socket, (from = peerPid(socket, perl).then((pid) => panes.paneOf(pid))));
        const w = await from;
        if ('in' in w && w.in === agent.id) return null;
        const place = 'in' in w ? `the pane of ${panes.nameOf(w.in)}` : 'outside' in w ? 'a process in no agent pane' : w.unknown;
        return `${agent.name}'s secret works only from its own pane; this call came from ${place}`;
      },
    };
  };
