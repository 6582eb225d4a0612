-- vrs embedded store, schema version 1: epochs and the games (bets and raw RNG requests)
-- committed in them. Times are Unix milliseconds; group elements are fixed-width big-endian.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE epochs (
    number         INTEGER PRIMARY KEY,
    status         TEXT    NOT NULL CHECK (status IN ('open', 'closed', 'resolved')),
    modulus        TEXT    NOT NULL,
    opened_at_ms   INTEGER NOT NULL,
    closed_at_ms   INTEGER,
    -- Set once the bets are committed, before the VDF starts.
    iterations     INTEGER,
    prev_y         BLOB,
    bets_root      BLOB,
    bet_count      INTEGER,
    x              BLOB,
    -- Set once, when the epoch resolves; never rewritten.
    y              BLOB,
    pi             BLOB,
    l              BLOB,
    checkpoints    TEXT,
    computation_ms INTEGER,
    resolved_at_ms INTEGER
);

CREATE TABLE games (
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
    epoch          INTEGER NOT NULL REFERENCES epochs (number),
    seq            INTEGER NOT NULL,
    leaf           BLOB    NOT NULL,
    rng_value      TEXT,
    dice           TEXT,
    won            INTEGER,
    payout         TEXT,
    resolved_at_ms INTEGER,
    UNIQUE (epoch, seq)
);

CREATE INDEX games_recent ON games (created_at_ms DESC);
