"""Client for the vrs verifiable randomness service.

    from vrs_client import Client
    with Client("http://127.0.0.1:8080") as vrs:
        bet = vrs.bet("dice", "over7", amount=1)
        game = vrs.wait(bet.game_id)
        print(game.result.dice, game.result.won)
"""

from typing import Any

# The names below load on first use (PEP 562), so that `vrs_client.protocol`, standard library
# only, imports without httpx (tools/docs-verifier runs it with a bare python3).
_EXPORTS = {
    "AsyncClient": "client",
    "Client": "client",
    "ApiError": "errors",
    "BadRequest": "errors",
    "Conflict": "errors",
    "NetworkError": "errors",
    "NotFound": "errors",
    "PaymentRequired": "errors",
    "ServerError": "errors",
    "Timeout": "errors",
    "VrsError": "errors",
    "Acceptance": "models",
    "AcceptanceKey": "models",
    "Catalog": "models",
    "CatalogEntry": "models",
    "Health": "models",
    "ServiceInfo": "models",
    "Stats": "models",
    "BetAccepted": "models",
    "Check": "models",
    "Entropy": "models",
    "Epoch": "models",
    "Game": "models",
    "InstantBet": "models",
    "Outcome": "models",
    "PoolBatch": "models",
    "Receipt": "models",
    "Verification": "models",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'vrs_client' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{module}", __name__), name)


__all__ = [
    "Acceptance",
    "AcceptanceKey",
    "Catalog",
    "CatalogEntry",
    "Health",
    "ServiceInfo",
    "Stats",
    "ApiError",
    "AsyncClient",
    "BadRequest",
    "BetAccepted",
    "Check",
    "Client",
    "Conflict",
    "Entropy",
    "Epoch",
    "Game",
    "InstantBet",
    "NetworkError",
    "NotFound",
    "Outcome",
    "PaymentRequired",
    "PoolBatch",
    "Receipt",
    "ServerError",
    "Timeout",
    "Verification",
    "VrsError",
]
