"""Exceptions: every failure of a call is a VrsError, carrying what the server said."""

from __future__ import annotations

from typing import Any


class VrsError(Exception):
    """Base class of every error this package raises."""


class ApiError(VrsError):
    """The server answered with an error status: `status` and its JSON body (`body`, with the
    message in `message` when the body has an `error` member)."""

    def __init__(self, status: int, body: Any, method: str, url: str) -> None:
        self.status = status
        self.body = body
        self.method = method
        self.url = url
        message = body.get("error") if isinstance(body, dict) else None
        self.message: str = message if isinstance(message, str) else str(body)
        super().__init__(f"{method} {url}: {status}: {self.message}")


class BadRequest(ApiError):
    """400 or 422: the request was refused as invalid; `valid_bet_types` and `example` are
    filled for a bet the server refused."""

    @property
    def valid_bet_types(self) -> list[str]:
        v = self.body.get("valid_bet_types") if isinstance(self.body, dict) else None
        return [str(x) for x in v] if isinstance(v, list) else []

    @property
    def example(self) -> dict[str, Any] | None:
        v = self.body.get("example") if isinstance(self.body, dict) else None
        return v if isinstance(v, dict) else None


class NotFound(ApiError):
    """404: no such game, epoch, batch or receipt."""


class PaymentRequired(ApiError):
    """401, 402 or 403 from the notary: no valid API key, or a payment is required."""


class Conflict(ApiError):
    """409: for example an Idempotency-Key reused with another body."""


class ServerError(ApiError):
    """5xx: the server failed; the request may be retried."""


class NetworkError(VrsError):
    """The server could not be reached, or its answer was not JSON."""


class Timeout(VrsError):
    """A wait (for a result) ran past its deadline."""


def error_for(status: int, body: Any, method: str, url: str) -> ApiError:
    """The exception class for a status."""
    if status in (400, 413, 422):
        return BadRequest(status, body, method, url)
    if status == 404:
        return NotFound(status, body, method, url)
    if status in (401, 402, 403):
        return PaymentRequired(status, body, method, url)
    if status == 409:
        return Conflict(status, body, method, url)
    if status >= 500:
        return ServerError(status, body, method, url)
    return ApiError(status, body, method, url)
