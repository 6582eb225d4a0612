-- vrs schema version 5: crash recovery of x402 payments (docs/PROTOCOL.md §17.6). A payment
-- nonce reserved for settlement keeps what its request would store: the signed payment, the
-- receipt prepared before settling and the Idempotency-Key's claim. If the process dies while
-- the payment settles, the leader finishes the request from this row: it settles the payment
-- (or finds it settled on chain) and stores the receipt, or records the payment as failed.
ALTER TABLE payment_nonces ADD COLUMN prepared TEXT;
-- Only rows still settling are looked at by the recovery.
CREATE INDEX payment_nonces_settling ON payment_nonces (seen_at_ms) WHERE status = 'settling';
