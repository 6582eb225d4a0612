"""Running the steps for one game, in P§13's order (P§14's for a pool-served game)."""

from __future__ import annotations

import decimal
import re
import sys
import time

from .encoding import StepFail, StepPend, UsageError
from .source import Source
from .steps import Ctx, step_acceptance, step_anchor_inclusion, step_bet_leaf, step_bets_root, step_dice, step_epoch_chain, step_epoch_input, step_epoch_record, step_group, step_merkle_inclusion, step_moved, step_payout, step_pool_anchor, step_pool_batch_chain, step_pool_batch_seed, step_pool_bet_inclusion, step_pool_committed, step_pool_entry_input, step_pool_game_id, step_pool_inclusion, step_result_hash, step_rng_value, step_timing, step_vdf_proof, step_witnessed
from .members import step_members


# P§13's order; extras (`bets_root`, `result_hash`, `members`) after the documented steps.
EPOCH_STEPS = [("group", step_group), ("bet_leaf", step_bet_leaf), ("merkle_inclusion", step_merkle_inclusion),
               ("epoch_chain", step_epoch_chain), ("epoch_record", step_epoch_record),
               ("epoch_input", step_epoch_input), ("vdf_proof", step_vdf_proof), ("timing", step_timing),
               ("rng_value", step_rng_value), ("dice", step_dice), ("payout", step_payout),
               ("acceptance", step_acceptance), ("anchor_inclusion", step_anchor_inclusion),
               ("bets_root", step_bets_root), ("result_hash", step_result_hash), ("members", step_members)]
POOL_STEPS = [("group", step_group), ("bet_leaf", step_bet_leaf), ("pool_batch_chain", step_pool_batch_chain),
              ("pool_anchor", step_pool_anchor), ("pool_batch_seed", step_pool_batch_seed),
              ("pool_entry_input", step_pool_entry_input), ("vdf_proof", step_vdf_proof),
              ("pool_inclusion", step_pool_inclusion), ("pool_committed", step_pool_committed),
              ("pool_game_id", step_pool_game_id), ("pool_bet_inclusion", step_pool_bet_inclusion),
              ("rng_value", step_rng_value), ("dice", step_dice), ("payout", step_payout),
              ("acceptance", step_acceptance), ("anchor_inclusion", step_anchor_inclusion),
              ("result_hash", step_result_hash), ("members", step_members)]


def fetch_verification(src: Source, game_id: str, deadline: float):
    """GET /api/v1/verify/{id}: 200 once resolved; P§20.1: "While it is pending: 202 with status
    (pending), game_id, resolves_at_epoch and message"; "Unknown game: 404"."""
    while True:
        status, data = src.get(f"/api/v1/verify/{game_id}")
        if status == 404:
            raise UsageError(f"game {game_id} not found (404)")
        if status == 200 and isinstance(data, dict) and isinstance(data.get("proof"), dict):
            return data
        if status == 202 and time.time() < deadline:
            src.cache.clear()
            time.sleep(0.5)
            continue
        if status == 202 and isinstance(data, dict):
            return data
        raise UsageError(f"GET /api/v1/verify/{game_id}: HTTP {status}, no verification")


def steps_for(c: Ctx):
    """The steps of this game: with a witness policy (P§21), epoch games add `witnessed` after
    `timing`; pool-served games never do (their batches are not timed by the log yet).  A moved
    game (P§21 "Moved games") adds `moved` right after `merkle_inclusion`, with or without a policy."""
    if c.pool:
        return POOL_STEPS
    steps = list(EPOCH_STEPS)
    if c.moved:
        at = [n for n, _ in steps].index("merkle_inclusion") + 1
        steps[at:at] = [("moved", step_moved)]
    if getattr(c.args, "witness", None) is not None:
        at = [n for n, _ in steps].index("timing") + 1
        steps[at:at] = [("witnessed", step_witnessed)]
    return steps


def run_steps(c: Ctx):
    results = []
    for name, fn in steps_for(c):
        try:
            results.append((name, "ok", fn(c)))
        except StepFail as e:
            results.append((name, "FAIL", str(e)))
        except StepPend as e:
            results.append((name, "pend", str(e)))
        except UsageError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError,
                decimal.InvalidOperation) as e:
            results.append((name, "FAIL", f"malformed data: {type(e).__name__}: {e}"))
    return results


# `pend` that goes away by itself: a pool game's bet epoch not yet closed or resolved (P§13).
WAITABLE_PEND = {"pool_bet_inclusion"}


def verify_game(game_id: str, src: Source, group, args, live: bool = True):
    """Returns a list of (step, status, reason).  With `live`, a game still pending, or a pool
    game whose bet epoch has not resolved, is fetched again until --wait runs out."""
    if not re.fullmatch(r"[0-9a-f]{32}", game_id):  # P§20.1: "32 hex digits"; lowercase on output
        return [("game_id", "FAIL", "not 32 lowercase hex digits")]
    deadline = time.time() + (args.wait if live else 0)
    while True:
        resp = fetch_verification(src, game_id, deadline)
        if not isinstance(resp.get("proof"), dict):
            # Still pending once --wait ran out: not a pass (a CI run must not count it as one).
            return [("resolved", "FAIL", f"game still {resp.get('status')!r} after --wait {args.wait:g} s: "
                                         f"resolves at epoch {resp.get('resolves_at_epoch')!r}")]
        results = run_steps(Ctx(game_id, src, group, args, resp))
        waiting = any(s == "pend" and n in WAITABLE_PEND for n, s, _ in results)
        if not (live and waiting and time.time() < deadline) or any(s == "FAIL" for _, s, _ in results):
            return results
        src.cache.clear()
        time.sleep(0.5)


def print_results(game_id, results, out=sys.stdout):
    print(f"game {game_id}", file=out)
    for name, status, reason in results:
        print(f"  {status:<4} {name:<18} {reason}", file=out)
