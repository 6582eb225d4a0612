-- vrs embedded store, schema version 10 (docs/PROTOCOL.md §21): the witnessed log's entries in
-- order (index from 0, the bytes of §21 "Entries"), and each checkpoint the operator signed with
-- the cosignature lines its witnesses returned. Entries are only ever appended.
CREATE TABLE log_entries (
    idx   INTEGER PRIMARY KEY,
    entry BLOB    NOT NULL
);

CREATE TABLE log_checkpoints (
    size       INTEGER PRIMARY KEY,
    note       TEXT    NOT NULL,
    updated_ms INTEGER NOT NULL
);
