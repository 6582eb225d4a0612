-- vrs embedded store, schema version 3: anchor batches (docs/PROTOCOL.md §16) and the
-- transactions sent for them. A transaction is recorded before it is broadcast, so a restart
-- finds every transaction that may be on chain and never sends a batch twice.

CREATE TABLE anchor_batches (
    number          INTEGER PRIMARY KEY,
    -- Epochs first_epoch..=last_epoch and pool batches pool_from..pool_to (exclusive).
    first_epoch     INTEGER NOT NULL UNIQUE,
    last_epoch      INTEGER NOT NULL UNIQUE,
    pool_from       INTEGER NOT NULL,
    pool_to         INTEGER NOT NULL,
    leaves          INTEGER NOT NULL,
    root            BLOB    NOT NULL,
    created_at_ms   INTEGER NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'submitted', 'confirmed')),
    tx_hash         BLOB,
    block_number    INTEGER,
    confirmed_at_ms INTEGER,
    CHECK (first_epoch <= last_epoch AND pool_from <= pool_to),
    CHECK ((status = 'confirmed') = (tx_hash IS NOT NULL))
);
CREATE INDEX anchor_batches_open ON anchor_batches (status) WHERE status <> 'confirmed';
CREATE INDEX anchor_batches_pool ON anchor_batches (pool_to);

CREATE TABLE anchor_txs (
    hash         BLOB    PRIMARY KEY,
    batch        INTEGER NOT NULL REFERENCES anchor_batches (number),
    nonce        INTEGER NOT NULL,
    -- Fees in wei, as decimal text (they may exceed 64 bits).
    max_fee      TEXT    NOT NULL,
    priority_fee TEXT    NOT NULL,
    -- The signed EIP-2718 envelope, rebroadcast as is after a restart.
    raw          BLOB    NOT NULL,
    sent_at_ms   INTEGER NOT NULL
);
CREATE INDEX anchor_txs_batch ON anchor_txs (batch);
