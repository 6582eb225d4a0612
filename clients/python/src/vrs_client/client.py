"""Sync and async clients for every public endpoint of the randomness API (/api/v1) and the
notary (/v1).

Both clients build the same requests and read the same answers (`_Call`); only the transport
differs (`httpx.Client` or `httpx.AsyncClient`). A status the endpoint documents as success
returns a typed object; any other raises an `ApiError` subclass carrying the server's status and
JSON body; a connection failure or a body that is not JSON raises `NetworkError`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Callable, Generic, Literal, TypeVar

import httpx

from .errors import NetworkError, Timeout, error_for
from .models import (
    BetAccepted,
    Catalog,
    Entropy,
    Epoch,
    Game,
    Health,
    InstantBet,
    Json,
    PoolBatch,
    Receipt,
    ServiceInfo,
    Stats,
    Verification,
)

T = TypeVar("T")
GameName = Literal["dice", "sicbo"]
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class _Call(Generic[T]):
    """One request and how to read its answer."""

    method: str
    path: str
    ok: tuple[int, ...]
    parse: Callable[[int, Json], T]
    body: Json | None = None
    headers: dict[str, str] | None = None


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError as e:
        raise NetworkError(
            f"{response.request.method} {response.request.url}: {response.status_code}, "
            f"and the body is not JSON: {response.text[:200]!r}"
        ) from e


def _finish(call: _Call[T], response: httpx.Response) -> T:
    body = _json(response)
    if response.status_code not in call.ok:
        raise error_for(response.status_code, body, call.method, str(response.request.url))
    if not isinstance(body, dict):
        raise NetworkError(f"{call.method} {call.path}: expected a JSON object, got {body!r:.200}")
    return call.parse(response.status_code, body)


def _bet_body(
    bet_type: str,
    amount: float | str | None,
    target: int | None,
    combo: list[int] | None,
    player_id: str | None,
    player_seed: str | None,
    operator_key: str | None,
    instant: bool | None,
) -> Json:
    body: Json = {"bet_type": bet_type}
    optional = {
        "amount": amount,
        "target": target,
        "combo": combo,
        "player_id": player_id,
        "player_seed": player_seed,
        "operator_key": operator_key,
        "instant": instant,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    return body


def _bet_answer(status: int, j: Json) -> BetAccepted | InstantBet:
    return InstantBet.from_json(j) if status == 200 else BetAccepted.from_json(j)


class _Calls:
    """The requests of every endpoint, shared by both clients."""

    @staticmethod
    def info() -> _Call[ServiceInfo]:
        return _Call("GET", "/", (200,), lambda _s, j: ServiceInfo.from_json(j))

    @staticmethod
    def health() -> _Call[Health]:
        return _Call("GET", "/health", (200, 503), lambda _s, j: Health.from_json(j))

    @staticmethod
    def entropy() -> _Call[Entropy | None]:
        return _Call(
            "GET",
            "/api/v1/entropy",
            (200, 202),
            lambda s, j: Entropy.from_json(j) if s == 200 else None,
        )

    @staticmethod
    def catalog() -> _Call[Catalog]:
        return _Call("GET", "/api/v1/games", (200,), lambda _s, j: Catalog.from_json(j))

    @staticmethod
    def bet(game: GameName, body: Json) -> _Call[BetAccepted | InstantBet]:
        if game not in ("dice", "sicbo"):
            raise ValueError(f"game must be dice or sicbo, not {game!r}")
        return _Call("POST", f"/api/v1/games/{game}/bet", (200, 202), _bet_answer, body)

    @staticmethod
    def rng(client_seed: str | None) -> _Call[BetAccepted]:
        body = {} if client_seed is None else {"client_seed": client_seed}
        return _Call(
            "POST", "/api/v1/rng/generate", (202,), lambda _s, j: BetAccepted.from_json(j), body
        )

    @staticmethod
    def game(game_id: str) -> _Call[Game]:
        return _Call("GET", f"/api/v1/games/{game_id}", (200, 202), lambda _s, j: Game.from_json(j))

    @staticmethod
    def verification(game_id: str) -> _Call[Verification | None]:
        return _Call(
            "GET",
            f"/api/v1/verify/{game_id}",
            (200, 202),
            lambda s, j: Verification.from_json(j) if s == 200 else None,
        )

    @staticmethod
    def stats() -> _Call[Stats]:
        return _Call("GET", "/api/v1/stats", (200,), lambda _s, j: Stats.from_json(j))

    @staticmethod
    def recent() -> _Call[list[Json]]:
        return _Call(
            "GET",
            "/api/v1/recent",
            (200,),
            lambda _s, j: [g for g in j.get("games", []) if isinstance(g, dict)],
        )

    @staticmethod
    def epoch(number: int) -> _Call[Epoch]:
        return _Call("GET", f"/api/v1/epochs/{number}", (200,), lambda _s, j: Epoch.from_json(j))

    @staticmethod
    def pool_batch(number: int) -> _Call[PoolBatch]:
        return _Call(
            "GET", f"/api/v1/pool/batches/{number}", (200,), lambda _s, j: PoolBatch.from_json(j)
        )

    @staticmethod
    def notarize(
        schema: str,
        payload_hash: str,
        metadata: Json | None,
        api_key: str | None,
        idempotency_key: str | None,
    ) -> _Call[Receipt]:
        body: Json = {"schema": schema, "payload_hash": payload_hash}
        if metadata is not None:
            body["metadata"] = metadata
        headers: dict[str, str] = {}
        if api_key is not None:
            headers["Authorization"] = f"Bearer {api_key}"
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        return _Call(
            "POST",
            "/v1/notarize",
            (200, 202),
            lambda _s, j: Receipt.from_json(j),
            body,
            headers,
        )

    @staticmethod
    def receipt(receipt_id: str) -> _Call[Receipt]:
        return _Call(
            "GET", f"/v1/notarize/{receipt_id}", (200,), lambda _s, j: Receipt.from_json(j)
        )

    @staticmethod
    def notary_schemas() -> _Call[Json]:
        return _Call("GET", "/v1/notarize/schemas", (200,), lambda _s, j: j)

    @staticmethod
    def notary_status() -> _Call[Json]:
        return _Call("GET", "/v1/notarize/status", (200,), lambda _s, j: j)


class Client:
    """Blocking client. `base_url` is the service (e.g. http://127.0.0.1:8080);
    `notary_url` the notary's base when it is served elsewhere (default: the same)."""

    def __init__(
        self,
        base_url: str,
        *,
        notary_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.notary_url = (notary_url or base_url).rstrip("/")
        self._http = httpx.Client(timeout=timeout, transport=transport)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _run(self, call: _Call[T]) -> T:
        base = self.notary_url if call.path.startswith("/v1/") else self.base_url
        try:
            response = self._http.request(
                call.method, base + call.path, json=call.body, headers=call.headers
            )
        except httpx.HTTPError as e:
            raise NetworkError(f"{call.method} {base}{call.path}: {e}") from e
        return _finish(call, response)

    def info(self) -> ServiceInfo:
        """GET /: service info (version, acceptance keys, anchoring)."""
        return self._run(_Calls.info())

    def health(self) -> Health:
        """GET /health."""
        return self._run(_Calls.health())

    def entropy(self) -> Entropy | None:
        """The latest resolved epoch's entropy; None while no epoch has resolved (202)."""
        return self._run(_Calls.entropy())

    def catalog(self) -> Catalog:
        """GET /api/v1/games: the games, their bet types and payouts."""
        return self._run(_Calls.catalog())

    def bet(
        self,
        game: GameName,
        bet_type: str,
        *,
        amount: float | str | None = None,
        target: int | None = None,
        combo: list[int] | None = None,
        player_id: str | None = None,
        player_seed: str | None = None,
        operator_key: str | None = None,
        instant: bool | None = None,
    ) -> BetAccepted | InstantBet:
        """Places a bet: BetAccepted (202, resolved by a coming epoch), or InstantBet (200,
        served from the pool, with `instant=True` or the operator's default)."""
        body = _bet_body(
            bet_type, amount, target, combo, player_id, player_seed, operator_key, instant
        )
        return self._run(_Calls.bet(game, body))

    def rng(self, client_seed: str | None = None) -> BetAccepted:
        """POST /api/v1/rng/generate: a raw random value, resolved by a coming epoch."""
        return self._run(_Calls.rng(client_seed))

    def game(self, game_id: str) -> Game:
        """A game's result, or its pending state."""
        return self._run(_Calls.game(game_id))

    def wait(self, game_id: str, *, timeout: float = 60.0, interval: float = 0.25) -> Game:
        """Polls the game until it is resolved; Timeout after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            game = self.game(game_id)
            if game.resolved:
                return game
            if time.monotonic() >= deadline:
                raise Timeout(f"game {game_id} still {game.status} after {timeout} s")
            time.sleep(interval)

    def verification(self, game_id: str) -> Verification | None:
        """GET /api/v1/verify/{id}: the published verification data; None while pending."""
        return self._run(_Calls.verification(game_id))

    def stats(self) -> Stats:
        return self._run(_Calls.stats())

    def recent(self) -> list[Json]:
        """The 20 most recent games."""
        return self._run(_Calls.recent())

    def epoch(self, number: int) -> Epoch:
        return self._run(_Calls.epoch(number))

    def pool_batch(self, number: int) -> PoolBatch:
        return self._run(_Calls.pool_batch(number))

    def notarize(
        self,
        schema: str,
        payload_hash: str,
        *,
        metadata: Json | None = None,
        api_key: str | None = None,
        idempotency_key: str | None = None,
    ) -> Receipt:
        """POST /v1/notarize with an API key (Bearer); `idempotency_key` makes a retry return
        the same receipt instead of a second charge."""
        return self._run(
            _Calls.notarize(schema, payload_hash, metadata, api_key, idempotency_key)
        )

    def receipt(self, receipt_id: str) -> Receipt:
        return self._run(_Calls.receipt(receipt_id))

    def notary_schemas(self) -> Json:
        return self._run(_Calls.notary_schemas())

    def notary_status(self) -> Json:
        return self._run(_Calls.notary_status())


class AsyncClient:
    """The same API as `Client`, awaitable."""

    def __init__(
        self,
        base_url: str,
        *,
        notary_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.notary_url = (notary_url or base_url).rstrip("/")
        self._http = httpx.AsyncClient(timeout=timeout, transport=transport)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _run(self, call: _Call[T]) -> T:
        base = self.notary_url if call.path.startswith("/v1/") else self.base_url
        try:
            response = await self._http.request(
                call.method, base + call.path, json=call.body, headers=call.headers
            )
        except httpx.HTTPError as e:
            raise NetworkError(f"{call.method} {base}{call.path}: {e}") from e
        return _finish(call, response)

    async def info(self) -> ServiceInfo:
        return await self._run(_Calls.info())

    async def health(self) -> Health:
        return await self._run(_Calls.health())

    async def entropy(self) -> Entropy | None:
        return await self._run(_Calls.entropy())

    async def catalog(self) -> Catalog:
        return await self._run(_Calls.catalog())

    async def bet(
        self,
        game: GameName,
        bet_type: str,
        *,
        amount: float | str | None = None,
        target: int | None = None,
        combo: list[int] | None = None,
        player_id: str | None = None,
        player_seed: str | None = None,
        operator_key: str | None = None,
        instant: bool | None = None,
    ) -> BetAccepted | InstantBet:
        body = _bet_body(
            bet_type, amount, target, combo, player_id, player_seed, operator_key, instant
        )
        return await self._run(_Calls.bet(game, body))

    async def rng(self, client_seed: str | None = None) -> BetAccepted:
        return await self._run(_Calls.rng(client_seed))

    async def game(self, game_id: str) -> Game:
        return await self._run(_Calls.game(game_id))

    async def wait(self, game_id: str, *, timeout: float = 60.0, interval: float = 0.25) -> Game:
        deadline = time.monotonic() + timeout
        while True:
            game = await self.game(game_id)
            if game.resolved:
                return game
            if time.monotonic() >= deadline:
                raise Timeout(f"game {game_id} still {game.status} after {timeout} s")
            await asyncio.sleep(interval)

    async def verification(self, game_id: str) -> Verification | None:
        return await self._run(_Calls.verification(game_id))

    async def stats(self) -> Stats:
        return await self._run(_Calls.stats())

    async def recent(self) -> list[Json]:
        return await self._run(_Calls.recent())

    async def epoch(self, number: int) -> Epoch:
        return await self._run(_Calls.epoch(number))

    async def pool_batch(self, number: int) -> PoolBatch:
        return await self._run(_Calls.pool_batch(number))

    async def notarize(
        self,
        schema: str,
        payload_hash: str,
        *,
        metadata: Json | None = None,
        api_key: str | None = None,
        idempotency_key: str | None = None,
    ) -> Receipt:
        return await self._run(
            _Calls.notarize(schema, payload_hash, metadata, api_key, idempotency_key)
        )

    async def receipt(self, receipt_id: str) -> Receipt:
        return await self._run(_Calls.receipt(receipt_id))

    async def notary_schemas(self) -> Json:
        return await self._run(_Calls.notary_schemas())

    async def notary_status(self) -> Json:
        return await self._run(_Calls.notary_status())
