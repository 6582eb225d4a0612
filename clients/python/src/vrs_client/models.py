"""Typed views of the server's answers.

Each class names the members a caller reads most, typed, and keeps the whole JSON object in
`raw`, so that nothing the server sent is lost (and a member added by a later server version is
still at hand). Field names follow the wire, except that camelCase becomes snake_case
(`rngValue` is `rng_value`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


@dataclass(frozen=True)
class Acceptance:
    """The server's signed acceptance of a bet (docs/PROTOCOL.md §11): the leaf it committed
    to, when, and its Ed25519 signature."""

    version: int
    kind: str
    epoch: int | None
    pool_index: int | None
    leaf: str
    leaf_hash: str
    accepted_at_ms: int
    public_key: str
    signature: str
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, j: Json) -> Acceptance:
        return cls(
            version=int(j.get("version", 0)),
            kind=str(j.get("kind", "")),
            epoch=_int(j.get("epoch")),
            pool_index=_int(j.get("pool_index")),
            leaf=str(j.get("leaf", "")),
            leaf_hash=str(j.get("leaf_hash", "")),
            accepted_at_ms=int(j.get("accepted_at_ms", 0)),
            public_key=str(j.get("public_key", "")),
            signature=str(j.get("signature", "")),
            raw=j,
        )


def _acceptance(j: Json) -> Acceptance | None:
    a = j.get("acceptance")
    return Acceptance.from_json(a) if isinstance(a, dict) else None


@dataclass(frozen=True)
class BetAccepted:
    """202 to a bet (or a raw RNG request: `request_id` set, `bet_id` empty): durable, resolved
    by epoch `resolves_at_epoch`."""

    game_id: str
    bet_id: str
    request_id: str | None
    resolves_at_epoch: int
    poll_url: str
    message: str
    acceptance: Acceptance | None
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, j: Json) -> BetAccepted:
        return cls(
            game_id=str(j.get("game_id", "")),
            bet_id=str(j.get("bet_id", "")),
            request_id=_str(j.get("request_id")),
            resolves_at_epoch=int(j.get("resolves_at_epoch", 0)),
            poll_url=str(j.get("poll_url", "")),
            message=str(j.get("message", "")),
            acceptance=_acceptance(j),
            raw=j,
        )


@dataclass(frozen=True)
class Outcome:
    """A game's result: the dice (`die1`, `die2`, `die3` on the wire; empty for a raw RNG
    request), the payout and whether it won."""

    rng_value: str
    dice: list[int]
    total: int | None
    won: bool | None
    payout: str | None
    bet_type: str | None
    amount: str | None
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, j: Json) -> Outcome:
        outcome = j.get("outcome")
        outcome = outcome if isinstance(outcome, dict) else {}
        dice = [outcome[f"die{i}"] for i in (1, 2, 3) if isinstance(outcome.get(f"die{i}"), int)]
        won = j.get("won")
        return cls(
            rng_value=str(j.get("rngValue", "")),
            dice=dice,
            total=_int(outcome.get("total")),
            won=won if isinstance(won, bool) else None,
            payout=_str(j.get("payout")),
            bet_type=_str(j.get("bet_type")),
            amount=_str(j.get("amount")),
            raw=j,
        )


@dataclass(frozen=True)
class InstantBet:
    """200 to a bet served from the precomputed pool: resolved at once."""

    game_id: str
    bet_id: str
    pool_index: int
    status: str
    result: Outcome
    acceptance: Acceptance | None
    verify_url: str
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, j: Json) -> InstantBet:
        result = j.get("result") if isinstance(j.get("result"), dict) else {}
        return cls(
            game_id=str(j.get("game_id", "")),
            bet_id=str(j.get("bet_id", "")),
            pool_index=int(j.get("pool_index", 0)),
            status=str(j.get("status", "")),
            result=Outcome.from_json(result if isinstance(result, dict) else {}),
            acceptance=_acceptance(j),
            verify_url=str(j.get("verify_url", "")),
            raw=j,
        )


@dataclass(frozen=True)
class Game:
    """GET /api/v1/games/{id}: `status` "resolved" with `result`, or "pending" with
    `resolves_at_epoch`."""

    game_id: str
    status: str
    result: Outcome | None
    resolves_at_epoch: int | None
    raw: Json = field(repr=False)

    @property
    def resolved(self) -> bool:
        return self.result is not None

    @classmethod
    def from_json(cls, j: Json) -> Game:
        result = j.get("result")
        return cls(
            game_id=str(j.get("game_id", "")),
            status=str(j.get("status", "")),
            result=Outcome.from_json(result) if isinstance(result, dict) else None,
            resolves_at_epoch=_int(j.get("resolves_at_epoch")),
            raw=j,
        )


@dataclass(frozen=True)
class Check:
    """One step of the server's own verification (`vrs_client.verify` recomputes them)."""

    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class Verification:
    """GET /api/v1/verify/{id}: the published data a verifier needs (`proof`), and the
    server's own verdict (`verified`, `checks`), which `vrs_client.verify` ignores."""

    game_id: str
    verified: bool
    checks: list[Check]
    proof: Json
    replay_steps: list[Json]
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, j: Json) -> Verification:
        checks = j.get("checks") if isinstance(j.get("checks"), list) else []
        steps = j.get("replay_steps")
        return cls(
            game_id=str(j.get("game_id", "")),
            verified=j.get("verified") is True,
            checks=[
                Check(str(c.get("name", "")), c.get("passed") is True, str(c.get("detail", "")))
                for c in checks or []
                if isinstance(c, dict)
            ],
            proof=j["proof"] if isinstance(j.get("proof"), dict) else {},
            replay_steps=[s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else [],
            raw=j,
        )


@dataclass(frozen=True)
class Entropy:
    """GET /api/v1/entropy: the latest resolved epoch's output, hashed."""

    entropy: str
    entropy_hash: str
    epoch: int
    timestamp: int
    veo_class: str
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, j: Json) -> Entropy:
        return cls(
            entropy=str(j.get("entropy", "")),
            entropy_hash=str(j.get("entropy_hash", "")),
            epoch=int(j.get("epoch", 0)),
            timestamp=int(j.get("timestamp", 0)),
            veo_class=str(j.get("veo_class", "")),
            raw=j,
        )


