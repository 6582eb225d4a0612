-- vrs embedded store, schema version 4: the notary (docs/PROTOCOL.md §17). Receipts, the
-- batches they are sealed into, API keys (only their SHA-256), x402 payment nonces and
-- Idempotency-Key records. Anchor batches gain a range of notary batches (anchor leaf kind 3);
-- batches stored before this version hold none (the empty range 1..1).

ALTER TABLE anchor_batches ADD COLUMN notary_from INTEGER NOT NULL DEFAULT 1;
ALTER TABLE anchor_batches ADD COLUMN notary_to INTEGER NOT NULL DEFAULT 1;
CREATE INDEX anchor_batches_notary ON anchor_batches (notary_to);

CREATE TABLE api_keys (
    id            TEXT    PRIMARY KEY,
    name          TEXT    NOT NULL,
    -- SHA-256 of the key; the key itself is shown once, at creation, and never stored.
    key_hash      BLOB    NOT NULL UNIQUE,
    created_at_ms INTEGER NOT NULL,
    revoked_at_ms INTEGER,
    uses          INTEGER NOT NULL DEFAULT 0,
    last_used_ms  INTEGER
);

CREATE TABLE notary_batches (
    number        INTEGER PRIMARY KEY,
    size          INTEGER NOT NULL CHECK (size > 0),
    root          BLOB    NOT NULL,
    created_at_ms INTEGER NOT NULL
);

CREATE TABLE notary_receipts (
    -- Acceptance order; a batch takes unsealed receipts in this order.
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    receipt_id      TEXT    NOT NULL UNIQUE,
    schema          TEXT    NOT NULL,
    payload_hash    TEXT    NOT NULL,
    -- RFC 8785 canonical JSON.
    metadata        TEXT    NOT NULL,
    leaf_hash       BLOB    NOT NULL,
    submitted_at_ms INTEGER NOT NULL,
    -- 'api_key' or 'x402'; payer is the key id or the paying address.
    payment_method  TEXT    NOT NULL,
    payer           TEXT    NOT NULL,
    payment_tx      TEXT,
    batch           INTEGER REFERENCES notary_batches (number),
    leaf_index      INTEGER,
    CHECK ((batch IS NULL) = (leaf_index IS NULL))
);
CREATE INDEX notary_receipts_unsealed ON notary_receipts (seq) WHERE batch IS NULL;
CREATE UNIQUE INDEX notary_receipts_leaf ON notary_receipts (batch, leaf_index);

-- Every EIP-3009 authorization nonce ever presented, so that one signed payment pays once.
CREATE TABLE payment_nonces (
    asset       TEXT    NOT NULL,
    payer       TEXT    NOT NULL,
    nonce       TEXT    NOT NULL,
    -- 'settling' (reserved, settlement under way), 'settled', 'failed'.
    status      TEXT    NOT NULL CHECK (status IN ('settling', 'settled', 'failed')),
    tx_hash     TEXT,
    detail      TEXT,
    seen_at_ms  INTEGER NOT NULL,
    PRIMARY KEY (asset, payer, nonce)
);

-- Idempotency-Key records (Stripe's semantics), per caller scope (an API key or a payer).
CREATE TABLE idempotency_keys (
    scope         TEXT    NOT NULL,
    key           TEXT    NOT NULL,
    request_hash  BLOB    NOT NULL,
    created_at_ms INTEGER NOT NULL,
    -- NULL while the first request is in flight.
    status        INTEGER,
    response      TEXT,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at_ms);
