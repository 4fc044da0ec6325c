import { createHash, randomBytes } from 'node:crypto';
import { agentIdOf } from '../../src-shared/agents/agentIds.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import type { AgentCondition, AgentLife, AgentStateInfo, LivenessWord } from '../../src-shared/agents/agentLife.js';

/** Its life (src-shared/agents/agentLife.ts). */
export type Lifecycle = AgentLife;

/**
 * Its activity, as its pane's signals are read (roster/agentStates.ts keeps one reader per pane, which alone
 * merges hooks, terminal and screen): what the agent shows of it, and where the liveness check's word goes.
 */
export interface ActivityPort {
  readonly info: AgentStateInfo | null;
  progress(verdict: Exclude<LivenessWord, 'held'>): void;
}

/** The moves its life may make; anything else is a bug in the caller, refused loudly. */
const NEXT: Readonly<Record<Lifecycle, readonly Lifecycle[]>> = {
  starting: ['running', 'exited'],
  running: ['stalled', 'exited'],
  stalled: ['running', 'exited'],
  exited: ['starting'],
};

export class IllegalTransition extends Error {
  constructor(agent: string, from: Lifecycle, to: Lifecycle) {
    super(`agent ${agent} cannot go from ${from} to ${to}`);
    this.name = 'IllegalTransition';
  }
}

/** How the agent's process ended, when its exit status is known. */
export interface ExitStatus {
  code: number;
  signal: number | null;
}

/** What changed: its life (status, pid, exit), never its board calls, which are too frequent to announce. */
export interface AgentChange {
  agent: Agent;
  before: Lifecycle;
}

const SECRET_BYTES = 32;
const ID_NONCE_BYTES = 6;
/** A secret is 43 base64url characters; anything far longer is not one, and is not hashed. */
const MAX_SECRET_CHARS = 256;

const digest = (s: string) => createHash('sha256').update(s).digest();
/** The digest of a secret as records and the pty host keep it. */
export const secretDigestOf = (secret: string): string => digest(secret).toString('hex');
/** The digest of what a caller presented, or null for something that cannot be a secret. */
export const presentedDigest = (secret: unknown): Buffer | null =>
  typeof secret === 'string' && secret.length > 0 && secret.length <= MAX_SECRET_CHARS ? digest(secret) : null;

/**
 * One agent of a Thread, from its launch until its tab is closed, across resumes: its identity, its secret,
 * and its life. It is the only writer of its status, pid, exit and last board call; each move of its life is
 * a method that refuses a move the life does not allow, and fires `onChange` once.
 */
export class Agent {
  private _status: Lifecycle;
  private _pid: number | null;
  private _exit: ExitStatus | null = null;
  private _secret: string;
  private _secretDigest: string;
  private _lastBoardCallAt: number;
  /** Calls of its the host is still answering with work of its own (a claim's folder being made). */
  private _hostWorking = 0;
  private _run = 0;
  /** The reader of its current pane's signals; none before its first pane, nor for another host's agent. */
  private activity: ActivityPort | null = null;
  private readonly changes = new Emitter<AgentChange>();
  readonly onChange = this.changes.event;

  private constructor(
    readonly id: string,
    readonly name: string,
    readonly profile: string,
    status: Lifecycle,
    secret: string,
    secretDigest: string,
    pid: number | null,
    /** performance.now(): the clock the liveness check compares board calls with pty output in. */
    now: number,
  ) {
    this._status = status;
    this._secret = secret;
    this._secretDigest = secretDigest;
    this._pid = pid;
    this._lastBoardCallAt = now;
  }

  /** A new agent about to start. Its id (agentIdOf) carries `n`, the number of its name ("shell 3"), so the
   *  window can still name it after it is gone. */
  static launched(profile: string, name: string, n: number, now: number): Agent {
    const secret = randomBytes(SECRET_BYTES).toString('base64url');
    return new Agent(agentIdOf(profile, n, randomBytes(ID_NONCE_BYTES).toString('hex')), name, profile, 'starting', secret, secretDigestOf(secret), null, now);
  }

  /** An agent of an earlier run of the host, gone: no secret at all until it is resumed. */
  static restored(id: string, profile: string, name: string, now: number): Agent {
    return new Agent(id, name, profile, 'exited', '', '', null, now);
  }

  /** An agent that outlived a board host (its pty host kept it): running, known by its secret's digest alone,
   *  since the pty host keeps no secret (an empty secret never authenticates). */
  static adopted(r: { id: string; name: string; profile: string; secretDigest: string; pid: number }, now: number): Agent {
    return new Agent(r.id, r.name, r.profile, 'running', '', r.secretDigest, r.pid, now);
  }

