"""The sync and async clients against a live server: every endpoint, typed answers, typed
errors carrying the server's JSON."""

from __future__ import annotations

import asyncio
import hashlib
import uuid

import pytest

from conftest import Live, wait_until
from vrs_client import (
    AsyncClient,
    BadRequest,
    BetAccepted,
    Client,
    Game,
    InstantBet,
    NetworkError,
    NotFound,
    PaymentRequired,
    Timeout,
)


@pytest.fixture()
def vrs(live: Live):
    with Client(live.url) as c:
        yield c


def test_service_endpoints(vrs: Client) -> None:
    info = vrs.info()
    assert info.version and info.acceptance_keys and info.acceptance_keys[0].public_key
    assert vrs.health().status
    catalog = vrs.catalog()
    assert {g.type for g in catalog.games} >= {"dice", "sicbo"}
    assert "over7" in next(g.bet_types for g in catalog.games if g.type == "dice")
    assert vrs.stats().epoch
    entropy = wait_until("an epoch resolved", vrs.entropy)
    assert entropy.epoch >= 1 and int(entropy.entropy, 16) > 1
    epoch = vrs.epoch(entropy.epoch)
    assert epoch.epoch == entropy.epoch and epoch.status == "resolved" and epoch.y


@pytest.mark.parametrize(
    "game,bet_type,extra",
    [
        ("dice", "exact", {"target": 7}),
        ("dice", "over7", {}),
        ("dice", "under7", {}),
        ("dice", "odd", {}),
        ("dice", "even", {}),
        ("sicbo", "big", {}),
        ("sicbo", "small", {}),
        ("sicbo", "odd", {}),
        ("sicbo", "even", {}),
        ("sicbo", "total", {"target": 10}),
        ("sicbo", "single", {"target": 3}),
        ("sicbo", "double", {"target": 2}),
        ("sicbo", "triple", {"target": 6}),
        ("sicbo", "anyTriple", {}),
        ("sicbo", "combo", {"combo": [1, 2]}),
    ],
)
def test_every_bet_type_resolves(vrs: Client, game: str, bet_type: str, extra: dict) -> None:
    bet = vrs.bet(game, bet_type, amount=2, player_seed="pytest", instant=False, **extra)
    assert isinstance(bet, BetAccepted), bet
    assert bet.acceptance is not None and bet.acceptance.kind == "epoch"
    result = vrs.wait(bet.game_id, timeout=30)
    assert isinstance(result, Game) and result.result is not None
    outcome = result.result
    assert len(outcome.dice) == (2 if game == "dice" else 3)
    assert all(1 <= d <= 6 for d in outcome.dice)
    assert outcome.bet_type == bet_type and isinstance(outcome.won, bool)
    verification = vrs.verification(bet.game_id)
    assert verification is not None and verification.proof
    assert bet.game_id in [r.get("game_id") for r in vrs.recent()]


def test_instant_bets_and_pool_batches(vrs: Client) -> None:
    wait_until("the pool filled", lambda: (vrs.stats().pool.get("depth") or 0) >= 4)
    bet = vrs.bet("dice", "over7", instant=True)
    assert isinstance(bet, InstantBet), bet
    assert bet.result.rng_value and len(bet.result.dice) == 2
    assert bet.acceptance is not None and bet.acceptance.kind == "pool"
    batch = vrs.pool_batch(1)
    assert batch.number == 1 and batch.size == len(batch.leaf_hashes) > 0


def test_raw_rng(vrs: Client) -> None:
    accepted = vrs.rng(client_seed="seed-1")
    assert accepted.request_id and accepted.game_id
    game = vrs.wait(accepted.game_id)
    assert game.result is not None and len(game.result.rng_value) == 64


def test_wait_times_out_with_a_typed_error(vrs: Client) -> None:
    bet = vrs.bet("dice", "odd", instant=False)
    with pytest.raises(Timeout):
        vrs.wait(bet.game_id, timeout=0)


def test_errors_carry_the_servers_json(vrs: Client) -> None:
    with pytest.raises(BadRequest) as e:
        vrs.bet("dice", "seven")
    assert e.value.status == 400
    assert "over7" in e.value.valid_bet_types and e.value.example
    with pytest.raises(NotFound) as nf:
        vrs.game("0" * 32)
    assert nf.value.status == 404 and nf.value.message
    with pytest.raises(NotFound):
        vrs.verification("f" * 32)
    with pytest.raises(NotFound):
        vrs.epoch(10**9)
    with pytest.raises(ValueError):
        vrs.bet("roulette", "red")  # type: ignore[arg-type]


def test_network_errors_are_typed() -> None:
    with Client("http://127.0.0.1:9", timeout=2) as c:
        with pytest.raises(NetworkError):
            c.info()


def test_notary_with_an_api_key_and_idempotency(live: Live, vrs: Client) -> None:
    assert vrs.notary_schemas()["schemas"]
    assert vrs.notary_status()["service"]
    digest = hashlib.sha256(uuid.uuid4().bytes).hexdigest()
    with pytest.raises(PaymentRequired):
        vrs.notarize("sha256", digest)
    key = str(uuid.uuid4())
    first = vrs.notarize("sha256", digest, metadata={"a": 1}, api_key=live.api_key, idempotency_key=key)
    again = vrs.notarize("sha256", digest, metadata={"a": 1}, api_key=live.api_key, idempotency_key=key)
    assert first.receipt_id == again.receipt_id and first.payload_hash == digest
    assert vrs.receipt(first.receipt_id).receipt_id == first.receipt_id


def test_the_async_client_does_the_same(live: Live) -> None:
    async def run() -> None:
        async with AsyncClient(live.url) as c:
            assert (await c.info()).version
            bet = await c.bet("sicbo", "big", instant=False)
            assert isinstance(bet, BetAccepted)
            game = await c.wait(bet.game_id, timeout=30)
            assert game.result is not None and len(game.result.dice) == 3
            assert (await c.verification(bet.game_id)) is not None
            with pytest.raises(BadRequest):
                await c.bet("sicbo", "combo", combo=[7, 9])
            assert len(await c.recent()) <= 20
            assert (await c.stats()).total_games >= 1

    asyncio.run(run())