@dataclass(frozen=True)
class Epoch:
    """GET /api/v1/epochs/{n}: one epoch's record (input, output, proof, bets root, anchor)."""

    epoch: int
    status: str
    version: int | None
    iterations: int | None
    x: str | None
    y: str | None
    pi: str | None
    l: str | None  # noqa: E741 (the wire's name for the challenge prime)
    bets_root: str | None
    bet_count: int | None
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, j: Json) -> Epoch:
        return cls(
            epoch=int(j.get("epoch", 0)),
            status=str(j.get("status", "")),
            version=_int(j.get("version")),
            iterations=_int(j.get("iterations")),
            x=_str(j.get("x")),
            y=_str(j.get("y")),
            pi=_str(j.get("pi")),
            l=_str(j.get("l")),
            bets_root=_str(j.get("bets_root")),
            bet_count=_int(j.get("bet_count")),
            raw=j,
        )


@dataclass(frozen=True)
class PoolBatch:
    """GET /api/v1/pool/batches/{n}: a batch of precomputed outputs and its Merkle root."""

    number: int
    root: str
    previous_root: str
    first_index: int
    size: int
    anchor_epoch: int
    seed: str
    leaf_hashes: list[str]
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, j: Json) -> PoolBatch:
        leaves = j.get("leaf_hashes")
        return cls(
            number=int(j.get("number", 0)),
            root=str(j.get("root", "")),
            previous_root=str(j.get("previous_root", "")),
            first_index=int(j.get("first_index", 0)),
            size=int(j.get("size", 0)),
            anchor_epoch=int(j.get("anchor_epoch", 0)),
            seed=str(j.get("seed", "")),
            leaf_hashes=[str(h) for h in leaves] if isinstance(leaves, list) else [],
            raw=j,
        )


@dataclass(frozen=True)
class Receipt:
    """A notarization receipt (POST /v1/notarize's 202, or GET /v1/notarize/{id})."""

    receipt_id: str
    status: str
    schema: str
    payload_hash: str
    leaf_hash: str
    receipt_url: str
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, j: Json) -> Receipt:
        return cls(
            receipt_id=str(j.get("receipt_id", "")),
            status=str(j.get("status", "")),
            schema=str(j.get("schema", "")),
            payload_hash=str(j.get("payload_hash", "")),
            leaf_hash=str(j.get("leaf_hash", "")),
            receipt_url=str(j.get("receipt_url", "")),
            raw=j,
        )


@dataclass(frozen=True)
class AcceptanceKey:
    """An Ed25519 key the operator signs acceptances with, and since when (GET /)."""

    public_key: str
    since_ms: int | None


@dataclass(frozen=True)
class ServiceInfo:
    """GET /: the API version, the acceptance keys and the anchoring state."""

    version: str
    acceptance_keys: list[AcceptanceKey]
    anchoring: Json
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, j: Json) -> ServiceInfo:
        keys = j.get("acceptance_keys")
        return cls(
            version=str(j.get("version", "")),
            acceptance_keys=[
                AcceptanceKey(str(k.get("public_key", "")), _int(k.get("since_ms")))
                for k in keys or []
                if isinstance(k, dict)
            ]
            if isinstance(keys, list)
            else [],
            anchoring=j["anchoring"] if isinstance(j.get("anchoring"), dict) else {},
            raw=j,
        )


@dataclass(frozen=True)
class Health:
    """GET /health: `status` ok or degraded, and this replica's role."""

    status: str
    role: str
    database: str
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, j: Json) -> Health:
        return cls(
            status=str(j.get("status", "")),
            role=str(j.get("role", "")),
            database=str(j.get("database", "")),
            raw=j,
        )


@dataclass(frozen=True)
class CatalogEntry:
    """One game of GET /api/v1/games."""

    type: str
    name: str
    description: str
    bet_types: list[str]
    house_edge: str
    endpoint: str


@dataclass(frozen=True)
class Catalog:
    games: list[CatalogEntry]
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, j: Json) -> Catalog:
        games = j.get("games")
        return cls(
            games=[
                CatalogEntry(
                    type=str(g.get("type", "")),
                    name=str(g.get("name", "")),
                    description=str(g.get("description", "")),
                    bet_types=[str(t) for t in g.get("bet_types") or []],
                    house_edge=str(g.get("house_edge", "")),
                    endpoint=str(g.get("endpoint", "")),
                )
                for g in games or []
                if isinstance(g, dict)
            ]
            if isinstance(games, list)
            else [],
            raw=j,
        )


@dataclass(frozen=True)
class Stats:
    """GET /api/v1/stats: game counts, the current epoch, the pool and performance."""

    total_games: int
    resolved_games: int
    pending_games: int
    epoch: Json
    pool: Json
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, j: Json) -> Stats:
        return cls(
            total_games=int(j.get("total_games", 0)),
            resolved_games=int(j.get("resolved_games", 0)),
            pending_games=int(j.get("pending_games", 0)),
            epoch=j["epoch"] if isinstance(j.get("epoch"), dict) else {},
            pool=j["pool"] if isinstance(j.get("pool"), dict) else {},
            raw=j,
        )
