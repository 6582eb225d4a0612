"""Verifying a game without trusting the server: every step of docs/PROTOCOL.md §13 (epoch
games) or §14 (pool-served games) recomputed from the published data, the server's own
`verified` and `checks` ignored.

    from vrs_client.verify import verify
    report = verify("0123…", server="http://127.0.0.1:8080", group="rsa2048")
    assert report.verified, report.failed

The group is the verifier's choice (P§13): a proof is only worth something in a group whose
order nobody knows, so the caller names it (rsa2048 by default; classgroup-<bits> recomputes
each epoch's discriminant from its seed; test512 / test1024 / hex:<digits> for test servers).
With `acceptance` (the path of a saved bet response), the player's evidence steps come first;
with `rpc` (a JSON-RPC URL of the user's own node), the anchor transaction is read back on chain.
"""

from __future__ import annotations

import decimal
import json
from argparse import Namespace
from dataclasses import asdict, dataclass
from typing import Callable, Literal

from .protocol.encoding import StepFail, StepPend, UsageError
from .protocol.evidence import (
    Rpc,
    Saved,
    step_acceptance_in_tree,
    step_acceptance_signature,
    step_acceptance_stored,
    step_anchor_onchain,
)
from .protocol.groups import make_group
from .protocol.run import verify_game
from .protocol.source import Source
from .protocol.steps import Ctx

Status = Literal["ok", "FAIL", "pend"]


@dataclass(frozen=True)
class Step:
    """One step: `ok`, `FAIL` (with the reason) or `pend` (not decidable yet, not a failure:
    an anchor not yet confirmed, an epoch not yet resolved)."""

    name: str
    status: Status
    detail: str


@dataclass(frozen=True)
class Report:
    game_id: str
    steps: list[Step]

    @property
    def verified(self) -> bool:
        """No step failed."""
        return not self.failed

    @property
    def failed(self) -> list[str]:
        return [s.name for s in self.steps if s.status == "FAIL"]

    def to_json(self) -> str:
        return json.dumps(
            {"game_id": self.game_id, "verified": self.verified, "failed": self.failed,
             "steps": [asdict(s) for s in self.steps]},
            indent=2,
        )


class VerifyError(Exception):
    """The game could not be checked at all: unknown game, bad arguments, network error."""


def _run(name: str, fn: Callable[[], str]) -> Step:
    try:
        return Step(name, "ok", fn())
    except StepFail as e:
        return Step(name, "FAIL", str(e))
    except StepPend as e:
        return Step(name, "pend", str(e))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        return Step(name, "FAIL", f"malformed data: {type(e).__name__}: {e}")


def verify(
    game_id: str | None = None,
    *,
    server: str,
    group: str = "rsa2048",
    min_margin: str | float | None = None,
    wait: float = 30.0,
    strict_members: bool = False,
    acceptance: str | None = None,
    rpc: str | None = None,
) -> Report:
    """Verifies one game. `game_id` may be left out when `acceptance` names the saved response
    of the bet (the game id is then the signed leaf's). `min_margin` fails `timing` below that
    security margin (P§10). Raises VerifyError when the game cannot be checked at all."""
    try:
        return _verify(game_id, server, group, min_margin, wait, strict_members, acceptance, rpc)
    except UsageError as e:
        raise VerifyError(str(e)) from None


def _verify(game_id, server, group, min_margin, wait, strict_members, acceptance, rpc) -> Report:
    grp = make_group(group)
    args = Namespace(
        min_margin=None if min_margin is None else decimal.Decimal(str(min_margin)),
        wait=wait,
        strict_members=strict_members,
        verbose=False,
    )
    src = Source(server)
    steps: list[Step] = []
    saved = Saved.read(acceptance) if acceptance else None
    if saved is not None:
        if game_id is not None and game_id != saved.game_id:
            raise UsageError(f"game {game_id} given, but the saved acceptance signs game {saved.game_id}")
        game_id = saved.game_id
        steps.append(_run("acceptance_signature", lambda: step_acceptance_signature(saved, src)))
        status, body = src.get(f"/api/v1/verify/{game_id}")
        if status == 404:
            steps.append(Step("acceptance_stored", "FAIL",
                              f"the server has no game {game_id}: the bet signed as accepted into "
                              f"{saved.describe()} was removed"))
            return Report(game_id, steps)
        steps.append(_run("acceptance_stored", lambda: step_acceptance_stored(saved, body)))
    if game_id is None:
        raise UsageError("give a game id, or --acceptance FILE")
    results = verify_game(game_id, src, grp, args)
    steps += [Step(n, s, d) for n, s, d in results]
    status, body = src.get(f"/api/v1/verify/{game_id}")
    ctx = Ctx(game_id, src, grp, args, body) if status == 200 and isinstance(body, dict) \
        and isinstance(body.get("proof"), dict) else None
    if saved is not None:
        steps.append(_run("acceptance_in_tree", lambda: step_acceptance_in_tree(saved, ctx, src)))
    if rpc is not None and ctx is not None:
        node = Rpc(rpc)
        steps.append(_run("anchor_onchain", lambda: step_anchor_onchain(ctx, node)))
    return Report(game_id, steps)
