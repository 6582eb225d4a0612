-- vrs schema version 6: the game counts of GET /api/v1/stats without a scan of every game (a
-- public endpoint whose cost grew with every bet ever taken).
--
-- game_totals counts, per game name, the games that are settled for good: those of resolved
-- epochs and the instant games below pool_counted_to. The transaction that resolves an epoch
-- adds that epoch's games and the instant games served since (game_totals_state moves on with
-- it; its row lock makes two such updates take turns). Stats adds to it what is still live,
-- through indexes: the games of the open and the closed epochs, and the instant games from
-- pool_counted_to on. Nothing is written per bet, so replicas' inserts do not contend on it.
CREATE TABLE game_totals (
    game  TEXT   PRIMARY KEY,
    games BIGINT NOT NULL
);

CREATE TABLE game_totals_state (
    id              INT    PRIMARY KEY CHECK (id = 1),
    pool_counted_to BIGINT NOT NULL
);

INSERT INTO game_totals_state (id, pool_counted_to)
SELECT 1, next_index FROM pool_state WHERE id = 1;

INSERT INTO game_totals (game, games)
SELECT game, COUNT(*) FROM games
WHERE epoch IN (SELECT number FROM epochs WHERE status = 'resolved')
   OR pool_index < (SELECT pool_counted_to FROM game_totals_state WHERE id = 1)
GROUP BY game;
