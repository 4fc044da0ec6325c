/**
 * The board's PostgreSQL connection (src-main/board/pg/connection.ts) against a real server: a host that cannot
 * open its database says so in one line naming host and database and why, never the password; a bad URL is a
 * usage error that does not repeat it; the board's default name is the folder's git remote without credentials.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BoardConnectError,
  BoardUrlError,
  boardNameFor,
  checkBoardName,
  describeBoardUrl,
  openCheckedPool,
  parseBoardUrl,
  redactUrl,
} from '../../../../src-main/board/pg/connection.js';
import { gitSync } from '../../../helpers/gitFixture.js';
import { startPgCluster, type PgCluster } from '../../../helpers/pgCluster.js';

const PASSWORD = 'hunter2-s3cret';
let pgc: PgCluster;
/** The cluster's URL for `database`, as `user` with `password`. */
const urlAs = (user: string, password: string | null, database: string) =>
  pgc.url(database).replace('postgresql://postgres@', `postgresql://${user}${password === null ? '' : `:${encodeURIComponent(password)}`}@`);

/** The error openCheckedPool throws, after checking it is one line with no password in it. */
async function openFails(url: string, o: { connectTimeoutMs?: number } = {}): Promise<string> {
  const err = await openCheckedPool(url, o).then(
    async (pool) => {
      await pool.end();
      throw new Error('opened');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BoardConnectError);
  const message = (err as Error).message;
  expect(message).not.toContain('\n');
  expect(message).not.toContain(PASSWORD);
  expect(message).not.toContain(encodeURIComponent(PASSWORD));
  return message;
}

beforeAll(async () => {
  pgc = await startPgCluster({ fsync: false });
});
afterAll(() => pgc?.dispose());

describe('opening the board’s database', () => {
  it('opens a pool that answers, with int8 kept exact as a string', async () => {
    const pool = await openCheckedPool(pgc.url());
    try {
      // 2^53 + 1: a JS number would read it as 9007199254740992.
      const { rows } = await pool.query('SELECT 9007199254740993::bigint AS n, current_setting($1) AS app', ['application_name']);
      expect(rows).toEqual([{ n: '9007199254740993', app: 'forkbench' }]);
    } finally {
      await pool.end();
    }
  });

  it('server down (its socket gone): one line naming host and database, connection refused', async () => {
    await pgc.stopServer();
    try {
      expect(await openFails(urlAs('postgres', PASSWORD, 'boards'))).toBe(
        `cannot open the board at ${pgc.socketDir}/boards: connection refused (no PostgreSQL server socket in that folder)`,
      );
    } finally {
      await pgc.startServer();
    }
  });

  it('nothing listening on a TCP port: connection refused', async () => {
    // A port just freed: nothing listens there now.
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    expect(await openFails(`postgres://alice:${PASSWORD}@127.0.0.1:${port}/boards`)).toBe(
      `cannot open the board at 127.0.0.1:${port}/boards: connection refused (is PostgreSQL running and listening there?)`,
    );
  });

  it('a server that never answers: timed out, not a hang', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      expect(await openFails(`postgres://alice:${PASSWORD}@127.0.0.1:${port}/boards`, { connectTimeoutMs: 300 })).toBe(
        `cannot open the board at 127.0.0.1:${port}/boards: timed out after 0.3 s`,
      );
    } finally {
      silent.close();
    }
  });

  it('no such database', async () => {
    expect(await openFails(urlAs('postgres', PASSWORD, 'no_such_db'))).toBe(`cannot open the board at ${pgc.socketDir}/no_such_db: no such database`);
  });

  it('a wrong password, or none, where the server asks for one: authentication failed', async () => {
    const pool = await openCheckedPool(pgc.url());
    await pool.query(`CREATE ROLE alice LOGIN PASSWORD 'the-right-one'`);
    await pool.end();
    // alice must give a password on the socket; everyone else is trusted as initdb set it up.
    const hba = join(pgc.dataDir, 'pg_hba.conf');
    fs.writeFileSync(hba, `local all alice scram-sha-256\n${fs.readFileSync(hba, 'utf8')}`);
    await pgc.stopServer();
    await pgc.startServer();
    expect(await openFails(urlAs('alice', PASSWORD, 'postgres'))).toBe(
      `cannot open the board at ${pgc.socketDir}/postgres: authentication failed (check the user and password)`,
    );
    expect(await openFails(urlAs('alice', null, 'postgres'))).toBe(`cannot open the board at ${pgc.socketDir}/postgres: authentication failed (the server wants a password)`);
    const ok = await openCheckedPool(urlAs('alice', 'the-right-one', 'postgres'));
    await ok.end();
  });

  it('a URL that is not PostgreSQL’s is a usage error before any connection, and is not repeated', async () => {
    for (const bad of [`mysql://root:${PASSWORD}@db/boards`, `postgres:${PASSWORD}`, `postgres://u:${PASSWORD}@db`, PASSWORD, `postgres://u:${PASSWORD}@db:99999/x`]) {
      const err = await openCheckedPool(bad).catch((e: unknown) => e);
      expect(err, bad).toBeInstanceOf(BoardUrlError);
      expect((err as Error).message).toMatch(/postgres:\/\/\[user\[:password\]@\]host\[:port\]\/database/);
      expect((err as Error).message).not.toContain(PASSWORD);
    }
  });
});

