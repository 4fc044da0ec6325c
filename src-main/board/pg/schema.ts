/**
 * The board's tables on PostgreSQL, as versioned migrations. All in one schema of Forkbench's own, so a board
 * can live in a database that holds other things. A migration is never edited once released: its checksum is
 * kept in `forkbench.schema_version`, and a changed one is refused at start. New columns or tables come as a
 * new version at the end of the list.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Forkbench's schema: every object of the board lives here. */
export const SCHEMA = 'forkbench';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'board',
    sql: `
CREATE TABLE forkbench.boards (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name text NOT NULL UNIQUE,
  -- The last event's position. Moved only by a transaction that holds this row's lock (FOR UPDATE), so
  -- positions are gapless and in commit order: a reader of "everything after N" never skips a late commit.
  head bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- The board's event log: the shared reducer's input, in order. Each host's engine is this log applied.
CREATE TABLE forkbench.events (
  board_id bigint NOT NULL REFERENCES forkbench.boards (id) ON DELETE CASCADE,
  seq bigint NOT NULL,
  task_id text,
  body text NOT NULL,
  PRIMARY KEY (board_id, seq)
);
CREATE INDEX events_by_task ON forkbench.events (board_id, task_id, seq) WHERE task_id IS NOT NULL;

-- The first outcome of each agent's idempotency key, written in the same transaction as the write's events.
CREATE TABLE forkbench.write_keys (
  board_id bigint NOT NULL REFERENCES forkbench.boards (id) ON DELETE CASCADE,
  agent_id text NOT NULL,
  key text NOT NULL,
  hash text NOT NULL,
  outcome text NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (board_id, agent_id, key)
);
CREATE INDEX write_keys_by_age ON forkbench.write_keys (board_id, at);

-- Hosts hold leases too: a row each host renews; any host ends a lapsed host's claims (host-lost).
CREATE TABLE forkbench.hosts (
  board_id bigint NOT NULL REFERENCES forkbench.boards (id) ON DELETE CASCADE,
  host_id text NOT NULL,
  incarnation text NOT NULL,
  name text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (board_id, host_id)
);

-- Which host runs which agent: a host acts only for its own agents, and a lapsed host's agents lose their claims.
-- Name and profile are for other hosts' windows, which list every live host's agents; gone: it exited.
CREATE TABLE forkbench.agents (
  board_id bigint NOT NULL REFERENCES forkbench.boards (id) ON DELETE CASCADE,
  agent_id text NOT NULL,
  host_id text NOT NULL,
  name text NOT NULL DEFAULT '',
  profile text NOT NULL DEFAULT '',
  gone boolean NOT NULL DEFAULT false,
  PRIMARY KEY (board_id, agent_id)
);
`,
  },
  {
    version: 2,
    name: 'outage evidence',
    // When the database last saw the board alive: its last committed write and each host's last renewal. A gap
    // in both longer than any host's renewal period is an outage, which no lease is made to pay for (outage.ts).
    sql: `
ALTER TABLE forkbench.boards ADD COLUMN written_at timestamptz NOT NULL DEFAULT clock_timestamp();
ALTER TABLE forkbench.hosts ADD COLUMN renewed_at timestamptz NOT NULL DEFAULT clock_timestamp();
`,
  },
  {
    version: 3,
    name: 'host-names',
    sql: `
-- Hosts of one board are told apart by name: the database refuses a second live host of the same name, so two
-- hosts joining at once cannot both take it (the check and the write are one). Names already alike (hosts of
-- one machine name, from before) each get their host id appended; each takes its own name at its next join.
UPDATE forkbench.hosts h SET name = h.name || '-' || h.host_id
 WHERE EXISTS (SELECT 1 FROM forkbench.hosts o WHERE o.board_id = h.board_id AND o.name = h.name AND o.host_id <> h.host_id);
CREATE UNIQUE INDEX hosts_name_unique ON forkbench.hosts (board_id, name);
`,
  },
];

/** The index that keeps hosts' names apart on a board: a join that hits it asked for a name another host has. */
export const HOST_NAME_INDEX = 'hosts_name_unique';
