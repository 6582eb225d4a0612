-- vrs PostgreSQL store, schema version 1: epochs and the games (bets and raw RNG requests)
-- committed in them. Times are Unix milliseconds; group elements are fixed-width big-endian.
-- Tables live in the first schema of the connection's search_path.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE epochs (
    number         BIGINT  PRIMARY KEY,
    status         TEXT    NOT NULL CHECK (status IN ('open', 'closed', 'resolved')),
    modulus        TEXT    NOT NULL,
    opened_at_ms   BIGINT  NOT NULL,
    closed_at_ms   BIGINT,
    -- Set once the bets are committed, before the VDF starts.
    iterations     BIGINT,
    prev_y         BYTEA,
    bets_root      BYTEA,
    bet_count      BIGINT,
    x              BYTEA,
    -- Set once, when the epoch resolves; never rewritten.
    y              BYTEA,
    pi             BYTEA,
    l              BYTEA,
    checkpoints    TEXT,
    computation_ms BIGINT,
    resolved_at_ms BIGINT
);

-- At most one epoch is open (inserts and closes are serialised by an advisory lock, the
-- "epoch gate", see store/src/postgres/mod.rs).
CREATE UNIQUE INDEX epochs_one_open ON epochs ((true)) WHERE status = 'open';
CREATE INDEX epochs_closed ON epochs (number) WHERE status = 'closed';

CREATE TABLE games (
    -- Acceptance order: an epoch's games are its leaves in `id` order.
    id             BIGINT  GENERATED ALWAYS AS IDENTITY,
    game_id        TEXT    PRIMARY KEY,
    request_id     TEXT    NOT NULL UNIQUE,
    game           TEXT    NOT NULL CHECK (game IN ('dice', 'sicbo', 'rng')),
    bet_type       TEXT,
    target         SMALLINT,
    combo          TEXT,
    amount         TEXT,
    player_id      TEXT    NOT NULL,
    player_seed    TEXT,
    operator_key   TEXT    NOT NULL,
    created_at_ms  BIGINT  NOT NULL,
    epoch          BIGINT  NOT NULL REFERENCES epochs (number),
    leaf           BYTEA   NOT NULL,
    -- Position in the epoch's tree, written when the epoch resolves (derived from `id` before).
    seq            BIGINT,
    rng_value      TEXT,
    dice           TEXT,
    won            BOOLEAN,
    payout         TEXT,
    resolved_at_ms BIGINT
);

CREATE UNIQUE INDEX games_epoch_order ON games (epoch, id);
CREATE INDEX games_recent ON games (created_at_ms DESC, id DESC);