describe('board URLs in messages', () => {
  it('are described as host/database, never with the user or password', () => {
    expect(describeBoardUrl(`postgresql://alice:${PASSWORD}@db.example.com:5433/boards?sslmode=require`)).toBe('db.example.com:5433/boards');
    expect(describeBoardUrl(`postgres://alice:${PASSWORD}@[::1]/b`)).toBe('[::1]/b');
    expect(describeBoardUrl('postgresql://postgres@/boards?host=%2Ftmp%2Fpg')).toBe('/tmp/pg/boards');
    expect(describeBoardUrl('postgres:///boards')).toBe('localhost/boards');
    expect(parseBoardUrl('postgres://h/my%20board')).toEqual({ host: 'h', port: null, database: 'my board' });
  });

  it('are redacted wherever they appear in text', () => {
    expect(redactUrl(`failed: postgres://alice:${PASSWORD}@h/db and postgresql://bob:p@ss@h2/d?password=${PASSWORD}&sslmode=require`)).toBe(
      'failed: postgres://alice:***@h/db and postgresql://bob:***@h2/d?password=***&sslmode=require',
    );
    expect(redactUrl('postgres://alice@h/db')).toBe('postgres://alice@h/db');
  });
});

describe('the board’s name', () => {
  const dirs: string[] = [];
  const tmp = () => {
    const d = fs.mkdtempSync(join(tmpdir(), 'forkbench-boardname-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('is the git remote, without the credentials in it', async () => {
    const repo = join(tmp(), 'project');
    fs.mkdirSync(repo);
    gitSync(repo, ['init', '-q']);
    gitSync(repo, ['remote', 'add', 'origin', `https://alice:${PASSWORD}@git.example.com/team/project.git`]);
    expect(await boardNameFor(repo)).toBe('https://git.example.com/team/project.git');
    // A token as the user (GitHub's https://TOKEN@github.com/…) is a credential too.
    gitSync(repo, ['remote', 'set-url', 'origin', `https://${PASSWORD}@github.com/team/project.git`]);
    expect(await boardNameFor(repo)).toBe('https://github.com/team/project.git');
    gitSync(repo, ['remote', 'set-url', 'origin', 'git@github.com:team/project.git']);
    expect(await boardNameFor(repo)).toBe('git@github.com:team/project.git');
  });

  it('reads the folder’s own repository even when started from a git hook (GIT_DIR set)', async () => {
    const repo = join(tmp(), 'mine');
    const other = join(tmp(), 'other');
    for (const [d, remote] of [[repo, 'https://example.com/mine.git'], [other, 'https://example.com/other.git']] as const) {
      fs.mkdirSync(d);
      gitSync(d, ['init', '-q']);
      gitSync(d, ['remote', 'add', 'origin', remote]);
    }
    const saved = process.env.GIT_DIR;
    process.env.GIT_DIR = join(other, '.git');
    try {
      expect(await boardNameFor(repo)).toBe('https://example.com/mine.git');
    } finally {
      if (saved === undefined) delete process.env.GIT_DIR;
      else process.env.GIT_DIR = saved;
    }
  });

  it('is the folder’s name without a remote or without git', async () => {
    const plain = join(tmp(), 'just a folder');
    fs.mkdirSync(plain);
    expect(await boardNameFor(plain)).toBe('just a folder');
    const repo = join(tmp(), 'no-remote');
    fs.mkdirSync(repo);
    gitSync(repo, ['init', '-q']);
    expect(await boardNameFor(repo)).toBe('no-remote');
  });

  it('--board-name overrides, and must be 1–200 printable characters', async () => {
    expect(await boardNameFor(tmp(), 'Team board ✓')).toBe('Team board ✓');
    expect(checkBoardName('x'.repeat(200))).toBe('x'.repeat(200));
    for (const bad of ['', 'x'.repeat(201), 'a\nb', 'evil\u202Eeman', ' padded', 'tab\there']) {
      await expect(boardNameFor(tmp(), bad), JSON.stringify(bad)).rejects.toThrow(BoardUrlError);
    }
  });
});
