"""The player's evidence (P§13, `--acceptance FILE`): a saved, signed acceptance checked against
what the server stores and publishes now, and the anchor transaction read back from a node of
the user's choosing (`--rpc URL`)."""

from __future__ import annotations

import http.client
import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass

from .ed25519 import ed25519_verify_strict
from .encoding import StepFail, StepPend, UsageError, as_int, need, unhex
from .merkle import leaf_hash, mth
from .moved import is_moved
from .source import Source
from .steps import Ctx, acceptance_message, anchor_calldata, verify_epoch_commitment
from .witnessed import evidence_of, operator_of

# P§11: the leaf's fields, in order.
LEAF_FIELDS = ("game_id", "game", "bet_type", "target", "combo", "amount", "player_id",
               "player_seed", "operator_key")
LEAF_TAG = b"\x0avrs/v1/bet"


def parse_leaf(leaf: bytes) -> list[str]:
    """P§11's bet leaf back into its 9 fields (each u16 length ‖ UTF-8)."""
    need(leaf.startswith(LEAF_TAG), "the leaf does not start with u8(10) ‖ \"vrs/v1/bet\"")
    rest, fields = leaf[len(LEAF_TAG):], []
    while rest:
        need(len(rest) >= 2, "the leaf ends inside a field's length")
        n = int.from_bytes(rest[:2], "big")
        need(len(rest) >= 2 + n, "the leaf ends inside a field")
        fields.append(rest[2:2 + n].decode("utf-8"))
        rest = rest[2 + n:]
    need(len(fields) == len(LEAF_FIELDS), f"the leaf has {len(fields)} fields, not {len(LEAF_FIELDS)}")
    return fields


@dataclass(frozen=True)
class Saved:
    """A saved acceptance: the 202 of a bet or raw RNG request, the 200 of an instant bet, or
    the acceptance object alone (P§13)."""

    game_id: str
    acceptance: dict

    @staticmethod
    def read(path: str) -> Saved:
        try:
            with open(path, encoding="utf-8") as f:
                v = json.load(f)
        except OSError as e:
            raise UsageError(f"reading the saved acceptance {path}: {e}") from None
        except ValueError:
            raise UsageError(f"{path} is not JSON") from None
        if not isinstance(v, dict):
            raise UsageError(f"{path} is not a JSON object")
        acc = v.get("acceptance") if isinstance(v.get("acceptance"), dict) else v
        if "signature" not in acc:
            raise UsageError(f"{path} has no acceptance object: save the whole 202 (or instant 200) "
                             "response of the bet")
        try:
            game_id = parse_leaf(unhex(acc.get("leaf"), None, "leaf"))[0]
        except (StepFail, ValueError) as e:  # a malformed leaf (UnicodeDecodeError is a ValueError)
            raise UsageError(f"{path}: the signed leaf: {e}") from None
        if isinstance(v.get("game_id"), str) and v["game_id"] != game_id:
            raise UsageError(f"{path}: the response names game {v['game_id']}, but its acceptance "
                             f"signs game {game_id}")
        saved = Saved(game_id, acc)
        try:
            saved.place()
            at = as_int(acc.get("accepted_at_ms"), "accepted_at_ms")
            need(0 <= at < 2**64, "accepted_at_ms is out of range")
        except StepFail as e:
            raise UsageError(f"{path}: the acceptance: {e}") from None
        return saved

    def place(self) -> tuple[int, int]:
        """(kind, number): (1, epoch) or (2, pool index), as P§11's message encodes it."""
        a = self.acceptance
        if a.get("kind") == "epoch":
            kind, number = 1, as_int(a.get("epoch"), "acceptance.epoch")
        else:
            need(a.get("kind") == "pool", f"acceptance kind {a.get('kind')!r}")
            kind, number = 2, as_int(a.get("pool_index"), "acceptance.pool_index")
        need(0 <= number < 2**64, "the acceptance's epoch or pool index is out of range")
        return kind, number

    def describe(self) -> str:
        kind, number = self.place()
        return f"{'epoch' if kind == 1 else 'pool entry'} {number}"


def step_acceptance_signature(saved: Saved, src: Source) -> str:
    """The saved signature verifies over P§11's message, recomputed from the saved leaf, place and
    time, by a key GET / lists."""
    a = saved.acceptance
    leaf = unhex(a.get("leaf"), None, "leaf")
    lh = leaf_hash(leaf)
    need(str(a.get("leaf_hash", "")).lower() == lh.hex(), "leaf_hash ≠ SHA-256(0x00 ‖ leaf)")
    kind, number = saved.place()
    at = as_int(a.get("accepted_at_ms"), "accepted_at_ms")
    pub = unhex(a.get("public_key"), 32, "public_key")
    sig = unhex(a.get("signature"), 64, "signature")
    why = ed25519_verify_strict(pub, acceptance_message(kind, number, lh, at), sig)
    need(why is None, f"Ed25519 signature invalid: {why}")
    root = src.record("/")
    keys = root.get("acceptance_keys") if root else None
    listed = [str(k.get("public_key", "")).lower() for k in keys or [] if isinstance(k, dict)]
    need(pub.hex() in listed, f"signed by {pub.hex()}, which GET / does not list")
    return f"Ed25519 by published key {pub.hex()[:16]}… over the leaf, {saved.describe()}, {at} ms"


