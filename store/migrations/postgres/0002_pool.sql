-- vrs PostgreSQL store, schema version 2: the pool of precomputed VDF entries for instant bets
-- (docs/PROTOCOL.md, "Pool chain"), and pool-served games, which belong to a pool entry
-- instead of an epoch.

CREATE TABLE pool_batches (
    number          BIGINT PRIMARY KEY,
    first_index     BIGINT NOT NULL,
    size            BIGINT NOT NULL,
    prev_root       BYTEA  NOT NULL,
    anchor_epoch    BIGINT NOT NULL REFERENCES epochs (number),
    seed            BYTEA  NOT NULL,
    root            BYTEA  NOT NULL,
    committed_at_ms BIGINT NOT NULL
);

-- Who consumed an entry, and when, is the game whose pool_index names it (one write per
-- bet instead of two).
CREATE TABLE pool_entries (
    idx          BIGINT PRIMARY KEY,
    batch        BIGINT NOT NULL REFERENCES pool_batches (number),
    -- r_i: secret until the entry is served (docs/PROTOCOL.md §14).
    secret       BYTEA     NOT NULL,
    iterations   BIGINT NOT NULL,
    x            BYTEA  NOT NULL,
    y            BYTEA  NOT NULL,
    l            BYTEA  NOT NULL,
    pi           BYTEA  NOT NULL
);

-- The next entry to serve: every instant transaction takes this row's lock, so entries are
-- served strictly in index order, each once, across all replicas.
CREATE TABLE pool_state (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    next_index BIGINT  NOT NULL
);
INSERT INTO pool_state (id, next_index) VALUES (1, 1);

ALTER TABLE games ALTER COLUMN epoch DROP NOT NULL;
ALTER TABLE games ADD COLUMN pool_index BIGINT UNIQUE REFERENCES pool_entries (idx);
ALTER TABLE games ADD CONSTRAINT games_epoch_or_pool CHECK ((epoch IS NULL) <> (pool_index IS NULL));
