-- vrs PostgreSQL store, schema version 7: version-2 epochs commit to their timing
-- (docs/PROTOCOL.md §10, "Timing"). Fixed when the epoch opens: the earlier epoch whose output
-- its input takes (plan_previous, 0 for the genesis output), its T, the declared margin (in
-- hundredths) and squaring rate, and the deadline they give; chosen when it closes: a random
-- nonce. Epochs from before this version keep NULLs here and stay version 1.

ALTER TABLE epochs ADD COLUMN plan_previous     BIGINT;
ALTER TABLE epochs ADD COLUMN plan_iterations   BIGINT;
ALTER TABLE epochs ADD COLUMN plan_margin_centi INTEGER;
ALTER TABLE epochs ADD COLUMN plan_rate         BIGINT;
ALTER TABLE epochs ADD COLUMN deadline_ms       BIGINT;
ALTER TABLE epochs ADD COLUMN nonce             BYTEA;