def step_acceptance_stored(saved: Saved, verification: dict) -> str:
    """The server still has the game exactly as signed: leaf, place and time; `pend` while it is
    pending."""
    what = f"the bet signed as accepted into {saved.describe()}"
    proof = verification.get("proof")
    if not isinstance(proof, dict):
        kind, number = saved.place()
        at = verification.get("resolves_at_epoch")
        need(not (kind == 1 and isinstance(at, int) and at != number),
             f"the server has the game in epoch {at}, not epoch {number} as signed")
        # P§13: `pend` while the game is pending, even past its signed epoch.
        raise StepPend("the game is stored and pending; its fields are shown once it resolves")
    signed = unhex(saved.acceptance.get("leaf"), None, "leaf")
    stored = unhex(proof.get("leaf"), None, "proof.leaf")
    if stored != signed:
        a, b = parse_leaf(signed), parse_leaf(stored)
        changes = "; ".join(f"{n} signed {x!r}, stored {y!r}" for n, x, y in zip(LEAF_FIELDS, a, b) if x != y)
        need(False, f"{what} is stored altered: {changes}")
    kind, number = saved.place()
    if kind == 1:
        # P§21 "Moved games": a moved game is stored as accepted into e = moved_from (its proof's
        # vdfEpoch is the last destination's).
        place = proof.get("moved_from") if is_moved(proof) else proof.get("vdfEpoch")
        need(proof.get("pool_served") is not True and place == number, f"{what} is stored elsewhere")
    else:
        need(proof.get("pool_served") is True and proof.get("pool_index") == number,
             f"{what} is stored elsewhere")
    at = saved.acceptance.get("accepted_at_ms")
    need(proof.get("bet_created_at_ms") == at, f"{what} is stored with another acceptance time")
    return "the server stores the game exactly as signed"


def tree_epoch(saved: Saved, proof: dict | None) -> int | None:
    """Where the signed leaf must be: the signed epoch, or a pool game's bet epoch (None when
    the proof names none: the step is then left out)."""
    kind, number = saved.place()
    if kind == 1:
        return number
    be = proof.get("bet_epoch") if isinstance(proof, dict) else None
    return as_int(be.get("epoch"), "bet_epoch.epoch") if isinstance(be, dict) else None


def step_acceptance_in_tree(saved: Saved, e: int, c: Ctx) -> str:
    """The signed leaf hash is in the committed tree of epoch e, that tree gives its bets root
    and count, and, the epoch resolved, its x and proof (`c` needs only the source and the
    group: the game itself may be gone)."""
    src = c.src
    rec = src.epoch(e)
    need(rec is not None, f"epoch {e} is not published")
    if rec.get("status") == "open":
        raise StepPend(f"epoch {e} is still open: its tree is not fixed yet")
    hashes = [unhex(h, 32, "leaf_hashes[]") for h in rec.get("leaf_hashes") or []]
    root = unhex(rec.get("bets_root"), 32, "bets_root")
    need(mth(hashes) == root and len(hashes) == rec.get("bet_count"),
         f"epoch {e}'s {len(hashes)} published leaf hashes do not give its bets root")
    lh = unhex(saved.acceptance.get("leaf_hash"), 32, "leaf_hash")
    need(lh in hashes, f"the bet is not in epoch {e}'s committed tree ({len(hashes)} leaves): dropped "
                       "or altered after it was accepted")
    i = hashes.index(lh)
    if rec.get("status") != "resolved":
        raise StepPend(f"leaf {i} of {len(hashes)} of epoch {e}'s tree; bound once the epoch resolves")
    bound = verify_epoch_commitment(c, e, rec)
    return f"leaf {i} of {len(hashes)} under epoch {e}'s bets root {root.hex()[:16]}… ({bound})"


