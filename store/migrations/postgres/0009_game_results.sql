-- vrs PostgreSQL store, schema version 9: an epoch game's result in a table of its own, so
-- that resolving an epoch only inserts (docs/PERFORMANCE.md, "PostgreSQL soak").
--
-- The results used to be written into each game's row. An UPDATE writes a whole new version
-- of the row (about 95 bytes longer than the old), and every row of the epoch is updated in
-- one transaction, so the old versions cannot be pruned before it commits: the new ones went
-- to other pages, each with a new entry in every index of games, and left a dead tuple behind
-- for vacuum. An insert into game_results writes the result and one index entry, and the
-- games table is only ever appended to. Games resolved before this version keep their result
-- in games (readers take game_results first); pool-served games are written whole when served
-- and keep theirs there too.
CREATE TABLE game_results (
    game_id        TEXT    PRIMARY KEY,
    seq            BIGINT  NOT NULL,
    rng_value      TEXT    NOT NULL,
    dice           TEXT    NOT NULL,
    won            BOOLEAN,
    payout         TEXT,
    resolved_at_ms BIGINT  NOT NULL
);

-- Only pool-served games have a pool_index; the unique index held a NULL entry for every
-- epoch game.
ALTER TABLE games DROP CONSTRAINT games_pool_index_key;
CREATE UNIQUE INDEX games_pool_index ON games (pool_index) WHERE pool_index IS NOT NULL;
