"""P§21 "Moved games: the `moved` step", pure (no I/O).  A game accepted into a void epoch e whose
games a chain of move entries (P§21 "Entries": `vrs/log/move` = u64(e) ‖ u64(d) ‖ bets_root_e[32]
‖ u64(bet_count_e)) sends on is verified as a game of the last destination D (`vdfEpoch`): its
leaf stays in e's tree, which the first move repeats; each move is logged before D's commitment;
and, under the verifier's witness policy, each move is in checkpoints its quorum cosigned (at any
time: a move carries no stamp).
"""

from __future__ import annotations

from dataclasses import dataclass

from .encoding import StepFail, need, unhex
from .witnessed import (KIND_OF, U64_MAX, CommitmentEntry, MoveEntry, Policy, _logged, decode_entry, evidence_of,
                        prove_all)


def is_moved(proof: dict) -> bool:
    """P§21 "Moved games": a proof with `moved_from` or a non-empty `log.moves` is a moved game's;
    one with neither (absent, null or empty) an ordinary epoch game's, with no `moved` step."""
    if proof.get("moved_from") is not None:
        return True
    log = proof.get("log")
    moves = log.get("moves") if isinstance(log, dict) else None
    return moves is not None and moves != []


def _u64(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= U64_MAX


def _move_lists(proof: dict) -> list:
    """`log.moves` as served, or [] when absent (null reads as absent)."""
    log = proof.get("log")
    moves = log.get("moves") if isinstance(log, dict) else None
    return [] if moves is None else moves


@dataclass(frozen=True)
class Move:
    entry: MoveEntry
    index: int  # its index in the log
    logged: list  # its LoggedEntry list, as served


def _decode_list(i: int, logged) -> Move:
    """Item 2 for one element of `log.moves`: a non-empty list of LoggedEntrys sharing one index
    and one entry, which decodes as a move entry."""
    need(isinstance(logged, list) and logged, f"log.moves[{i}] is not a non-empty list of logged entries")
    try:
        first = _logged(logged[0])
        for v in logged[1:]:
            v = _logged(v)
            need(v["index"] == first["index"] and v["entry"] == first["entry"],
                 f"its checkpoints name different entries ({first['index']} and {v['index']})")
    except StepFail as e:
        raise StepFail(f"log.moves[{i}]: {e}") from None
    idx = first["index"]
    try:
        entry = decode_entry(unhex(first["entry"], None, "the entry"))
    except StepFail as e:
        raise StepFail(f"log.moves[{i}] (entry {idx}): {e}") from None
    need(isinstance(entry, MoveEntry), f"log.moves[{i}] is entry {idx}, a {KIND_OF[type(entry)]}, not a move")
    return Move(entry, idx, logged)


def first_move(proof: dict) -> MoveEntry:
    """The first move entry, from the bytes of `entry` of the first LoggedEntry of `log.moves[0]`:
    its e, bets_root_e and bet_count_e are the game's tree (`merkle_inclusion`) and what
    `replay_steps[bet_committed]` shows."""
    moves = _move_lists(proof)
    need(isinstance(moves, list), "log.moves is not an array")
    need(moves != [], "the proof names no move")
    return _decode_list(0, moves[0]).entry


def check_moved(proof: dict, policy: Policy | None) -> str:
    """The step `moved`, items 1-4 of P§21 "Moved games" (item 4 only under a policy): its `ok`
    detail, naming the chain, or StepFail."""
    # 1. moved_from an integer, log.moves a non-empty array.
    moved_from = proof.get("moved_from")
    moves = _move_lists(proof)
    need(isinstance(moves, list), "log.moves is not an array")
    need(moves != [], "the proof names no move")
    need(_u64(moved_from), "the proof shows moves but names no epoch they move from"
         + ("" if moved_from is None else f" (moved_from {moved_from!r:.30} is not an integer)"))
    D = proof.get("vdfEpoch")
    need(_u64(D), "vdfEpoch is missing or not a u64")
    log = evidence_of(proof)  # the shape of the other lists (plan, commitment, …)
    need(log is not None, "the proof has no log")
    # 2. Each list: one index, one entry, a move (e_i, d_i).
    chain = [_decode_list(i, logged) for i, logged in enumerate(moves)]
    # 3. The chain from moved_from to vdfEpoch, in log order, before D's commitment.
    first = chain[0].entry
    need(first.epoch == moved_from, f"the first move (entry {chain[0].index}) is epoch {first.epoch}'s, but the "
                                    f"game was accepted into epoch {moved_from} (moved_from)")
    for a, b in zip(chain, chain[1:]):
        need(a.entry.to == b.entry.epoch,
             f"the chain is broken: the move of epoch {a.entry.epoch} (entry {a.index}) sends its games to epoch "
             f"{a.entry.to}, but the next move (entry {b.index}) is epoch {b.entry.epoch}'s")
        need(a.index < b.index, f"the move of epoch {b.entry.epoch} (entry {b.index}) is not logged after the move "
                                f"of epoch {a.entry.epoch} (entry {a.index})")
    last = chain[-1]
    need(last.entry.to == D, f"the moves end at epoch {last.entry.to}, not at epoch {D} (vdfEpoch), whose outcome "
                             "the proof shows")
    commitment = log["commitment"]
    need(commitment, f"epoch {D}'s commitment is not in the proof's log: nothing shows the games were sent to "
                     f"epoch {D} before it was fixed")
    c_index = commitment[0]["index"]
    other = next((v for v in commitment if v["index"] != c_index or v["entry"] != commitment[0]["entry"]), None)
    need(other is None, f"the commitment's checkpoints name different entries ({c_index} and "
                        f"{other['index'] if other else ''})")
    # "D's commitment": its index is D's only if its bytes are (under a policy `witnessed` proves them).
    try:
        c_entry = decode_entry(unhex(commitment[0]["entry"], None, "the entry"))
    except StepFail as e:
        raise StepFail(f"log.commitment (entry {c_index}): {e}") from None
    need(isinstance(c_entry, CommitmentEntry) and c_entry.epoch == D,
         f"log.commitment is entry {c_index}, "
         + (f"epoch {c_entry.epoch}'s commitment" if isinstance(c_entry, CommitmentEntry)
            else f"a {KIND_OF[type(c_entry)]}") + f", not epoch {D}'s commitment")
    # One log: every move in checkpoints of the origin D's commitment is shown in (a policy may
    # name several logs, and the witnesses' rule 9 holds within each).
    def origin_of(v) -> str | None:
        cp = v.get("checkpoint") if isinstance(v, dict) else None
        return cp.split("\n", 1)[0] if isinstance(cp, str) else None
    origin = origin_of(commitment[0])
    for m in chain:
        for v in m.logged:
            need(origin_of(v) == origin, f"entry {m.index} is shown in a checkpoint of another log than epoch {D}'s "
                                         f"commitment ({origin})")
    need(last.index < c_index,
         f"the move of epoch {last.entry.epoch} (entry {last.index}) is not logged before epoch {D}'s commitment "
         f"(entry {c_index}): the games were not sent to epoch {D} while it was open")
    # 4. Under a policy: every LoggedEntry proven, and each move cosigned by a quorum (at any time).
    whose = []
    for m in chain:
        if policy is None:
            whose.append("")
            continue
        entry, _, times = prove_all(f"move of epoch {m.entry.epoch}", m.logged, policy)
        need(entry == m.entry, f"the move of epoch {m.entry.epoch}: the proven entry differs")  # same bytes
        got = sorted(w.name for w in policy.witnesses if (w.key.name, w.key.key_id) in times)
        need(policy.satisfied_by(set(got)),
             f"the move of epoch {m.entry.epoch} (entry {m.index}) is cosigned by [{', '.join(got)}], short of the "
             f"quorum {policy.describe()}")
        whose.append(f", cosigned by [{', '.join(got)}]")
    detail = "; ".join(f"epoch {m.entry.epoch} is void: its games moved to epoch {m.entry.to} (entry {m.index}){w}"
                       for m, w in zip(chain, whose))
    detail += f"; before epoch {D}'s commitment (entry {c_index})"
    if policy is None:
        detail += " (unchecked against a witness policy: the log's word)"
    return detail
