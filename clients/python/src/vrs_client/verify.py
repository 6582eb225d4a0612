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
with `rpc` (a JSON-RPC URL of the user's own node), the anchor transaction is read back on chain;
with `witness_policy` (the path of a C2SP tlog-policy file naming the user's own witnesses), an
epoch game's plan and commitment must be in the operator's log, cosigned in time (`witnessed`,
P§21), and without one the report's `notes` say that this is trusted.
"""

from __future__ import annotations

import decimal
import http.client
import json
import re
from argparse import Namespace
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Literal

from .protocol.encoding import StepFail, StepPend, UsageError
from .protocol.evidence import (
    Rpc,
    Saved,
    step_acceptance_in_tree,
    tree_epoch,
    step_acceptance_signature,
    step_acceptance_stored,
    step_anchor_onchain,
)
from .protocol.groups import make_group
from .protocol.run import verify_game
from .protocol.source import Source
from .protocol.steps import Ctx
from .protocol.witnessed import DELTA_MS, UNCHECKED_NOTE, Policy, WitnessFloor, default_max_rate, policy_notes

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
    """`notes`: what the steps did not check and the verifier therefore trusts (without a
    --witness-policy, that an epoch game's epoch was not withheld, P§21); not failures."""

    game_id: str
    steps: list[Step]
    notes: list[str] = field(default_factory=list)

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
             "steps": [asdict(s) for s in self.steps], "notes": list(self.notes)},
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
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError,
            decimal.InvalidOperation) as e:
        return Step(name, "FAIL", f"malformed data: {type(e).__name__}: {e}")


ANCHOR_STEPS = {"anchor_inclusion", "anchor_onchain"}


def verify(
    game_id: str | None = None,
    *,
    server: str,
    group: str = "rsa2048",
    min_margin: str | float | None = None,
    min_rate: str | int | None = None,
    wait: float = 30.0,
    strict_members: bool = False,
    acceptance: str | None = None,
    rpc: str | None = None,
    require_anchor: bool = False,
    witness_policy: str | None = None,
    max_rate: str | int | None = None,
    delta_ms: str | int = DELTA_MS,
    allow_version_1: bool = False,
) -> Report:
    """Verifies one game. `game_id` may be left out when `acceptance` names the saved response
    of the bet (the game id is then the signed leaf's). `min_margin` fails `timing` below that
    security margin, `min_rate` below that declared squaring rate (squarings per second: an
    understated rate stretches the window, P§10 "Whose numbers"); either also fails version-1
    epochs. Version-1 epochs fail `timing` unless `allow_version_1` (they make no timing
    commitment, P§10 "Version 1"). `require_anchor` fails an anchor that is still pending. `witness_policy` (a file
    path) adds `witnessed` to epoch games, judged with `max_rate` S (squarings per second, the
    verifier's bound on the fastest squarer; default 9e6 for RSA groups, 1e6 for class groups)
    and `delta_ms` δ (the verifier's clock tolerance, default 2000). Raises
    VerifyError when the game cannot be checked at all (unknown game without a saved
    acceptance, bad arguments, a server or node that cannot be asked)."""
    try:
        margin = None if min_margin is None else decimal.Decimal(str(min_margin))
    except decimal.InvalidOperation:
        raise VerifyError(f"--min-margin {min_margin!r} is not a number") from None
    rate = None if min_rate is None else _rate(min_rate)
    witness = _witness_floor(witness_policy, max_rate, delta_ms, group)
    try:
        report = _verify(game_id, server, group, margin, rate, wait, strict_members, acceptance, rpc, witness,
                         allow_version_1)
    except (UsageError, ValueError, http.client.HTTPException) as e:
        raise VerifyError(str(e)) from None
    if require_anchor:
        report = replace(report, steps=[
            Step(s.name, "FAIL", f"{s.detail} (--require-anchor)")
            if s.status == "pend" and s.name in ANCHOR_STEPS else s
            for s in report.steps
        ])
    return report


def _rate(value: str | int, flag: str = "--min-rate") -> int:
    """`--min-rate` (or `--max-rate`): a whole number of squarings per second, at least 1
    (`2000000` or `2e6`)."""
    refuse = VerifyError(f"{flag} {value!r} is not a rate: give squarings per second, such as 2000000 or 2e6")
    try:
        d = decimal.Decimal(str(value))
    except decimal.InvalidOperation:
        raise refuse from None
    if not d.is_finite() or d < 1 or d != d.to_integral_value():
        raise refuse
    return int(d)


def _witness_floor(path: str | None, max_rate, delta_ms, group: str) -> WitnessFloor | None:
    """The verifier's witnesses, S and δ (P§21); None without a policy (S and δ are still checked,
    as `vrs verify` parses its flags whether or not a policy is given)."""
    s = None if max_rate is None else _rate(max_rate, "--max-rate")
    if isinstance(delta_ms, bool) or not re.fullmatch(r"[0-9]+", str(delta_ms)):
        raise VerifyError(f"--delta-ms {delta_ms!r} is not a whole number of milliseconds")
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            policy = Policy.parse(f.read())
    except (OSError, UnicodeDecodeError, StepFail) as e:
        raise VerifyError(f"--witness-policy {path}: {e}") from None
    if not policy.logs:
        raise VerifyError(f"--witness-policy {path}: it names no log (a `log <vkey>` line)")
    return WitnessFloor(policy, default_max_rate(group) if s is None else s, int(delta_ms))


def _verify(game_id, server, group, margin, rate, wait, strict_members, acceptance, rpc, witness,
            allow_version_1=False) -> Report:
    grp = make_group(group)
    args = Namespace(min_margin=margin, min_rate=rate, wait=wait, strict_members=strict_members, verbose=False,
                     witness=witness, allow_version_1=allow_version_1)
    src = Source(server)
    report = _verify_steps(game_id, src, grp, args, acceptance, rpc)
    return replace(report, notes=_notes(src, report.game_id, witness))


def _notes(src: Source, game_id: str, witness: WitnessFloor | None) -> list[str]:
    """Without a policy, an epoch game's report says that `witnessed` was not run (P§21, "Without
    witnesses"); a pool-served game, or one not resolved, gets no note. With one, a note when two
    disjoint sets of its witnesses meet its quorum. Reads the verification already fetched (the
    cache), never the server again."""
    status, body = src.cache.get(f"/api/v1/verify/{game_id}", (None, None))
    proof = body.get("proof") if status == 200 and isinstance(body, dict) else None
    if witness is not None:
        return policy_notes(witness)
    if not isinstance(proof, dict) or proof.get("pool_served") is True:
        return []
    return [UNCHECKED_NOTE]


def _verify_steps(game_id, src: Source, grp, args: Namespace, acceptance, rpc) -> Report:
    saved = Saved.read(acceptance) if acceptance else None
    if saved is None:
        if game_id is None:
            raise UsageError("give a game id, or --acceptance FILE")
        return _with_rpc(Report(game_id, _steps(verify_game(game_id, src, grp, args))), src, grp, args, rpc)
    if game_id is not None and game_id != saved.game_id:
        raise UsageError(f"game {game_id} given, but the saved acceptance signs game {saved.game_id}")
    game_id = saved.game_id
    path = f"/api/v1/verify/{game_id}"
    steps = [_run("acceptance_signature", lambda: step_acceptance_signature(saved, src))]
    # Only a context for epochs (the source and the group): the game itself may be gone.
    epochs = Ctx(game_id, src, grp, args, {"proof": {}})
    status, body = src.get(path)
    if status == 404:
        steps.append(Step("acceptance_stored", "FAIL", f"the server has no game {game_id}: the bet "
                                                       f"signed as accepted into {saved.describe()} was removed"))
        e = tree_epoch(saved, None)
        if e is not None:
            steps.append(_run("acceptance_in_tree", lambda: step_acceptance_in_tree(saved, e, epochs)))
        return Report(game_id, steps)
    if status not in (200, 202) or not isinstance(body, dict):
        raise UsageError(f"GET {path}: HTTP {status}, {'no JSON object' if not isinstance(body, dict) else ''}")
    results = verify_game(game_id, src, grp, args)
    status, body = src.get(path)  # the final answer, after any --wait
    if not isinstance(body, dict):
        raise UsageError(f"GET {path}: HTTP {status}, no JSON object")
    steps.append(_run("acceptance_stored", lambda: step_acceptance_stored(saved, body)))
    proof = body.get("proof") if isinstance(body.get("proof"), dict) else None
    e = tree_epoch(saved, proof)
    if e is not None:
        steps.append(_run("acceptance_in_tree", lambda: step_acceptance_in_tree(saved, e, epochs)))
    if proof is None:
        # Still pending after --wait: the acceptance steps above say what can be said (pend);
        # no game steps yet.
        return Report(game_id, steps)
    return _with_rpc(Report(game_id, steps + _steps(results)), src, grp, args, rpc)


def _steps(results: list[tuple[str, str, str]]) -> list[Step]:
    return [Step(n, s, d) for n, s, d in results]  # type: ignore[arg-type]


def _with_rpc(report: Report, src: Source, grp, args: Namespace, rpc: str | None) -> Report:
    """Adds `anchor_onchain` when a node was given and the game is resolved."""
    if rpc is None:
        return report
    status, body = src.get(f"/api/v1/verify/{report.game_id}")
    if status != 200 or not isinstance(body, dict) or not isinstance(body.get("proof"), dict):
        return report
    ctx = Ctx(report.game_id, src, grp, args, body)
    node = Rpc(rpc)
    return Report(report.game_id, report.steps + [_run("anchor_onchain", lambda: step_anchor_onchain(ctx, node))])
