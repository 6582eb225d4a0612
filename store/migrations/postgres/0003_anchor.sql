-- vrs PostgreSQL store, schema version 3: anchor batches (docs/PROTOCOL.md §16) and the
-- transactions sent for them. A transaction is recorded before it is broadcast, so a restart
-- finds every transaction that may be on chain and never sends a batch twice.

CREATE TABLE anchor_batches (
    number          BIGINT PRIMARY KEY,
    -- Epochs first_epoch..=last_epoch and pool batches pool_from..pool_to (exclusive).
    first_epoch     BIGINT NOT NULL UNIQUE,
    last_epoch      BIGINT NOT NULL UNIQUE,
    pool_from       BIGINT NOT NULL,
    pool_to         BIGINT NOT NULL,
    leaves          BIGINT NOT NULL,
    root            BYTEA   NOT NULL,
    created_at_ms   BIGINT NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'submitted', 'confirmed')),
    tx_hash         BYTEA,
    block_number    BIGINT,
    confirmed_at_ms BIGINT,
    CHECK (first_epoch <= last_epoch AND pool_from <= pool_to),
    CHECK ((status = 'confirmed') = (tx_hash IS NOT NULL))
);
CREATE INDEX anchor_batches_open ON anchor_batches (status) WHERE status <> 'confirmed';
CREATE INDEX anchor_batches_pool ON anchor_batches (pool_to);

CREATE TABLE anchor_txs (
    -- Recording order (replicas' clocks may disagree; this does not).
    id           BIGSERIAL UNIQUE,
    hash         BYTEA   PRIMARY KEY,
    batch        BIGINT NOT NULL REFERENCES anchor_batches (number),
    nonce        BIGINT NOT NULL,
    -- Fees in wei, as decimal text (they may exceed 64 bits).
    max_fee      TEXT    NOT NULL,
    priority_fee TEXT    NOT NULL,
    -- The signed EIP-2718 envelope, rebroadcast as is after a restart.
    raw          BYTEA   NOT NULL,
    sent_at_ms   BIGINT NOT NULL
);
CREATE INDEX anchor_txs_batch ON anchor_txs (batch);