  get status(): Lifecycle {
    return this._status;
  }

  get pid(): number | null {
    return this._pid;
  }

  get exit(): ExitStatus | null {
    return this._exit;
  }

  /** 256 bits, random per start; handed to the agent in its environment and never shown in the UI. Empty
   *  for an adopted or restored agent: what this host never held, it cannot hand out. */
  get secret(): string {
    return this._secret;
  }

  /** SHA-256 of the secret, in hex: what a call's secret is checked against. */
  get secretDigest(): string {
    return this._secretDigest;
  }

  /** performance.now() of the agent's last board call, for the liveness check. */
  get lastBoardCallAt(): number {
    return this._lastBoardCallAt;
  }

  /** Which start of the agent this is (0, then one more per resume): a pane of an earlier start that reports
   *  late speaks for a process that is no longer the agent's. */
  get run(): number {
    return this._run;
  }

  get alive(): boolean {
    return this._status !== 'exited';
  }

  /** Its state as the window is told it: its life and its activity, read together from their one owner. */
  get condition(): AgentCondition {
    return { life: this._status, activity: this.activity?.info ?? null };
  }

  /** Its pane's signals are read from now on (a launch, a resume, a pane taken back after a restart). */
  readsActivity(port: ActivityPort): void {
    this.activity = port;
  }

  /**
   * The liveness check's word on it, taken whole: its life moves (stalled only for `stalled`) and its activity
   * hears the same word, so the two never disagree about one round. `held` (it waits on a person) leaves its
   * activity as its signals said: waiting for you.
   */
  judged(word: LivenessWord): void {
    this.progressing(word !== 'stalled');
    if (word !== 'held' && this.alive) this.activity?.progress(word);
  }

  /** Its process is up. */
  started(pid: number): void {
    this.move('running');
    this._pid = pid;
    this.fire('starting');
  }

  /** The liveness check's word: making progress (or idle, holding nothing), or not while it holds work.
   *  Saying what it already is changes nothing. */
  progressing(yes: boolean): void {
    const to: Lifecycle = yes ? 'running' : 'stalled';
    if (this._status === to || this._status === 'exited' || this._status === 'starting') return;
    const before = this.move(to);
    this.fire(before);
  }

  /** It is gone, however that was learned (its death seen, its start failed, its tab closed, found gone):
   *  true for the call that ended it, false when it already was. Its secret dies with it. */
  ended(exit?: ExitStatus): boolean {
    if (exit) this._exit = exit;
    if (this._status === 'exited') {
      if (exit) this.fire('exited');
      return false;
    }
    const before = this.move('exited');
    this.fire(before);
    return true;
  }

  /** The same agent again, on a new process: a new secret (the old one stays dead) and a new run. */
  resumed(now: number): void {
    const before = this.move('starting');
    this._secret = randomBytes(SECRET_BYTES).toString('base64url');
    this._secretDigest = secretDigestOf(this._secret);
    this._pid = null;
    this._exit = null;
    this._lastBoardCallAt = now;
    this._run++;
    this.fire(before);
  }

  /** A board call it made: progress for the liveness check. Not announced. */
  calledBoard(now: number): void {
    this._lastBoardCallAt = now;
  }

  /**
   * The host doing work this agent asked for and waits on (its claim's folder: a checkout, or a wait for
   * another host's push of the task's record): for as long as it runs the agent is not quiet, it is held up
   * by the host, and its answer is work like any board call. A lease shorter than the host's wait would
   * otherwise lapse before the agent could start (two-host chaos: a claim waiting 5 s for a push under a 2 s
   * lease lapsed, again and again).
   */
  async whileHostWorks<T>(work: () => Promise<T>, now: () => number): Promise<T> {
    this._hostWorking++;
    try {
      return await work();
    } finally {
      this._hostWorking--;
      this._lastBoardCallAt = now();
    }
  }

  /** When it last worked with the board, for the liveness check: now, while the host still works for it. */
  boardWorkAt(now: number): number {
    return this._hostWorking > 0 ? now : this._lastBoardCallAt;
  }

  dispose(): void {
    this.changes.dispose();
  }

  private move(to: Lifecycle): Lifecycle {
    const before = this._status;
    if (!NEXT[before].includes(to)) throw new IllegalTransition(this.id, before, to);
    this._status = to;
    return before;
  }

  private fire(before: Lifecycle): void {
    this.changes.fire({ agent: this, before });
  }
}
