-- vrs PostgreSQL store, schema version 8 (docs/PROTOCOL.md §11 "Signed acceptance", §14
-- "Binding served bets"): each game's signed acceptance (the operator's Ed25519 key and
-- signature), the keys every replica has signed with (published at GET /, never removed), and,
-- for a pool-served game, the epoch whose bets tree holds its leaf. Games from before this
-- version keep NULLs: unsigned, and (pool-served) bound by no epoch.

ALTER TABLE games ADD COLUMN acceptance_key BYTEA;
ALTER TABLE games ADD COLUMN acceptance_sig BYTEA;
ALTER TABLE games ADD COLUMN bet_epoch      BIGINT REFERENCES epochs (number);

CREATE INDEX games_bet_epoch ON games (bet_epoch, pool_index) WHERE bet_epoch IS NOT NULL;

CREATE TABLE acceptance_keys (
    public_key BYTEA  PRIMARY KEY,
    since_ms   BIGINT NOT NULL
);
