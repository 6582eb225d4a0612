-- vrs embedded store, schema version 6: the open and the closed epochs found through partial
-- indexes instead of a scan of every epoch. Every bet looks up the open epoch, and at one
-- epoch every 5 s the table gains 17 280 rows a day: without these, a bet's cost grew with the
-- service's age. (The PostgreSQL store has had the same two indexes since version 1.)

CREATE UNIQUE INDEX epochs_one_open ON epochs (status) WHERE status = 'open';
CREATE INDEX epochs_closed ON epochs (number) WHERE status = 'closed';
