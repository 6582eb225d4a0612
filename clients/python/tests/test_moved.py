"""Moved games (docs/PROTOCOL.md §21, "Moved games: the `moved` step"), offline: a synthetic log
(an operator key, three witnesses, entries with the plan and commitment of the last destination D
and the move entries that send a void epoch's games to it, checkpoints signed and cosigned here),
a game of e's tree whose proof is D's, and the steps that change for it: `moved`,
`merkle_inclusion`, `acceptance`, `timing`'s window, `bets_root`, `members` and the saved
acceptance's `acceptance_stored`. No server needed."""

from __future__ import annotations

import base64
import copy
import dataclasses
import decimal
import hashlib
from argparse import Namespace

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from vrs_client.protocol.encoding import StepFail
from vrs_client.protocol.evidence import Saved, step_acceptance_stored
from vrs_client.protocol.groups import make_group
from vrs_client.protocol.members import step_members
from vrs_client.protocol.merkle import leaf_hash, mth
from vrs_client.protocol.moved import check_moved, first_move, is_moved
from vrs_client.protocol.run import steps_for
from vrs_client.protocol.source import Source
from vrs_client.protocol.steps import (
    Ctx,
    acceptance_message,
    step_acceptance,
    step_bets_root,
    step_merkle_inclusion,
    step_moved,
    step_timing,
)
from vrs_client.protocol.witnessed import (
    ALG_COSIGNATURE_V1,
    ALG_ED25519,
    ENTRY_LAYOUTS,
    CommitmentEntry,
    MoveEntry,
    OperatorEntry,
    PlanEntry,
    Policy,
    VoidEntry,
    WitnessFloor,
    cosigned_message,
    decode_entry,
    key_id,
)

ORIGIN = "vrs.test/log"
GAME = "ab" * 16
E, D = 7, 8  # the void epoch the game was accepted into, and where its games went


# --- Keys, entries, the tree, checkpoints -------------------------------------------------------

def _key(n: int) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"test key %d" % n).digest())


def _pub(k: Ed25519PrivateKey) -> bytes:
    return k.public_key().public_bytes_raw()


LOG_KEY = _key(0)
WITNESSES = {f"W{i}": _key(i + 1) for i in range(3)}
STRANGER = _key(9)


def _vkey(name: str, alg: int, k: Ed25519PrivateKey) -> str:
    return f"{name}+{key_id(name, alg, _pub(k)):08x}+{base64.b64encode(bytes([alg]) + _pub(k)).decode()}"


POLICY = Policy.parse(f"log {_vkey(ORIGIN, ALG_ED25519, LOG_KEY)}\n"
                      + "".join(f"witness {n} {_vkey(n, ALG_COSIGNATURE_V1, k)}\n" for n, k in WITNESSES.items())
                      + "group two 2 W0 W1 W2\nquorum two\n")
FLOOR = WitnessFloor(POLICY, 9_000_000, 2_000)


