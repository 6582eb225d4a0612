-- vrs embedded store, schema version 2: the pool of precomputed VDF entries for instant bets
-- (docs/PROTOCOL.md, "Pool chain"), and pool-served games, which belong to a pool entry
-- instead of an epoch.

CREATE TABLE pool_batches (
    number          INTEGER PRIMARY KEY,
    first_index     INTEGER NOT NULL,
    size            INTEGER NOT NULL,
    prev_root       BLOB    NOT NULL,
    anchor_epoch    INTEGER NOT NULL REFERENCES epochs (number),
    seed            BLOB    NOT NULL,
    root            BLOB    NOT NULL,
    committed_at_ms INTEGER NOT NULL
);

-- Who consumed an entry, and when, is the game whose pool_index names it (one write per
-- bet instead of two).
CREATE TABLE pool_entries (
    idx          INTEGER PRIMARY KEY,
    batch        INTEGER NOT NULL REFERENCES pool_batches (number),
    -- r_i: secret until the entry is served (docs/PROTOCOL.md §14).
    secret       BLOB    NOT NULL,
    iterations   INTEGER NOT NULL,
    x            BLOB    NOT NULL,
    y            BLOB    NOT NULL,
    l            BLOB    NOT NULL,
    pi           BLOB    NOT NULL
);

-- The next entry to serve: entries are served strictly in index order, each once.
CREATE TABLE pool_state (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    next_index INTEGER NOT NULL
);
INSERT INTO pool_state (id, next_index) VALUES (1, 1);

-- games: `epoch` becomes optional, `pool_index` names the entry of a pool-served game.
CREATE TABLE games_v2 (
    game_id        TEXT    PRIMARY KEY,
    request_id     TEXT    NOT NULL UNIQUE,
    game           TEXT    NOT NULL CHECK (game IN ('dice', 'sicbo', 'rng')),
    bet_type       TEXT,
    target         INTEGER,
    combo          TEXT,
    amount         TEXT,
    player_id      TEXT    NOT NULL,
    player_seed    TEXT,
    operator_key   TEXT    NOT NULL,
    created_at_ms  INTEGER NOT NULL,
    epoch          INTEGER REFERENCES epochs (number),
    seq            INTEGER,
    pool_index     INTEGER UNIQUE REFERENCES pool_entries (idx),
    leaf           BLOB    NOT NULL,
    rng_value      TEXT,
    dice           TEXT,
    won            INTEGER,
    payout         TEXT,
    resolved_at_ms INTEGER,
    UNIQUE (epoch, seq),
    CHECK ((epoch IS NULL) <> (pool_index IS NULL))
);
INSERT INTO games_v2 (game_id, request_id, game, bet_type, target, combo, amount, player_id,
        player_seed, operator_key, created_at_ms, epoch, seq, leaf, rng_value, dice, won,
        payout, resolved_at_ms)
    SELECT game_id, request_id, game, bet_type, target, combo, amount, player_id, player_seed,
        operator_key, created_at_ms, epoch, seq, leaf, rng_value, dice, won, payout,
        resolved_at_ms
    FROM games;
DROP TABLE games;
ALTER TABLE games_v2 RENAME TO games;
CREATE INDEX games_recent ON games (created_at_ms DESC);