class Rpc:
    """JSON-RPC to an EVM node (standard library HTTP)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def call(self, method: str, params: list):
        """The result; UsageError (exit 2, never a verdict) when the node cannot be asked or its
        answer is not a JSON-RPC result."""
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        try:
            req = urllib.request.Request(self.url, body, {"content-type": "application/json"})
            with urllib.request.urlopen(req, timeout=30) as r:
                answer = json.loads(r.read())
        except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as e:
            raise UsageError(f"JSON-RPC {method} at {self.url}: {e}") from None
        if not isinstance(answer, dict) or "result" not in answer or answer.get("error") is not None:
            raise UsageError(f"JSON-RPC {method} at {self.url}: no result: {str(answer)[:200]}")
        return answer["result"]

    def quantity(self, method: str, params: list) -> int:
        """A hex quantity result (eth_chainId, eth_blockNumber)."""
        v = self.call(method, params)
        try:
            return int(v, 16)
        except (TypeError, ValueError):
            raise UsageError(f"JSON-RPC {method} at {self.url}: {v!r} is not a quantity") from None


ADDRESS_RE = re.compile(r"0[xX][0-9a-fA-F]{40}")


def anchor_sender(c: Ctx) -> tuple[str, int | None, str]:
    """P§16 "The sender": the operator's anchor account (lowercase `0x…`), the chain its log
    declares (None without a policy) and whose word names them: with a witness policy the log's
    operator declaration (the proof's `log`, or a pool game's anchor batch's first epoch's), without
    one `anchoring.address` of GET /api/v1/stats."""
    floor = c.args.witness
    if floor is None:
        status, stats = c.src.get("/api/v1/stats")
        a = (stats.get("anchoring") or {}).get("address") if status == 200 and isinstance(stats, dict) else None
        need(isinstance(a, str) and ADDRESS_RE.fullmatch(a) is not None,
             "the anchor's sender: GET /api/v1/stats names no anchoring.address")
        return a.lower(), None, ("anchoring.address of GET /api/v1/stats (the operator's word; with "
                                 "--witness-policy, the log's declaration)")
    try:
        ev = evidence_of(c.proof)
        if ev is None:
            n = ((c.proof.get("anchor") or {}).get("epochs") or {}).get("first")
            need(isinstance(n, int), "the proof carries no witnessed log, and its anchor names no epoch")
            status, rec = c.src.get(f"/api/v1/epochs/{n}")
            need(status == 200 and isinstance(rec, dict), f"GET /api/v1/epochs/{n} answered {status}")
            ev = evidence_of(rec)
            need(ev is not None, f"epoch {n} carries no witnessed log")
        op = operator_of(ev.get("operator", []), floor.policy)
    except StepFail as e:
        raise StepFail(f"the anchor's sender: {e}") from None
    need(op.anchor_address != bytes(20), "the anchor's sender: the log's operator declaration names no anchor "
                                         "address (it declared that it does not anchor)")
    return "0x" + op.anchor_address.hex(), op.anchor_chain_id, "the address of the log's operator declaration"


def step_anchor_onchain(c: Ctx, rpc: Rpc) -> str:
    """P§16: the proof's anchor transaction, read back from the user's node: mined, on the proof's
    chain, sent from the operator's anchor account, its input exactly the batch's calldata ("Binding":
    version 2 with its log entry, version 1 without)."""
    p = c.proof
    a = p.get("anchor")
    if not isinstance(a, dict) or a.get("batch") is None:
        raise StepPend("not in an anchor batch yet: nothing on chain to check")
    tx = p.get("anchorTx")
    if tx is None:
        need(a.get("status") != "confirmed", f"anchor batch {a.get('batch')} is confirmed but the proof "
                                             "names no anchorTx")
        raise StepPend(f"anchor batch {a.get('batch')} is {a.get('status')}: no confirmed transaction yet")
    tx = str(tx).lower()
    need(str(a.get("tx", "")).lower() == tx, f"anchorTx {tx} but the anchor object names {a.get('tx')}")
    need(len(tx) == 66 and tx.startswith("0x") and all(ch in "0123456789abcdef" for ch in tx[2:]),
         f"anchorTx {tx!r} is not a transaction hash")
    chain = as_int(p.get("anchorChainId"), "anchorChainId")
    if a.get("chain_id") is not None:
        need(a.get("chain_id") == chain, f"anchor.chain_id {a.get('chain_id')} ≠ anchorChainId {chain}")
    node_chain = rpc.quantity("eth_chainId", [])
    need(node_chain == chain, f"the node at {rpc.url} is on chain {node_chain}, the proof names chain {chain}")
    sender, declared_chain, source = anchor_sender(c)
    t = rpc.call("eth_getTransactionByHash", [tx])
    need(t is not None, f"the node at {rpc.url} knows no transaction {tx}")
    if not isinstance(t, dict):
        raise UsageError(f"JSON-RPC eth_getTransactionByHash at {rpc.url}: not a transaction: {t!r:.200}")
    need(t.get("blockNumber") is not None, f"transaction {tx} is not mined")
    try:
        block = int(t["blockNumber"], 16)
    except (TypeError, ValueError):
        raise UsageError(f"JSON-RPC at {rpc.url}: blockNumber {t['blockNumber']!r}") from None
    root = unhex(a.get("root"), 32, "anchor.root")
    expected, bound = anchor_calldata(c, a, root)
    need(str(t.get("input") or t.get("data") or "").lower() == expected,
         f"transaction {tx} does not carry {expected} ({bound})")
    sent_from = str(t.get("from") or "")
    need(sent_from.lower() == sender, f"transaction {tx} is sent from {sent_from}, not from the operator's anchor "
                                      f"account {sender} ({source}): anyone can put a root on chain")
    need(declared_chain is None or declared_chain == node_chain,
         f"the log's operator declaration anchors on chain {declared_chain}, the node at {rpc.url} is on chain "
         f"{node_chain}")
    confirmations = rpc.quantity("eth_blockNumber", []) + 1 - block
    return (f"transaction {tx} in block {block} ({confirmations} confirmations, from {sender}, {source}) "
            f"carries the batch's calldata ({bound})")