def encode(entry) -> bytes:
    """An entry's bytes (P§21 "Entries"), from its kind's layout: the inverse of decode_entry."""
    tag, (_, layout) = next((t, v) for t, v in ENTRY_LAYOUTS.items() if v[0] is type(entry))
    out = bytes([len(tag)]) + tag.encode()
    for f, v in zip(layout, dataclasses.astuple(entry)):
        if f == "str":
            out += len(v.encode()).to_bytes(2, "big") + v.encode()
        elif f[0] == "u":
            out += v.to_bytes(int(f[1:]) // 8, "big")
        else:
            assert len(v) == int(f[1:])
            out += v
    assert decode_entry(out) == entry
    return out


def audit_path(hashes: list[bytes], m: int) -> list[bytes]:
    """RFC 6962 PATH(m, D[n]), leaf to root."""
    n = len(hashes)
    if n <= 1:
        return []
    k = 1
    while k * 2 < n:
        k *= 2
    if m < k:
        return audit_path(hashes[:k], m) + [mth(hashes[k:])]
    return audit_path(hashes[k:], m - k) + [mth(hashes[:k])]


def _line(name: str, kid: int, sig: bytes) -> str:
    return f"\u2014 {name} {base64.b64encode(kid.to_bytes(4, 'big') + sig).decode()}\n"


class Log:
    """The operator's log: its entries, and LoggedEntrys of them in checkpoints of a chosen size
    cosigned by chosen witnesses at chosen seconds."""

    def __init__(self) -> None:
        self.entries: list[bytes] = []

    def append(self, entry) -> int:
        self.entries.append(encode(entry))
        return len(self.entries) - 1

    def logged(self, index: int, cosigners: dict[str, int], size: int | None = None) -> dict:
        size = len(self.entries) if size is None else size
        hashes = [leaf_hash(e) for e in self.entries[:size]]
        text = f"{ORIGIN}\n{size}\n{base64.b64encode(mth(hashes)).decode()}\n".encode()
        note = text.decode() + "\n" + _line(ORIGIN, key_id(ORIGIN, ALG_ED25519, _pub(LOG_KEY)), LOG_KEY.sign(text))
        for name, t in cosigners.items():
            k = WITNESSES.get(name, STRANGER)
            sig = t.to_bytes(8, "big") + k.sign(cosigned_message(text, t))
            note += _line(name, key_id(name, ALG_COSIGNATURE_V1, _pub(k)), sig)
        return {"index": index, "entry": self.entries[index].hex(), "checkpoint": note,
                "proof": [base64.b64encode(h).decode() for h in audit_path(hashes, index)]}


# --- The game: a leaf of e's tree, its proof D's ----------------------------------------------

BETS_E = [b"bet of epoch 7: %d" % i for i in range(3)]
LEAF_INDEX = 1
TREE_E = [leaf_hash(b) for b in BETS_E]
BETS_D = [b"bet of epoch %d: %d" % (D, i) for i in range(2)]
TREE_D = [leaf_hash(b) for b in BETS_D]
T_D = 1_000_000
OPENED_D, CLOSED_D = 1_000_000, 1_100_000
ACCEPTED = 950_000  # in e's window, before D opened
ACCEPTANCE_KEY = _key(20)


def _plan(e: int) -> PlanEntry:
    return PlanEntry(e, 0, T_D, 150, 1000, OPENED_D, OPENED_D + 600_000)


def _commitment(e: int) -> CommitmentEntry:
    return CommitmentEntry(e, 0, mth(TREE_D), len(TREE_D), b"\x01" * 32, T_D, 150, 1000, OPENED_D, CLOSED_D)


def _move(e: int, d: int) -> MoveEntry:
    return MoveEntry(e, d, mth(TREE_E), len(TREE_E))


def scenario(chain: tuple[int, ...] = (E, D)) -> tuple[Log, dict, list[int]]:
    """A log whose games of chain[0] move down `chain` to its last epoch, logged before the last
    epoch's commitment; each move in two checkpoints (W0's at its own size, W1's at the full size),
    and the proof a game of chain[0] shows (its leaf in e's tree, everything else the last's)."""
    log = Log()
    log.append(OperatorEntry(1, "test512", bytes(32), 0, bytes(20)))
    move_at = []
    log.append(_plan(chain[0]))
    for e, d in zip(chain, chain[1:]):
        log.append(VoidEntry(e, 2))
        plan_at = log.append(_plan(d))
        move_at.append(log.append(_move(e, d)))
    last = chain[-1]
    c_at = log.append(_commitment(last))
    log.append(VoidEntry(99, 3))  # one more, so that no entry is the last leaf of the full tree
    moves = [[log.logged(i, {"W0": 100 + i}, size=i + 1), log.logged(i, {"W1": 200 + i, "W2x": 5})]
             for i in move_at]
    lh = TREE_E[LEAF_INDEX]
    proof = {
        "vdfEpoch": last, "moved_from": chain[0],
        "leaf": BETS_E[LEAF_INDEX].hex(), "leaf_hash": lh.hex(), "leaf_index": LEAF_INDEX,
        "audit_path": [h.hex() for h in audit_path(TREE_E, LEAF_INDEX)],
        "bets_root": mth(TREE_D).hex(), "bet_count": len(TREE_D), "iterations": T_D,
        "bet_created_at_ms": ACCEPTED,
        "timing": {"version": 2, "previous_epoch": 0, "nonce": "01" * 32, "security_margin": decimal.Decimal("1.5"),
                   "squarings_per_second": 1000, "opened_at_ms": OPENED_D, "closed_at_ms": CLOSED_D,
                   "deadline_ms": OPENED_D + 600_000},
        "log": {"origin": ORIGIN, "plan": [log.logged(plan_at, {"W0": 1, "W1": 1})],
                "commitment": [log.logged(c_at, {"W0": 2, "W1": 2})], "previous_output": [], "operator": [],
                "moves": moves},
    }
    return log, proof, move_at


def ordinary(proof: dict) -> dict:
    """The same proof as an ordinary epoch game's: no moved_from, no moves."""
    p = copy.deepcopy(proof)
    del p["moved_from"]
    del p["log"]["moves"]
    return p


def _ctx(proof: dict, witness=None, cache=None, resp=None) -> Ctx:
    args = Namespace(min_margin=None, min_rate=None, wait=0, strict_members=False, verbose=False, witness=witness)
    return Ctx(GAME, Source(None, cache or {}), make_group("test512"), args, resp or {"proof": proof})


def _fails(fn, *args) -> str:
    with pytest.raises(StepFail) as e:
        fn(*args)
    return str(e.value)


# --- `moved` ------------------------------------------------------------------------------------

def test_a_valid_move_passes_moved_and_names_the_chain() -> None:
    _, proof, at = scenario()
    detail = step_moved(_ctx(proof, FLOOR))
    assert detail == (f"epoch 7 is void: its games moved to epoch 8 (entry {at[0]}), cosigned by [W0, W1]; "
                      f"before epoch 8's commitment (entry {at[0] + 1})")
    # A stranger's line under a name the policy does not know is ignored, not counted.
    assert "W2x" not in detail


def test_a_chain_of_moves_passes() -> None:
    _, proof, at = scenario((6, 7, 9))
    detail = check_moved(proof, POLICY)
    assert detail.startswith(f"epoch 6 is void: its games moved to epoch 7 (entry {at[0]}), cosigned by [W0, W1]; "
                             f"epoch 7 is void: its games moved to epoch 9 (entry {at[1]}), cosigned by [W0, W1]; "
                             "before epoch 9's commitment")


def test_without_a_policy_only_the_entries_bytes_are_checked() -> None:
    _, proof, at = scenario()
    assert step_moved(_ctx(proof, None)) == (
        f"epoch 7 is void: its games moved to epoch 8 (entry {at[0]}); before epoch 8's commitment "
        f"(entry {at[0] + 1}) (unchecked against a witness policy: the log's word)")
    # Short of the quorum, or a tampered audit path: item 4 is not applied without a policy…
    short = copy.deepcopy(proof)
    short["log"]["moves"][0] = short["log"]["moves"][0][:1]
    tampered = copy.deepcopy(proof)
    tampered["log"]["moves"][0][1]["proof"].reverse()  # the full tree's path: three hashes
    for p in (short, tampered):
        assert check_moved(p, None).startswith("epoch 7 is void")
    # … and it is with one.
    assert "short of the quorum 2 of (W0, W1, W2)" in _fails(check_moved, short, POLICY)
    assert "invalid transparency proof" in _fails(check_moved, tampered, POLICY)


def _alter_move(proof: dict, i: int, entry) -> None:
    """Replace move i's entry bytes (all its LoggedEntrys) by `entry`'s, without re-proving them."""
    for v in proof["log"]["moves"][i]:
        v["entry"] = encode(entry).hex()


@pytest.mark.parametrize("what, alter, says", [
    ("an entry that is not a move",
     lambda p: _alter_move(p, 0, VoidEntry(E, 2)), "a void, not a move"),
    ("an entry that is no entry",
     lambda p: [v.__setitem__("entry", "00") for v in p["log"]["moves"][0]], "not a log entry"),
    ("an entry that is not hex",
     lambda p: [v.__setitem__("entry", "zz") for v in p["log"]["moves"][0]], "not a hex string"),
    ("a chain that does not end at vdfEpoch",
     lambda p: _alter_move(p, 0, _move(E, D + 1)), "the moves end at epoch 9, not at epoch 8 (vdfEpoch)"),
    ("moved_from other than the first move's e",
     lambda p: p.__setitem__("moved_from", E - 1), "the first move (entry 4) is epoch 7's, but the game was "
                                                   "accepted into epoch 6 (moved_from)"),
    ("no moved_from", lambda p: p.__delitem__("moved_from"), "the proof shows moves but names no epoch they move from"),
    ("moved_from not an integer", lambda p: p.__setitem__("moved_from", "7"), "names no epoch they move from"),
    ("moves empty", lambda p: p["log"].__setitem__("moves", []), "the proof names no move"),
    ("moves absent", lambda p: p["log"].__delitem__("moves"), "the proof names no move"),
    ("moves not an array", lambda p: p["log"].__setitem__("moves", {}), "log.moves is not an array"),
    ("an empty move list", lambda p: p["log"]["moves"].__setitem__(0, []), "log.moves[0] is not a non-empty list"),
    ("a move list of two entries",
     lambda p: p["log"]["moves"][0][1].__setitem__("index", p["log"]["moves"][0][1]["index"] + 1),
     "its checkpoints name different entries"),
    ("a move at D's commitment or after",
     lambda p: [v.__setitem__("index", p["log"]["commitment"][0]["index"]) for v in p["log"]["moves"][0]],
     "is not logged before epoch 8's commitment (entry 5): the games were not sent to epoch 8 while it was open"),
    ("no commitment of D", lambda p: p["log"].__setitem__("commitment", []), "epoch 8's commitment is not in the "
                                                                              "proof's log"),
    ("D's plan for its commitment", lambda p: p["log"].__setitem__("commitment", p["log"]["plan"]),
     "log.commitment is entry 3, a plan, not epoch 8's commitment"),
    ("another epoch's commitment", lambda p: [v.__setitem__("entry", encode(_commitment(9)).hex())
                                              for v in p["log"]["commitment"]],
     "log.commitment is entry 5, epoch 9's commitment, not epoch 8's commitment"),
])
def test_each_broken_move_fails_moved(what: str, alter, says: str) -> None:
    _, proof, _ = scenario()
    alter(proof)
    for policy in (None, POLICY):  # items 1-3 hold with or without a policy
        assert says in _fails(check_moved, proof, policy), what


def test_a_broken_link_and_indices_out_of_order_fail() -> None:
    _, proof, at = scenario((6, 7, 9))
    broken = copy.deepcopy(proof)
    _alter_move(broken, 0, _move(6, 8))
    assert (f"the chain is broken: the move of epoch 6 (entry {at[0]}) sends its games to epoch 8, but the next move "
            f"(entry {at[1]}) is epoch 7's") in _fails(check_moved, broken, None)
    swapped = copy.deepcopy(proof)
    for v in swapped["log"]["moves"][1]:
        v["index"] = at[0]
    assert (f"the move of epoch 7 (entry {at[0]}) is not logged after the move of epoch 6 (entry {at[0]})"
            in _fails(check_moved, swapped, None))


def _forge_w0(v: dict) -> None:
    """W0's cosignature line with one bit of its signature flipped."""
    lines = v["checkpoint"].split("\n")
    i = next(j for j, line in enumerate(lines) if line.startswith("\u2014 W0 "))
    sig = bytearray(base64.b64decode(lines[i].split(" ")[2]))
    sig[-1] ^= 1
    lines[i] = f"\u2014 W0 {base64.b64encode(bytes(sig)).decode()}"
    v["checkpoint"] = "\n".join(lines)


def test_under_a_policy_a_move_needs_its_quorum_and_valid_checkpoints() -> None:
    _, proof, at = scenario((6, 7, 9))
    # The second move cosigned by W1 alone: short of 2 of 3.
    short = copy.deepcopy(proof)
    short["log"]["moves"][1] = short["log"]["moves"][1][1:]
    assert _fails(check_moved, short, POLICY) == (f"the move of epoch 7 (entry {at[1]}) is cosigned by [W1], short "
                                                  "of the quorum 2 of (W0, W1, W2)")
    for what, alter, says in [
        ("a sibling altered", lambda v: v["proof"].__setitem__(0, base64.b64encode(b"\x07" * 32).decode()),
         "the move of epoch 6: the inclusion proof"),
        ("a path too short", lambda v: v["proof"].pop(), "too short"),
        ("the checkpoint's size", lambda v: v.__setitem__("checkpoint", v["checkpoint"].replace(
            f"\n{at[0] + 1}\n", f"\n{at[0] + 2}\n", 1)), f"checkpoint of entry {at[0]}: signature: invalid signature "
                                                         f"for key {ORIGIN}+"),
        ("a forged cosignature", _forge_w0, f"checkpoint of entry {at[0]}: signature: invalid signature for key W0+"),
    ]:
        p = copy.deepcopy(proof)
        alter(p["log"]["moves"][0][0])
        assert says in _fails(check_moved, p, POLICY), what
    # The entry's bytes altered in every checkpoint: a move still, but not the one proven.
    p = copy.deepcopy(proof)
    _alter_move(p, 0, MoveEntry(6, 7, b"\x09" * 32, 3))
    assert "inclusion proof" in _fails(check_moved, p, POLICY)
    assert check_moved(p, None).startswith("epoch 6 is void")


def test_quorum_none_proves_the_entries_and_counts_no_cosignature() -> None:
    none = Policy.parse(f"log {_vkey(ORIGIN, ALG_ED25519, LOG_KEY)}\nquorum none\n")
    _, proof, _ = scenario()
    proof["log"]["moves"][0] = proof["log"]["moves"][0][:1]
    assert check_moved(proof, none).startswith("epoch 7 is void: its games moved to epoch 8 (entry 4), cosigned by []")


# --- The steps that change ------------------------------------------------------------------------

def test_moved_follows_merkle_inclusion_only_for_moved_games() -> None:
    _, proof, _ = scenario()
    names = [n for n, _ in steps_for(_ctx(proof, None))]
    assert names[names.index("merkle_inclusion") + 1] == "moved"
    names = [n for n, _ in steps_for(_ctx(proof, FLOOR))]
    assert names[names.index("merkle_inclusion") + 1] == "moved" and names[names.index("timing") + 1] == "witnessed"
    assert "moved" not in [n for n, _ in steps_for(_ctx(ordinary(proof), FLOOR))]
    assert "moved" not in [n for n, _ in steps_for(_ctx(ordinary(proof), None))]
    # Either member makes the game a moved one; absent, null or empty both do not.
    assert is_moved(proof) and not is_moved(ordinary(proof))
    assert is_moved({**ordinary(proof), "moved_from": 7}) and is_moved(dict(proof, moved_from=None))
    assert not is_moved(dict(ordinary(proof), moved_from=None, log=dict(proof["log"], moves=[])))
    assert not is_moved(dict(ordinary(proof), log=dict(proof["log"], moves=None)))
    assert "moved" not in [n for n, _ in steps_for(_ctx({**proof, "pool_served": True}, None))]


def test_merkle_inclusion_of_a_moved_game_is_against_es_tree() -> None:
    _, proof, _ = scenario()
    assert step_merkle_inclusion(_ctx(proof)) == (f"leaf 1 of 3 under epoch 7's bets root {mth(TREE_E).hex()[:16]}… "
                                                  "(the first move's)")
    assert first_move(proof) == _move(E, D)
    # The same path against the proof's (D's) root, as an ordinary game: it does not lead there.
    assert _fails(step_merkle_inclusion, _ctx(ordinary(proof))).startswith("audit path")
    tampered = copy.deepcopy(proof)
    tampered["audit_path"].reverse()
    assert "does not give epoch 7's bets root" in _fails(step_merkle_inclusion, _ctx(tampered))
    not_a_move = copy.deepcopy(proof)
    _alter_move(not_a_move, 0, VoidEntry(E, 2))
    assert "not a move" in _fails(step_merkle_inclusion, _ctx(not_a_move))
    other_tree = copy.deepcopy(proof)
    _alter_move(other_tree, 0, MoveEntry(E, D, bytes(32), 3))  # another root
    assert "does not give epoch 7's bets root" in _fails(step_merkle_inclusion, _ctx(other_tree))
    _alter_move(other_tree, 0, MoveEntry(E, D, mth(TREE_E), 2))  # another count: the path is not one of 2 leaves
    assert _fails(step_merkle_inclusion, _ctx(other_tree)) == "audit path too long"
    no_moves = copy.deepcopy(proof)
    no_moves["log"]["moves"] = []
    assert _fails(step_merkle_inclusion, _ctx(no_moves)) == "the proof names no move"
    # An ordinary game of D's tree passes as before.
    plain = ordinary(proof)
    plain.update(leaf=BETS_D[0].hex(), leaf_index=0, audit_path=[h.hex() for h in audit_path(TREE_D, 0)])
    assert step_merkle_inclusion(_ctx(plain)).startswith("leaf 0 of 2 under bets root")


def _signed(proof: dict, epoch: int) -> dict:
    leaf = bytes.fromhex(proof["leaf"])
    sig = ACCEPTANCE_KEY.sign(acceptance_message(1, epoch, leaf_hash(leaf), ACCEPTED))
    return dict(proof, acceptance={"version": 2, "kind": "epoch", "epoch": epoch, "pool_index": None,
                                   "leaf": leaf.hex(), "leaf_hash": leaf_hash(leaf).hex(), "accepted_at_ms": ACCEPTED,
                                   "public_key": _pub(ACCEPTANCE_KEY).hex(), "signature": sig.hex()})


ROOT = {"/": (200, {"acceptance_keys": [{"public_key": _pub(ACCEPTANCE_KEY).hex(), "since_ms": 0}]})}


def test_the_acceptance_of_a_moved_game_names_moved_from() -> None:
    _, proof, _ = scenario()
    assert step_acceptance(_ctx(_signed(proof, E), cache=dict(ROOT))).endswith(f"epoch {E}, {ACCEPTED} ms")
    # Signed (validly) over D: not the epoch the game was accepted into.
    assert "acceptance names another epoch (8, not moved_from 7)" in _fails(
        step_acceptance, _ctx(_signed(proof, D), cache=dict(ROOT)))
    # An ordinary game of D is judged against vdfEpoch, as before.
    assert step_acceptance(_ctx(_signed(ordinary(proof), D), cache=dict(ROOT))).endswith(f"epoch {D}, {ACCEPTED} ms")
    assert _fails(step_acceptance, _ctx(_signed(ordinary(proof), E), cache=dict(ROOT))) == (
        "acceptance names another epoch")


def _records(**over) -> dict:
    """GET /api/v1/epochs/{7, 8}: e's tree and D's, with the times `timing` reads."""
    e = {"epoch": E, "status": "resolved", "leaf_hashes": [h.hex() for h in TREE_E], "bet_count": len(TREE_E),
         "bets_root": mth(TREE_E).hex(), "closed_at_ms": 960_000, "resolved_at_ms": 1_200_000}
    d = {"epoch": D, "status": "resolved", "leaf_hashes": [h.hex() for h in TREE_D], "bet_count": len(TREE_D),
         "bets_root": mth(TREE_D).hex(), "iterations": T_D}
    e.update(over)
    return {f"/api/v1/epochs/{E}": (200, e), f"/api/v1/epochs/{D}": (200, d)}


def test_timing_judges_d_and_does_not_hold_a_moved_game_to_ds_window() -> None:
    _, proof, _ = scenario()
    # Accepted into e, before D opened: a moved game's acceptance only has to precede D's close.
    assert "effective margin" in step_timing(_ctx(proof, cache=_records(closed_at_ms=OPENED_D)))
    assert "outside the epoch's window" in _fails(step_timing, _ctx(ordinary(proof), cache=_records(
        closed_at_ms=OPENED_D)))
    late = dict(proof, bet_created_at_ms=CLOSED_D + 1)
    assert "after epoch 8 closed" in _fails(step_timing, _ctx(late, cache=_records(closed_at_ms=OPENED_D)))


def test_bets_root_reads_ds_leaves_and_es_for_the_game() -> None:
    _, proof, _ = scenario()
    assert step_bets_root(_ctx(proof, cache=_records())) == (
        "2 published leaves of epoch 8 hash to its bets root; the game's leaf 1 is among the 3 of epoch 7, as moved")
    short = _records(leaf_hashes=[h.hex() for h in TREE_E[:2]], bet_count=2, bets_root=mth(TREE_E[:2]).hex())
    assert "epoch 7's published leaves are not the tree its move names" in _fails(step_bets_root,
                                                                                  _ctx(proof, cache=short))
    # As an ordinary game of D, the leaf is not D's.
    assert "not this game's" in _fails(step_bets_root, _ctx(ordinary(proof), cache=_records()))


def test_a_saved_acceptance_of_e_is_stored_as_the_moved_game() -> None:
    _, proof, _ = scenario()
    signed = _signed(proof, E)
    saved = Saved(GAME, signed["acceptance"])
    assert step_acceptance_stored(saved, {"proof": signed}) == "the server stores the game exactly as signed"
    assert "stored elsewhere" in _fails(step_acceptance_stored, saved, {"proof": ordinary(signed)})


# --- `members`: the replay and the result ---------------------------------------------------------

def _members_ctx(proof: dict, bet_committed: dict | None = None, result_epoch=E) -> Ctx:
    """A raw RNG game's responses, as consistent as `members` wants them, for this proof."""
    proof = dict(proof, modulus="test512", x="11", y="22", pi="33", l="44", epoch_seed="55" * 32,
                 previous_output="66", bet={"game_id": GAME, "game": "rng", "player_seed": "s"}, rngValue="77")
    move = MoveEntry(E, D, mth(TREE_E), len(TREE_E))
    bc = {"step": 1, "action": "bet_committed", "game_id": GAME, "leaf": proof["leaf"], "leaf_hash": proof["leaf_hash"],
          "leaf_index": proof["leaf_index"], "audit_path": proof["audit_path"], "accepted_at": ACCEPTED // 1000,
          "epoch": E, "bets_root": move.bets_root.hex(), "bet_count": move.bet_count, "closed_at": 955}
    bc.update(bet_committed or {})
    steps = [bc,
             {"step": 2, "action": "vdf_epoch_published", "epoch": proof["vdfEpoch"], "modulus": "test512",
              "iterations": T_D, "input": "11", "output": "22", "pi": "33", "l": "44", "epoch_seed": "55" * 32,
              "previous_output": "66", "bets_root": proof["bets_root"], "previous_epoch": 0, "version": 2},
             {"step": 3, "action": "randomness_derived", "game_id": GAME, "player_seed": "s"},
             {"step": 4, "action": "dice_rolled", "dice": []},
             {"step": 5, "action": "bet_evaluated", "bet_type": None, "target": None, "amount": None, "combo": None}]
    resp = {"game_id": GAME, "proof": proof, "replay_steps": steps}
    result = {"game_id": GAME, "game": "rng", "client_seed": "s", "player_seed": "s", "epoch": result_epoch,
              "verify_url": f"/api/v1/verify/{GAME}", "verify_page": f"/verify?game={GAME}", "proof": proof}
    cache = {f"/api/v1/verify/{GAME}": (200, resp),
             f"/api/v1/games/{GAME}": (200, {"status": "resolved", "game_id": GAME, "replay": steps, "result": result}),
             f"/api/v1/epochs/{proof['vdfEpoch']}": (404, None), f"/api/v1/epochs/{proof['vdfEpoch'] - 1}": (404, None)}
    return _ctx(proof, cache=cache, resp=resp)


def test_members_take_bet_committed_and_result_epoch_as_es() -> None:
    _, proof, _ = scenario()
    detail = step_members(_members_ctx(proof))
    assert detail.startswith("every member has P§20's type; the copies agree"), detail
    # closed_at is closed_e, which the proof does not carry: not compared with D's close.
    assert step_members(_members_ctx(proof, {"closed_at": CLOSED_D // 1000 + 77}))
    for what, bc, says in [
        ("D's epoch", {"epoch": D}, "bet_committed.epoch"),
        ("D's root", {"bets_root": proof["bets_root"]}, "bet_committed.bets_root"),
        ("D's count", {"bet_count": len(TREE_D)}, "bet_committed.bet_count"),
    ]:
        assert says in _fails(step_members, _members_ctx(proof, bc)), what
    assert "result.epoch" in _fails(step_members, _members_ctx(proof, result_epoch=D))


def test_members_of_an_ordinary_game_are_unchanged() -> None:
    _, proof, _ = scenario()
    plain = ordinary(proof)
    ds = {"epoch": D, "bets_root": plain["bets_root"], "bet_count": len(TREE_D), "closed_at": CLOSED_D // 1000}
    assert step_members(_members_ctx(plain, ds, result_epoch=D)).startswith("every member has P§20's type")
    assert "bet_committed.epoch" in _fails(step_members, _members_ctx(plain, dict(ds, epoch=E), result_epoch=D))
    assert "bet_committed.closed_at" in _fails(step_members,
                                               _members_ctx(plain, dict(ds, closed_at=955), result_epoch=D))
    assert "result.epoch" in _fails(step_members, _members_ctx(plain, ds, result_epoch=E))
