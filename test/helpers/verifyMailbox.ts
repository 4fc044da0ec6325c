/**
 * How a test talks with a verify command it planted, now that verify runs in its agent's sandbox (issue 43):
 * the verify sees a private /tmp and writes only the folder it checks, so a file the test waits on cannot be
 * shared, and `$$` is a pid of the sandbox's namespace, not the host's. The network stays open in a sandbox
 * (agents' CLIs need their APIs), so the verify says what it does over a TCP connection to the test
 * (bash's /dev/tcp: no program of the test's needs to be visible inside), and waits at a gate the same way.
 */
import * as net from 'node:net';
import * as fs from 'node:fs';

export class VerifyMailbox {
  private readonly said: string[] = [];
  private readonly opened = new Set<string>();
  private readonly waiting = new Map<string, net.Socket[]>();

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async open(): Promise<VerifyMailbox> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const box = new VerifyMailbox(server, (server.address() as net.AddressInfo).port);
    server.on('connection', (c) => box.take(c));
    return box;
  }

  /** A shell line that tells the test `word` (bash: /bin/sh has no /dev/tcp). */
  say(word: string): string {
    return `bash -c 'echo "said ${word}" > /dev/tcp/127.0.0.1/${this.port}'`;
  }

  /** A shell line that waits until the test opens `gate`. */
  waitAt(gate: string): string {
    return `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${this.port}; echo "wait ${gate}" >&3; read -r _ <&3'`;
  }

  /** How many times the verify said `word`. */
  heard(word: string): number {
    return this.said.filter((w) => w === word).length;
  }

  /** Lets every verify waiting at `gate` go on, now and later. */
  openGate(gate: string): void {
    this.opened.add(gate);
    for (const c of this.waiting.get(gate) ?? []) c.end('go\n');
    this.waiting.delete(gate);
  }

  close(): void {
    for (const cs of this.waiting.values()) for (const c of cs) c.destroy();
    this.waiting.clear();
    this.server.close();
  }

  private take(c: net.Socket): void {
    let text = '';
    c.on('error', () => undefined);
    c.on('data', (d: Buffer) => {
      text += d.toString();
      let nl: number;
      while ((nl = text.indexOf('\n')) >= 0) {
        const line = text.slice(0, nl);
        text = text.slice(nl + 1);
        const [kind, word = ''] = line.split(' ');
        if (kind === 'said') this.said.push(word);
        else if (kind === 'wait' && this.opened.has(word)) c.end('go\n');
        else if (kind === 'wait') this.waiting.set(word, [...(this.waiting.get(word) ?? []), c]);
      }
    });
  }
}

/**
 * Processes of this machine running `sleep N` for exactly `seconds`: how a test finds what a contained verify
 * left running (its own pids are its namespace's). Durations no other process sleeps for make them its own.
 */
export function sleepersOf(seconds: number): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8') === `sleep\0${seconds}\0`) {
        const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
        // A zombie has ended: only its parent has not reaped it yet.
        if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z') out.push(Number(name));
      }
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** A sleep duration of this test process's own (no other process of the machine sleeps for it). */
export const ownSleep = (k: number) => 3_600_000 + (process.pid % 100_000) * 10 + k;
