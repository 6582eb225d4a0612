-- vrs embedded store, schema version 11 (docs/PROTOCOL.md §21, "Voids"): an epoch resolved
-- with its games held (pending until its commitment is witnessed, or until the epoch they were
-- moved to resolves), and the epoch whose output its games took (NULL: its own).
ALTER TABLE epochs ADD COLUMN games_held INTEGER NOT NULL DEFAULT 0;
ALTER TABLE epochs ADD COLUMN games_from INTEGER;
CREATE INDEX epochs_games_held ON epochs (number) WHERE games_held = 1;
