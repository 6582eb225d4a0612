"""The steps of P§13 and P§14: each takes the context and returns its `ok` detail, or raises StepFail or StepPend."""

from __future__ import annotations

import decimal
import math

from .encoding import StepFail, StepPend, as_int, h_tag, need, sha256, u32, u64, u8, unhex
from .ed25519 import ed25519_verify_strict
from .merkle import fold_path, leaf_hash, mth
from .games import DICE_TYPES, SICBO_TYPES, bet_leaf_bytes, cents, f_field, fmt_cents, rng_value, roll_dice, settle_dice, settle_sicbo
from .source import Source
from .moved import check_moved, first_move, is_moved
from .witnessed import AnchorEntry, check_proof, expected_anchor_calldata


class Ctx:
    def __init__(self, game_id, src: Source, group, args, verify_resp):
        self.game_id = game_id
        self.src = src
        self.group = group
        self.args = args
        self.resp = verify_resp
        self.proof = verify_resp["proof"]
        steps = verify_resp.get("replay_steps")
        self.replay = {s.get("action"): s for s in steps or [] if isinstance(s, dict)}
        self.pool = self.proof.get("pool_served") is True
        # P§21 "Moved games": an epoch game accepted into e, verified as a game of the last destination D.
        self.moved = not self.pool and is_moved(self.proof)

    def seed(self):
        return unhex(self.proof.get("epoch_seed"), 32, "epoch_seed") if not self.pool else None

    def chain_id(self) -> str:
        """The group id that enters y_0: P§1, "a verifier takes the id from the proof's modulus after
        checking that it names the N it expects" (the check is `group`'s)."""
        m = self.proof.get("modulus")
        if isinstance(m, str) and m.lower() == self.group.id.lower():
            return m
        return self.group.id

    def games(self):
        """GET /api/v1/games/{id} (P§20.2), or None."""
        return self.src.record(f"/api/v1/games/{self.game_id}")

    def game_result(self):
        """`result` of GET /api/v1/games/{id} (P§20.2), or None."""
        g = self.games()
        r = g.get("result") if g else None
        return r if isinstance(r, dict) else None


def json_eq(a, b) -> bool:
    """P§13 "JSON values compared as they are: equal strings, equal numbers, both null": strings
    exactly, numbers by value (1.5 = 1.50), booleans and null by identity, arrays and objects
    member by member."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, decimal.Decimal, float)) and isinstance(b, (int, decimal.Decimal, float)):
        return decimal.Decimal(a) == decimal.Decimal(b)
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_eq(a[k], b[k]) for k in a)
    return False


def veo_group(gid: str) -> str:
    """P§13 last paragraph: RSA2048, the upper-cased id of a test modulus, RSA-CUSTOM for hex:;
    P§19: CLASSGROUP-<bits>."""
    low = gid.lower()
    if low == "rsa2048":
        return "RSA2048"
    if low.startswith("hex:"):
        return "RSA-CUSTOM"
    return gid.upper()


def step_group(c: Ctx) -> str:
    """P§13: "the proof's modulus must be the id the verifier expects, --group ..., compared
    ignoring ASCII case, and modulus_n, where given, must be that group's N as k big-endian bytes"."""
    p, g = c.proof, c.group
    m = p.get("modulus")
    # GUESS(G52): "ignoring ASCII case" only: a hex: id with other leading zeros (the same N, P§1)
    # fails, as it would give another y_0; P§1's "checking that it names the N it expects" is
    # read as this comparison plus modulus_n.
    need(isinstance(m, str) and m.lower() == g.id.lower(),
         f"proof names group {m!r}, verifier expects {g.id!r}")
    want = f"VEO-WESOLOWSKI-{veo_group(g.id)}"
    need(p.get("veo_class") == want, f"veo_class {p.get('veo_class')!r} ≠ {want}")  # P§13, §19, §20.1
    if g.kind == "rsa":
        if p.get("modulus_n") is not None:
            need(unhex(p["modulus_n"], g.k, "modulus_n") == g.enc(g.N), f"modulus_n is not {g.id}'s N")
        return f"{m} ({g.N.bit_length()}-bit modulus" + (", N as given" if p.get("modulus_n") else "") + ")"
    need(not c.pool, "a class-group service keeps no pool (P§19)")
    need(p.get("discriminant_bits") == g.bits, f"discriminant_bits {p.get('discriminant_bits')} ≠ {g.bits}")
    return f"{m}"


TARGET_TYPES = {"exact", "total", "single", "double", "triple"}


def step_bet_leaf(c: Ctx) -> str:
    """P§11, §13: the leaf bytes from the game's fields ("which also requires the bet to be the
    game asked about")."""
    p = c.proof
    bet = p.get("bet")
    need(isinstance(bet, dict), "proof has no bet object")
    need(bet.get("game_id") == c.game_id, f"bet is game {bet.get('game_id')!r}, not {c.game_id}")
    need(c.resp.get("game_id") == c.game_id, "the verification names another game")
    leaf = bet_leaf_bytes(bet)
    need(leaf.hex() == str(p.get("leaf", "")).lower(), "leaf bytes differ from the bet's fields")
    if not c.pool:  # P§20.1: proof.leaf_hash, "epoch games" (a pool-served proof has none)
        need(leaf_hash(leaf).hex() == str(p.get("leaf_hash", "")).lower(), "leaf_hash ≠ SHA-256(0x00 ‖ leaf)")
    if bet.get("game") == "rng":
        # P§11: "For a raw RNG request, bet_type, target, combo and amount are empty".
        need(bet.get("bet_type") is None and bet.get("amount") is None and bet.get("target") is None
             and bet.get("combo") is None, "raw RNG leaf carries a bet")
    else:
        # P§11: "only exact, total, single, double and triple carry a target, and only combo a combo".
        bt = bet.get("bet_type")
        need(bt in (DICE_TYPES if bet.get("game") == "dice" else SICBO_TYPES), f"bet_type {bt!r} unknown for {bet.get('game')}")
        need((bet.get("target") is not None) == (bt in TARGET_TYPES), f"bet_type {bt} with target {bet.get('target')!r}")
        need((bet.get("combo") is not None) == (bt == "combo"), f"bet_type {bt} with combo {bet.get('combo')!r}")
        need(bet.get("amount") is not None, "a bet without an amount")
    return f"{bet.get('game')} {bet.get('bet_type') or ''} leaf encodes the game's fields".replace("  ", " ")


def step_merkle_inclusion(c: Ctx) -> str:
    """P§11, §13: fold the audit path (RFC 9162 §2.1.3.2) from the leaf hash to the bets root.
    P§21 "Moved games": for a moved game, to the first move entry's bets_root_e of bet_count_e
    leaves (e's tree, from the entry's bytes), not to the proof's (D's) bets_root."""
    p = c.proof
    lh = leaf_hash(unhex(p.get("leaf"), None, "leaf"))
    idx = as_int(p.get("leaf_index"), "leaf_index")
    audit = p.get("audit_path")
    if c.moved:
        move = first_move(p)
        size = move.bet_count
        need(isinstance(audit, list), "audit_path is not an array")
        root = fold_path(lh, idx, size, audit)
        need(root == move.bets_root, f"audit path does not give epoch {move.epoch}'s bets root (the first move's)")
        return f"leaf {idx} of {size} under epoch {move.epoch}'s bets root {root.hex()[:16]}… (the first move's)"
    size = as_int(p.get("bet_count"), "bet_count")
    need(isinstance(audit, list), "audit_path is not an array")
    root = fold_path(lh, idx, size, audit)
    need(root.hex() == str(p.get("bets_root")).lower(), "audit path does not give bets_root")
    return f"leaf {idx} of {size} under bets root {root.hex()[:16]}…"


def step_moved(c: Ctx) -> str:
    """P§21 "Moved games: the `moved` step", for a moved game only: the chain of move entries
    from `moved_from` to vdfEpoch, logged in order before D's commitment; under the verifier's
    own --witness-policy (c.args.witness), each move proven and cosigned by its quorum."""
    floor = getattr(c.args, "witness", None)
    return check_moved(c.proof, floor.policy if floor is not None else None)


def step_bets_root(c: Ctx) -> str:
    """P§13: not one of `vrs verify`'s steps, but the browser page's: "plus bets_root from the
    epoch's published leaf_hashes".  The leaf hashes of GET /api/v1/epochs/{e} must number
    bet_count, give bets_root, and hold this game's leaf hash at leaf_index.  GUESS: for a moved
    game (P§21 "Moved games") D's leaf hashes give D's bets root as for any of D's games, and the
    game's leaf is at leaf_index among those of e (moved_from), which give the first move's root
    and count (the tree the leaf's path is in)."""
    e = as_int(c.proof.get("vdfEpoch"), "vdfEpoch")
    hashes = published_leaves(c, e)
    need(mth(hashes).hex() == str(c.proof.get("bets_root")).lower(), "proof's bets_root ≠ the epoch's")
    need(len(hashes) == c.proof.get("bet_count"), "proof's bet_count ≠ the epoch's")
    at, tree = e, hashes
    if c.moved:
        move = first_move(c.proof)
        at, tree = move.epoch, published_leaves(c, move.epoch)
        need(mth(tree) == move.bets_root and len(tree) == move.bet_count,
             f"epoch {at}'s published leaves are not the tree its move names ({move.bet_count} leaves under "
             f"{move.bets_root.hex()[:16]}…)")
    idx = as_int(c.proof.get("leaf_index"), "leaf_index")
    need(0 <= idx < len(tree) and tree[idx].hex() == str(c.proof.get("leaf_hash")).lower(),
         "the epoch's leaf at leaf_index is not this game's" + (f" (epoch {at}'s tree)" if c.moved else ""))
    return (f"{len(hashes)} published leaves of epoch {e} hash to its bets root"
            + (f"; the game's leaf {idx} is among the {len(tree)} of epoch {at}, as moved" if c.moved else ""))


def published_leaves(c: Ctx, e: int) -> list[bytes]:
    """The leaf hashes of GET /api/v1/epochs/{e}, which must number its bet_count and give its bets_root."""
    rec = c.src.epoch(e)
    need(rec is not None, f"GET /api/v1/epochs/{e}: cannot be fetched")
    lh_list = rec.get("leaf_hashes")
    need(isinstance(lh_list, list), f"epoch {e} has no leaf_hashes")
    hashes = [unhex(h, 32, "leaf_hashes[]") for h in lh_list]
    need(len(hashes) == as_int(rec.get("bet_count"), "bet_count"), "leaf_hashes count ≠ bet_count")
    need(mth(hashes).hex() == str(rec.get("bets_root")).lower(), "epoch's leaf hashes do not give its bets_root")
    return hashes


def y_of_epoch(c: Ctx, p: int) -> bytes:
    """y_p: y of GET /api/v1/epochs/{p}, or y_0 for p = 0 (P§10, §13; P§20.3: epoch 0 is never
    published)."""
    if p == 0:
        return c.group.genesis(c.chain_id())
    rec = c.src.epoch(p)
    need(rec is not None, f"GET /api/v1/epochs/{p}: cannot be fetched")
    need(rec.get("status") == "resolved", f"epoch {p} is {rec.get('status')}")
    return unhex(rec.get("y"), c.group.elem_len, f"y of epoch {p}")


def previous_epoch_of(e: int, version, prev) -> int:
    """p(e): P§10 "Version 1": a version-1 epoch chains y_{e−1}; version 2: the epoch's
    previous_epoch (P§13: "p = the proof's timing.previous_epoch")."""
    if version == 1:
        return e - 1
    need(version == 2, f"unknown epoch version {version!r}")
    return as_int(prev, "previous_epoch")


def step_epoch_chain(c: Ctx) -> str:
    """P§13: "against y of GET /api/v1/epochs/{p}, p = the proof's timing.previous_epoch, or y_0
    for p = 0"."""
    p = c.proof
    e = as_int(p.get("vdfEpoch"), "vdfEpoch")
    t = p.get("timing")
    need(isinstance(t, dict), "proof has no timing object")
    prev = previous_epoch_of(e, t.get("version"), t.get("previous_epoch"))
    need(0 <= prev < e, f"previous epoch {prev} not below {e}")
    yp = y_of_epoch(c, prev)
    need(yp.hex() == str(p.get("previous_output")).lower(), f"previous_output ≠ y of epoch {prev}")
    return f"previous output is y of epoch {prev}" + (f" (y_0 of {c.chain_id()!r})" if prev == 0 else "")


def epoch_seed_v2(e, p, y_p: bytes, bets_root: bytes, nonce: bytes, T, opened, closed, margin, rate) -> bytes:
    """P§10 "Input of epoch e (version 2)"."""
    return sha256(u8(18) + b"vrs/v2/epoch-input" + u64(e) + u64(p) + y_p + bets_root + nonce + u64(T)
                  + u64(opened) + u64(closed) + u32(margin) + u64(rate))


def epoch_seed_v1(e, y_prev: bytes, bets_root: bytes, T) -> bytes:
    """P§10 "Version 1"."""
    return sha256(u8(18) + b"vrs/v1/epoch-input" + u64(e) + y_prev + bets_root + u64(T))


def margin_hundredths(a) -> int:
    """P§10 "Plan": A_e is "a JSON number ≥ 1 with at most two decimals; in hashes and arithmetic
    margin_e = 100 · A_e exactly, an integer" (also P§20.1).  A third decimal is refused."""
    if isinstance(a, bool) or not isinstance(a, (int, decimal.Decimal)):
        raise StepFail(f"security_margin {a!r} is not a number")
    m = decimal.Decimal(a) * 100
    need(m == m.to_integral_value(), f"security_margin {a} has more than two decimals")
    return int(m)


def seed_from_fields(e, version, prev, y_prev_hex, bets_root_hex, nonce_hex, T, opened, closed, margin_a, rate, elem_len):
    y_prev = unhex(y_prev_hex, elem_len, "previous_output")
    broot = unhex(bets_root_hex, 32, "bets_root")
    if version == 1:
        return epoch_seed_v1(e, y_prev, broot, T)
    need(version == 2, f"unknown epoch version {version!r}")
    return epoch_seed_v2(e, prev, y_prev, broot, unhex(nonce_hex, 32, "nonce"), T, as_int(opened, "opened_at_ms"),
                         as_int(closed, "closed_at_ms"), margin_hundredths(margin_a),
                         as_int(rate, "squarings_per_second"))


def step_epoch_input(c: Ctx) -> str:
    """P§10, §13, §19: seed_e from the commitment, x_e = hash_to_group(seed_e) (RSA) or the
    generator of D_e = create_discriminant(seed_e) (class groups)."""
    p = c.proof
    t = p.get("timing")
    need(isinstance(t, dict), "proof has no timing object")
    e = as_int(p.get("vdfEpoch"), "vdfEpoch")
    version = t.get("version")
    T = as_int(p.get("iterations"), "iterations")
    prev = previous_epoch_of(e, version, t.get("previous_epoch"))
    need(0 <= prev < e, f"previous epoch {prev} not below {e}")
    seed = seed_from_fields(e, version, prev, p.get("previous_output"), p.get("bets_root"), t.get("nonce"), T,
                            t.get("opened_at_ms"), t.get("closed_at_ms"), t.get("security_margin"),
                            t.get("squarings_per_second"), c.group.elem_len)
    # P§20.1: proof.epoch_seed is seed_e (32 bytes).
    need(seed.hex() == str(p.get("epoch_seed")).lower(), "epoch_seed ≠ the recomputed seed_e")
    x = c.group.input_from_seed(seed)
    need(x.hex() == str(p.get("x")).lower(), "x ≠ the input derived from seed_e")
    if c.group.kind == "classgroup":
        D = c.group.discriminant(seed)
        # P§18, §19: D_e as chiavdf writes it, "-0x" and lowercase hex; a different one fails.
        need(p.get("discriminant") == f"-0x{-D:x}", "shown discriminant ≠ create_discriminant(seed_e, bits)")
        return f"version {version}: seed_e → D_e ({(-D).bit_length()} bits), x = its generator"
    return f"version {version}: x = hash_to_group(seed_e)"


# P§13 `epoch_record`: "exactly the proof's values in these pairs (proof member = record member)".
EPOCH_RECORD_PAIRS = ([(k, k) for k in ("modulus", "iterations", "previous_output", "bets_root", "bet_count",
                                         "x", "y", "pi", "l")]
                      + [("timing.version", "version"), ("timing.previous_epoch", "previous_epoch"),
                         ("timing.nonce", "nonce")]
                      + [(f"timing.{k}", k) for k in ("opened_at_ms", "closed_at_ms", "security_margin",
                                                      "squarings_per_second", "deadline_ms")])


def member(obj, path: str):
    """obj's member at a dotted path; raises KeyError when absent."""
    for k in path.split("."):
        if not isinstance(obj, dict) or k not in obj:
            raise KeyError(path)
        obj = obj[k]
    return obj


def step_epoch_record(c: Ctx) -> str:
    """P§13 `epoch_record`: epoch e (vdfEpoch) must be published as `resolved` by
    GET /api/v1/epochs/{e}, with exactly the proof's values in P§13's pairs, "JSON values compared
    as they are: equal strings, equal numbers, both null".  A member either side lacks fails."""
    p = c.proof
    e = as_int(p.get("vdfEpoch"), "vdfEpoch")
    rec = c.src.epoch(e)
    need(rec is not None, f"GET /api/v1/epochs/{e}: cannot be fetched")
    need(rec.get("status") == "resolved", f"epoch {e} is {rec.get('status')!r}, not resolved")
    missing, bad = [], []
    for pk, rk in EPOCH_RECORD_PAIRS:
        try:
            pv, rv = member(p, pk), member(rec, rk)
        except KeyError:
            missing.append(f"{pk}/{rk}")
            continue
        if not json_eq(pv, rv):
            bad.append(pk if pk == rk else f"{pk} (record {rk})")
    need(not missing, f"a member is missing: {', '.join(missing)}")
    need(not bad, f"epoch {e}'s record differs from the proof in: {', '.join(bad)}")
    return f"GET /api/v1/epochs/{e} is resolved with the proof's {len(EPOCH_RECORD_PAIRS)} values"


def step_vdf_proof(c: Ctx) -> str:
    """P§7 (RSA) or P§18-§19 (class groups), with strict decoding."""
    p = c.proof
    return c.group.verify_vdf(p.get("x"), p.get("y"), p.get("pi"), p.get("l"), p.get("iterations"), seed=c.seed())


# P§10 "Version 1": refused unless the verifier allows it (the Rust verifier's words).
VERSION_1_REFUSED = ("version 1: the epoch makes no timing commitment, so an operator could have closed it once it "
                     "had evaluated its candidates; refused unless version 1 is allowed (--allow-version-1; "
                     "docs/PROTOCOL.md §10, \"Version 1\")")


def step_timing(c: Ctx) -> str:
    """P§10 "Timing: the rule every verifier checks", rules 1-3, in integers; P§13: closed_p and T_p
    from GET /api/v1/epochs/{p}, resolved_at_ms of y_{e−1} from GET /api/v1/epochs/{e − 1}."""
    p = c.proof
    t = p.get("timing")
    need(isinstance(t, dict), "proof has no timing object")
    e = as_int(p.get("vdfEpoch"), "vdfEpoch")
    version = t.get("version")
    prev_rec = c.src.epoch(e - 1) if e >= 2 else None
    if version == 1:
        need(not (prev_rec and prev_rec.get("version") == 2), "version-1 epoch after a version-2 one (downgrade)")
        need(c.args.min_margin is None, "--min-margin asked for, but a version-1 epoch declares no margin")
        need(c.args.min_rate is None, "--min-rate asked for, but a version-1 epoch declares no rate")
        need(getattr(c.args, "allow_version_1", False), VERSION_1_REFUSED)
        return "version 1: no timing commitment"
    need(version == 2, f"unknown timing version {version!r}")
    T_e = as_int(p.get("iterations"), "iterations")
    rec_e = c.src.epoch(e)
    need(rec_e is not None, f"GET /api/v1/epochs/{e}: cannot be fetched")
    need(json_eq(rec_e.get("iterations"), T_e), "the proof's iterations ≠ the epoch record's (rule 2)")
    margin = margin_hundredths(t.get("security_margin"))
    R = as_int(t.get("squarings_per_second"), "squarings_per_second")
    opened, closed = as_int(t.get("opened_at_ms"), "opened_at_ms"), as_int(t.get("closed_at_ms"), "closed_at_ms")
    prev = as_int(t.get("previous_epoch"), "previous_epoch")
    min_m = decimal.Decimal(str(c.args.min_margin)) if c.args.min_margin is not None else decimal.Decimal(1)
    # rule 2
    need(margin >= 100, f"margin {margin / 100} < 1")
    need(margin >= min_m * 100, f"margin {margin / 100} below --min-margin {min_m}")
    need(R >= 1 and T_e >= 1 and prev < e, "R ≥ 1, T ≥ 1, p < e violated")
    need(c.args.min_rate is None or R >= c.args.min_rate,
         f"the epoch declares R = {R} squarings/s, below --min-rate {c.args.min_rate}")
    need(opened <= closed, "opened_at_ms > closed_at_ms")
    # Not in rules 1-3, but stated by P§10: "Close" (closed_at_ms is "never before the acceptance of
    # a game it holds, nor before opened_at_ms") and "Whose numbers" (opened_at_ms ≤ acceptance ≤
    # closed_at_ms).  GUESS(G33): that a verifier's `timing` checks it with bet_created_at_ms.
    created = as_int(c.proof.get("bet_created_at_ms"), "bet_created_at_ms")
    if c.moved:
        # P§21 "Moved games": the game was accepted into e (moved_from), whose window the proof does
        # not carry; sent to D before D's commitment, it was accepted before D closed.
        need(created <= closed, f"accepted at {created}, after epoch {e} closed ({closed}), which it was moved to")
    else:
        need(opened <= created <= closed, f"accepted at {created}, outside the epoch's window {opened}..{closed}")
    # rule 1
    notes = []
    if e >= 2:
        need(prev_rec is not None, f"GET /api/v1/epochs/{e - 1}: cannot be fetched")
        pc, pr = prev_rec.get("closed_at_ms"), prev_rec.get("resolved_at_ms")
        need(isinstance(pc, int) and isinstance(pr, int), f"epoch {e - 1} has no closed_at_ms/resolved_at_ms")
        need(closed <= pr, f"closed {closed} after y of epoch {e - 1} was stored ({pr})")
        need(opened >= pc, f"opened {opened} before epoch {e - 1} closed ({pc})")
        notes.append(f"closed {pr - closed} ms before y_{e - 1} was stored")
    D = margin * R
    K = 100_000
    if prev >= 1:
        rec_p = c.src.epoch(prev)
        need(rec_p is not None, f"GET /api/v1/epochs/{prev}: cannot be fetched")
        closed_p, T_p = as_int(rec_p.get("closed_at_ms"), "closed_p"), as_int(rec_p.get("iterations"), "T_p")
        need(closed_p <= opened, f"closed_p {closed_p} > opened_e {opened}")
        lhs, rhs = closed * D, max(opened * D, closed_p * D + T_p * K) + T_e * K
        spans = [(T_e, closed - opened), (T_p + T_e, closed - closed_p)]
    else:
        lhs, rhs = closed * D, opened * D + T_e * K
        spans = [(T_e, closed - opened)]
    need(lhs <= rhs, f"closed_e·D = {lhs} > bound·D = {rhs}: the window was longer than margin {margin / 100} allows")
    # P§10 "Plan": deadline_ms = ⌊bound_e⌋, "informational: verifiers check the exact inequality,
    # not this"; a difference is only noted.
    dl = t.get("deadline_ms")
    if isinstance(dl, int) and not isinstance(dl, bool) and dl != rhs // D:
        notes.append(f"note: deadline_ms {dl} ≠ ⌊bound⌋ {rhs // D} (informational)")
    eff = []
    for Tn, span in spans:
        eff.append(math.inf if span <= 0 else (Tn * K // (span * R)))  # hundredths, rounded down
    e_m = max(eff)
    notes.append(f"closed {(rhs - lhs) // D} ms before its bound; effective margin "
                 + ("unbounded" if e_m == math.inf else f"{e_m / 100:.2f}") + f" (declared {margin / 100:.2f})")
    return "; ".join(notes)


def step_witnessed(c: Ctx) -> str:
    """P§21 "The witnessed step", only with the verifier's own --witness-policy (c.args.witness, a
    WitnessFloor): the proof's `log` proves epoch e's plan and commitment, cosigned in time by its
    quorum, and they are the very record this proof shows."""
    return check_proof(c.proof, c.args.witness)


def claimed(c: Ctx):
    """The server's claimed outcome, P§12: "the dice in dice_rolled.dice, won and payout in
    bet_evaluated (section 20.1); the game result shows the same dice as result.outcome (die1,
    die2, die3) with result.won and result.payout (section 20.2)"."""
    return c.replay.get("randomness_derived") or {}, c.replay.get("dice_rolled") or {}, c.replay.get("bet_evaluated") or {}


def output_y(c: Ctx) -> bytes:
    return unhex(c.proof.get("y"), c.group.elem_len, "y")


def step_rng_value(c: Ctx) -> str:
    """P§12 / G§1 (P§14 "Outcome" for pool games, with y_i), against every claimed copy:
    proof.rngValue, replay randomness_derived (its key, message and rngValue, P§20.1) and the game
    result's rngValue, random (raw RNG) and entropy (the y it resolved from, P§20.2)."""
    bet = c.proof.get("bet") or {}
    y = output_y(c)
    v = rng_value(y, c.game_id, bet.get("player_seed"))
    need(v.hex() == str(c.proof.get("rngValue")).lower(), "proof.rngValue ≠ HMAC-SHA256(y, game_id ‖ player_seed)")
    rd, _, _ = claimed(c)
    need(rd, "no randomness_derived replay step")
    need(str(rd.get("rngValue")).lower() == v.hex(), "replay randomness_derived.rngValue differs")
    need(str(rd.get("key")).lower() == y.hex(), "replay randomness_derived.key is not y")
    msg = (c.game_id + (bet.get("player_seed") or "")).encode("utf-8")
    need(str(rd.get("message")).lower() == msg.hex(), "replay randomness_derived.message differs")
    res = c.game_result()
    need(res is not None, f"GET /api/v1/games/{c.game_id}: no result")
    need(str(res.get("rngValue")).lower() == v.hex(), "GET /api/v1/games result.rngValue differs")
    if bet.get("game") == "rng":  # P§20.2: result.random, "raw RNG: the value, equal to rngValue"
        need(str(res.get("random")).lower() == v.hex(), "GET /api/v1/games result.random differs")
    need(str(res.get("entropy")).lower() == y.hex(), "GET /api/v1/games result.entropy is not y")
    return f"rngValue {v.hex()[:16]}…"


def step_dice(c: Ctx) -> str:
    """P§12 / G§2: the dice from the byte stream, against every claim: replay dice_rolled (dice,
    bytes_used, skipped, hmac_blocks, P§20.1 and G§2), bet_evaluated.total and result.outcome."""
    bet = c.proof.get("bet") or {}
    game = bet.get("game")
    _, dr, be = claimed(c)
    need(dr, "no dice_rolled replay step")
    res = c.game_result()
    need(res is not None, f"GET /api/v1/games/{c.game_id}: no result")
    if game == "rng":
        # P§13: "For a raw RNG request the service's dice and payout checks pass only when the replay
        # claims no dice and no bet"; P§20.1: dice "none for raw RNG", bytes_used "null for raw RNG".
        need(dr.get("dice") == [], f"a raw RNG game claims dice {dr.get('dice')!r}")
        bad = [k for k in ("bytes_used", "skipped", "hmac_blocks") if dr.get(k) is not None]
        bad += [f"bet_evaluated.{k}" for k in ("total",) if be.get(k) is not None]
        need(not bad, f"a raw RNG game claims {', '.join(bad)}")
        need("outcome" not in res, "a raw RNG game's result has an outcome")
        return "raw RNG: no dice (none claimed)"
    # The dice come from the recomputed value, not the claimed one (rng_value checks that).
    rng = rng_value(output_y(c), c.game_id, bet.get("player_seed"))
    count = 2 if game == "dice" else 3
    dice, used, skipped, blocks = roll_dice(rng, count)
    need(dr.get("dice") == dice, f"replay claims dice {dr.get('dice')}, stream gives {dice}")
    need(str(dr.get("bytes_used")).lower() == used.hex(), f"replay claims bytes_used {dr.get('bytes_used')}, stream {used.hex()}")
    need(json_eq(dr.get("skipped"), skipped), f"replay claims {dr.get('skipped')!r} skipped bytes, stream {skipped}")
    # P§20.1: hmac_blocks = ⌈(len(bytes_used) − 32)/32⌉ when positive, else 0.
    want_blocks = max(0, -(-(len(used) - 32) // 32))
    need(want_blocks == blocks, f"internal: {blocks} blocks generated, formula gives {want_blocks}")
    need(json_eq(dr.get("hmac_blocks"), blocks), f"replay claims {dr.get('hmac_blocks')!r} HMAC blocks, stream {blocks}")
    need(json_eq(be.get("total"), sum(dice)), f"replay bet_evaluated.total {be.get('total')!r} ≠ {sum(dice)}")
    out = res.get("outcome")
    need(isinstance(out, dict), "GET /api/v1/games result has no outcome")
    got = [out.get(f"die{i + 1}") for i in range(count)]
    need(got == dice, f"GET /api/v1/games result.outcome {got} ≠ {dice}")
    need(json_eq(out.get("total"), sum(dice)), "result.outcome.total ≠ the dice's sum")
    need(count == 3 or "die3" not in out, "a dice game's result shows a third die")
    return f"dice {dice} ({len(used)} bytes, {skipped} skipped, {blocks} extra blocks)"


def step_payout(c: Ctx) -> str:
    """G§3 (dice) / G§4 (Sic Bo): won and payout in whole cents, against replay bet_evaluated and
    the game result (P§12)."""
    bet = c.proof.get("bet") or {}
    game = bet.get("game")
    _, _, be = claimed(c)
    need(be, "no bet_evaluated replay step")
    res = c.game_result()
    need(res is not None, f"GET /api/v1/games/{c.game_id}: no result")
    if game == "rng":
        # P§20.1: bet_evaluated won/payout "null for raw RNG"; P§20.2: won, payout are "bets:" members.
        need(be.get("payout") is None and be.get("won") is None, "a raw RNG game claims a bet outcome")
        need("payout" not in res and "won" not in res, "a raw RNG game's result has a payout")
        return "raw RNG: no bet (none claimed)"
    rng = rng_value(output_y(c), c.game_id, bet.get("player_seed"))
    dice, *_ = roll_dice(rng, 2 if game == "dice" else 3)
    amount = cents(bet.get("amount"), "bet.amount")
    # GUESS(G35): G§5's limits are the operator's ("default 0.01 to 10000.00") and are published
    # nowhere (I§8 "not shown"), so only a positive stake is required.
    need(amount >= 1, f"amount {fmt_cents(amount)} is not positive")
    won, pay = (settle_dice if game == "dice" else settle_sicbo)(bet, dice, amount)
    for where, src in (("replay bet_evaluated", be), ("GET /api/v1/games result", res)):
        need(src.get("won") is won, f"{where} claims won={src.get('won')}, rules give {won}")
        need(cents(src.get("payout"), f"{where}.payout") == pay, f"{where} claims payout {src.get('payout')}, rules give {fmt_cents(pay)}")
    return f"{bet.get('bet_type')} {bet.get('target') or bet.get('combo') or ''} on {dice}: " + (f"wins {fmt_cents(pay)}" if won else "loses, 0.00")


def published_keys(c: Ctx):
    """`acceptance_keys` of GET / (P§11, §20.8); a record that cannot be fetched, or lacks the
    member, fails the step (P§13)."""
    root = c.src.record("/")
    need(root is not None, "GET /: cannot be fetched")
    keys = root.get("acceptance_keys")
    need(isinstance(keys, list) and all(isinstance(k, dict) for k in keys), "GET / has no acceptance_keys array")
    return keys


def acceptance_message(kind: int, number: int, lh: bytes, accepted_at_ms: int) -> bytes:
    """P§11: u8(17) ‖ "vrs/v2/acceptance" ‖ u8(kind) ‖ u64(number) ‖ leaf_hash ‖ u64(accepted_at_ms)."""
    return u8(17) + b"vrs/v2/acceptance" + u8(kind) + u64(number) + lh + u64(accepted_at_ms)


def v1_time_rule(c: Ctx, what: str) -> str:
    """P§13: "A null acceptance passes as a version-1 game only when bet_created_at_ms is before the
    earliest since_ms of the published keys (...; a key listed without since_ms counts from the
    beginning, and a proof without bet_created_at_ms fails once any key is published)"; "a null
    bet_epoch passes as version 1 under the same time rule".  "Before" is read as strictly before."""
    keys = published_keys(c)
    if not keys:
        return f"{what} null and no key published: version-1 game"
    created = c.proof.get("bet_created_at_ms")
    need(isinstance(created, int) and not isinstance(created, bool), f"{what} null and no bet_created_at_ms, while keys are published")
    since = [k.get("since_ms") for k in keys]
    earliest = 0 if any(s is None for s in since) else min(since)
    need(created < earliest, f"{what} null for a game accepted at {created}, after signing began ({earliest})")
    return f"{what} null: version-1 game, accepted before signing began"


def step_acceptance(c: Ctx) -> str:
    """P§11 "Signed acceptance", P§13: the stored acceptance verifies under a published key and
    signs this game's leaf, its epoch (vdfEpoch; P§21 "Moved games": moved_from for a moved game)
    or pool entry (pool_index), and bet_created_at_ms."""
    p = c.proof
    acc = p.get("acceptance")
    if acc is None:
        return v1_time_rule(c, "acceptance")
    need(isinstance(acc, dict), "acceptance is not an object")
    need(acc.get("version") == 2, f"acceptance version {acc.get('version')!r}")
    leaf = unhex(p.get("leaf"), None, "leaf")
    need(str(acc.get("leaf", "")).lower() == leaf.hex(), "acceptance signs another leaf")
    lh = leaf_hash(leaf)
    need(str(acc.get("leaf_hash", "")).lower() == lh.hex(), "acceptance.leaf_hash ≠ SHA-256(0x00 ‖ leaf)")
    if c.pool:
        need(acc.get("kind") == "pool", f"acceptance kind {acc.get('kind')!r} for a pool-served game")
        number = as_int(p.get("pool_index"), "pool_index")
        need(acc.get("pool_index") == number and acc.get("epoch") is None, "acceptance names another pool entry")
        kind = 2
    else:
        need(acc.get("kind") == "epoch", f"acceptance kind {acc.get('kind')!r} for an epoch game")
        number = as_int(p.get("moved_from"), "moved_from") if c.moved else as_int(p.get("vdfEpoch"), "vdfEpoch")
        need(acc.get("epoch") == number and acc.get("pool_index") is None,
             f"acceptance names another epoch ({acc.get('epoch')!r:.30}, not moved_from {number})" if c.moved
             else "acceptance names another epoch")
        kind = 1
    at = as_int(acc.get("accepted_at_ms"), "accepted_at_ms")
    need(json_eq(at, p.get("bet_created_at_ms")), f"accepted_at_ms {at} ≠ bet_created_at_ms {p.get('bet_created_at_ms')}")
    pub = unhex(acc.get("public_key"), 32, "public_key")
    listed = [str(k.get("public_key", "")).lower() for k in published_keys(c)]
    need(pub.hex() in listed, "signing key is not listed in acceptance_keys of GET /")
    sig = unhex(acc.get("signature"), 64, "signature")
    why = ed25519_verify_strict(pub, acceptance_message(kind, number, lh, at), sig)
    need(why is None, f"Ed25519 signature invalid: {why}")
    return f"Ed25519 by {pub.hex()[:16]}… over the leaf hash, {'epoch' if kind == 1 else 'pool entry'} {number}, {at} ms"


def step_result_hash(c: Ctx) -> str:
    """(Extra, P§17 "The game result hash"): result.result_hash of GET /api/v1/games/{id}, over
    proof.leaf (the bet leaf, also for a pool game), rngValue in 64 lowercase hex digits, the dice
    `3,5`, `true`/`false` and the payout; empty fields for raw RNG."""
    res = c.game_result()
    need(res is not None, f"GET /api/v1/games/{c.game_id}: no result")
    need(isinstance(res.get("result_hash"), str), "the resolved game's result has no result_hash (P§20.2)")
    leaf = unhex(c.proof.get("leaf"), None, "leaf")
    bet = c.proof.get("bet") or {}

    def fld(s: str) -> bytes:
        return f_field(s)

    rng = rng_value(output_y(c), c.game_id, bet.get("player_seed"))
    if bet.get("game") == "rng":
        dice_s = won_s = pay_s = ""
    else:
        dice, *_ = roll_dice(rng, 2 if bet.get("game") == "dice" else 3)
        won, pay = (settle_dice if bet.get("game") == "dice" else settle_sicbo)(bet, dice, cents(bet.get("amount"), "amount"))
        dice_s, won_s, pay_s = ",".join(map(str, dice)), ("true" if won else "false"), fmt_cents(pay)
    h = sha256(u8(18) + b"vrs/v1/game-result" + u32(len(leaf)) + leaf + fld(rng.hex()) + fld(dice_s) + fld(won_s) + fld(pay_s))
    need(h.hex() == str(res["result_hash"]).lower(), "result.result_hash ≠ SHA-256 of the recomputed result")
    return "result_hash commits to the recomputed leaf, rngValue, dice, won and payout"


def epoch_record_hash(e, T, bets_root, y_prev, x, y, l_, pi) -> bytes:
    """P§16: epoch_record_e."""
    return h_tag("vrs/v1/epoch-record", u64(e), u64(T), bets_root, y_prev, x, y, l_, pi)


def step_anchor_inclusion(c: Ctx) -> str:
    """P§16 "How to check an anchor by hand", steps 4-5, once the proof's anchor names a batch."""
    p = c.proof
    a = p.get("anchor")
    if not isinstance(a, dict) or a.get("batch") is None:
        status = a.get("status") if isinstance(a, dict) else None
        raise StepPend(f"not in an anchor batch yet (anchor status {status!r}, anchorTx {p.get('anchorTx')!r})")
    # P§13: "in a tree of the size the batch's ranges give (its epochs, then its pool batches, then
    # its notary batches)"; P§16: `to` exclusive; P§20.5: all three ranges are members.
    n_ep = as_int(a["epochs"]["last"], "epochs.last") - as_int(a["epochs"]["first"], "epochs.first") + 1
    n_pool = as_int(a["pool_batches"]["to"], "pool_batches.to") - as_int(a["pool_batches"]["from"], "pool_batches.from")
    nb = a["notary_batches"]
    n_not = as_int(nb["to"], "notary_batches.to") - as_int(nb["from"], "notary_batches.from")
    need(n_ep >= 1 and n_pool >= 0 and n_not >= 0, "the anchor batch's ranges are not ranges")
    size = n_ep + n_pool + n_not
    need(a.get("tree_size") == size, f"tree_size {a.get('tree_size')} ≠ {size} from the batch's ranges")
    if c.pool:
        b = as_int(p.get("pool_batch"), "pool_batch")
        leaf = b"\x02" + u64(b) + unhex(p.get("batch_root"), 32, "batch_root")
        pos = n_ep + (b - a["pool_batches"]["from"])
    else:
        e = as_int(p.get("vdfEpoch"), "vdfEpoch")
        # P§16: "y_{p(e)} (the input's previous output, previous_output)", and ℓ "32 bytes (RSA) or
        # 33 (class groups), as stored and published".
        rec = epoch_record_hash(e, as_int(p.get("iterations"), "iterations"), unhex(p.get("bets_root"), 32, "bets_root"),
                                unhex(p.get("previous_output"), c.group.elem_len, "previous_output"),
                                unhex(p.get("x"), c.group.elem_len, "x"), unhex(p.get("y"), c.group.elem_len, "y"),
                                unhex(p.get("l"), None, "l"), unhex(p.get("pi"), c.group.elem_len, "pi"))
        leaf = b"\x01" + u64(e) + rec
        pos = e - a["epochs"]["first"]
    need(leaf.hex() == str(a.get("leaf")).lower(), "anchor leaf differs from the recomputed one")
    need(str(a.get("leaf_hash")).lower() == leaf_hash(leaf).hex(), "anchor.leaf_hash ≠ SHA-256(0x00 ‖ leaf)")
    need(a.get("leaf_index") == pos, f"leaf_index {a.get('leaf_index')} ≠ canonical position {pos}")
    root = fold_path(leaf_hash(leaf), pos, size, a.get("audit_path") or [])
    need(root.hex() == str(a.get("root")).lower(), "audit path does not give the anchor root")
    _, bound = anchor_calldata(c, a, root)
    return (f"leaf {pos} of {size} under anchor root {root.hex()[:16]}… (batch {a.get('batch')}, tx {a.get('tx')}); "
            f"{bound}")


def anchor_calldata(c: Ctx, a: dict, root: bytes) -> tuple[str, str]:
    """P§16 "Binding": the calldata (`0x` hex) batch n's transaction must carry, and what binds it,
    under the verifier's policy; `anchor.calldata` must be it."""
    def rng(key, lo, hi):
        r = a.get(key)
        need(isinstance(r, dict), f"anchor.{key} is not an object")
        return as_int(r.get(lo), f"anchor.{key}.{lo}"), as_int(r.get(hi), f"anchor.{key}.{hi}")
    claim = AnchorEntry(as_int(a.get("batch"), "anchor.batch"), *rng("epochs", "first", "last"),
                        *rng("pool_batches", "from", "to"), *rng("notary_batches", "from", "to"), root)
    shown = str(a.get("calldata") or "").lower()
    floor = c.args.witness
    cd, detail = expected_anchor_calldata(claim, shown.startswith("0x" + b"vrs-anchor-v1:".hex()), a.get("log"),
                                          floor.policy if floor is not None else None)
    cd = "0x" + cd.hex()
    if a.get("calldata") is not None:
        need(str(a["calldata"]).lower() == cd, f"anchor.calldata is {a['calldata']}, but the batch's fields give {cd}")
    return cd, detail


# --- pool-served games (P§14) ----------------------------------------------------------------


def pool_row(c: Ctx):
    b = as_int(c.proof.get("pool_batch"), "pool_batch")
    row = c.src.pool_batch(b)
    need(row is not None, f"GET /api/v1/pool/batches/{b}: cannot be fetched")
    return b, row


# P§13: "the pairs are batch_root = root, previous_batch_root = previous_root, batch_first_index =
# first_index, batch_size = size, batch_seed = seed, batch_committed_at_ms = committed_at_ms,
# anchor_epoch = anchor_epoch, and b − 1's root = previous_batch_root".
PROOF_ROW_NAMES = {"batch_root": "root", "previous_batch_root": "previous_root", "batch_first_index": "first_index",
                   "batch_size": "size", "anchor_epoch": "anchor_epoch", "batch_seed": "seed",
                   "batch_committed_at_ms": "committed_at_ms"}


def step_pool_batch_chain(c: Ctx) -> str:
    """P§14 `pool_batch_chain`: root_{b−1} equals the published root of batch b − 1 (32 zero bytes
    for b = 1), and first_b ≤ i < first_b + size_b; P§13: the proof's copy of the batch row equals
    the published one, pair by pair."""
    p = c.proof
    b, row = pool_row(c)
    need(json_eq(row.get("number"), b), f"published batch is number {row.get('number')}")
    missing = [f"{k}/{k2}" for k, k2 in PROOF_ROW_NAMES.items() if k not in p or k2 not in row]
    need(not missing, f"a member is missing: {', '.join(missing)}")
    diff = [k for k, k2 in PROOF_ROW_NAMES.items() if not json_eq(p[k], row[k2])]
    need(not diff, f"proof's batch row differs from the published one in: {', '.join(diff)}")
    prev_root = unhex(row.get("previous_root"), 32, "previous_root")
    first, size = as_int(row.get("first_index"), "first_index"), as_int(row.get("size"), "size")
    need(size >= 1, "batch size < 1")
    if b == 1:
        need(prev_root == bytes(32), "batch 1 does not follow 32 zero bytes")
        need(first == 1, "first_1 ≠ 1")
    else:
        prow = c.src.pool_batch(b - 1)
        need(prow is not None, f"GET /api/v1/pool/batches/{b - 1}: cannot be fetched")
        need(json_eq(prow.get("root"), p.get("previous_batch_root")), f"previous_batch_root ≠ root of batch {b - 1}")
        need(unhex(prow.get("root"), 32, "root_{b-1}") == prev_root, f"previous_root ≠ root of batch {b - 1}")
        need(first == as_int(prow.get("first_index"), "first_{b-1}") + as_int(prow.get("size"), "size_{b-1}"),
             "first_b ≠ first_{b−1} + size_{b−1}")
    i = as_int(p.get("pool_index"), "pool_index")
    need(first <= i < first + size, f"entry {i} not in batch {b} ({first}..{first + size - 1})")
    return f"batch {b} follows root {prev_root.hex()[:16]}… and holds entries {first}..{first + size - 1}"


def step_pool_anchor(c: Ctx) -> str:
    """P§13: GET /api/v1/epochs/{anchor_epoch} "must be resolved, whose y must be y_anchor, and whose
    Wesolowski proof is verified too; the anchor epoch's own input and chain are checked by
    verifying a game of that epoch" (so only its proof here).  P§14: vdfEpoch is anchor_epoch_b."""
    p = c.proof
    _, row = pool_row(c)
    ae = as_int(row.get("anchor_epoch"), "anchor_epoch")
    need(json_eq(p.get("vdfEpoch"), ae), f"vdfEpoch {p.get('vdfEpoch')} ≠ anchor epoch {ae} (P§14)")
    rec = c.src.epoch(ae)
    need(rec is not None, f"GET /api/v1/epochs/{ae}: cannot be fetched")
    need(rec.get("status") == "resolved", f"anchor epoch {ae} is {rec.get('status')!r}, not resolved")
    need(str(rec.get("y")).lower() == str(p.get("anchor_y")).lower(), f"anchor_y ≠ y of epoch {ae}")
    c.group.verify_vdf(rec.get("x"), rec.get("y"), rec.get("pi"), rec.get("l"), rec.get("iterations"))
    return f"anchored to resolved epoch {ae}, whose proof verifies"


def batch_seed(b: int, prev_root: bytes, anchor_epoch: int, y_anchor: bytes) -> bytes:
    return h_tag("vrs/v1/pool-batch", u64(b), prev_root, u64(anchor_epoch), y_anchor)


def step_pool_batch_seed(c: Ctx) -> str:
    """P§14 "Batch seeds": batch_seed_b = H(u64(b) ‖ root_{b−1} ‖ u64(anchor_epoch_b) ‖ y_anchor)."""
    b, row = pool_row(c)
    ae = as_int(row.get("anchor_epoch"), "anchor_epoch")
    rec = c.src.epoch(ae)
    need(rec is not None, f"GET /api/v1/epochs/{ae}: cannot be fetched")
    s = batch_seed(b, unhex(row.get("previous_root"), 32, "previous_root"), ae, unhex(rec.get("y"), c.group.elem_len, "y_anchor"))
    need(s.hex() == str(row.get("seed")).lower(), "published batch seed ≠ H(b ‖ root_{b−1} ‖ anchor epoch ‖ y_anchor)")
    need(s.hex() == str(c.proof.get("batch_seed")).lower(), "proof's batch_seed ≠ recomputed")
    return f"batch_seed {s.hex()[:16]}…"


def step_pool_entry_input(c: Ctx) -> str:
    """P§14 "Entries": seed_i = H(batch_seed ‖ u64(i) ‖ r_i), x_i = hash_to_group(seed_i)."""
    p = c.proof
    _, row = pool_row(c)
    i = as_int(p.get("pool_index"), "pool_index")
    r = unhex(p.get("secret"), 32, "secret")  # P§20.1: proof.secret is r_i, 32 bytes
    s = h_tag("vrs/v1/pool-entry", unhex(row.get("seed"), 32, "seed"), u64(i), r)
    need(s.hex() == str(p.get("entry_seed")).lower(), "entry_seed ≠ recomputed seed_i")  # P§20.1
    x = c.group.input_from_seed(s)
    need(x.hex() == str(p.get("x")).lower(), "x ≠ hash_to_group(seed_i)")
    return f"x_{i} = hash_to_group(H(batch seed ‖ {i} ‖ revealed secret))"


def step_pool_inclusion(c: Ctx) -> str:
    """P§14 "Leaves and batch roots": leaf_i from the entry, its hash at i − first_b of the
    published leaf hashes, which give root_b; and the proof's audit path folds to root_b."""
    p, g = c.proof, c.group
    _, row = pool_row(c)
    i = as_int(p.get("pool_index"), "pool_index")
    T = as_int(p.get("iterations"), "iterations")
    leaf = (u8(16) + b"vrs/v1/pool-leaf" + u64(i) + u64(T) + unhex(p.get("x"), g.k, "x") + unhex(p.get("y"), g.k, "y")
            + unhex(p.get("l"), 32, "l") + unhex(p.get("pi"), g.k, "pi"))
    need(leaf.hex() == str(p.get("entry_leaf")).lower(), "entry_leaf ≠ recomputed leaf_i")  # P§20.1
    lh = leaf_hash(leaf)
    first, size = as_int(row.get("first_index"), "first_index"), as_int(row.get("size"), "size")
    pos = i - first
    hl = row.get("leaf_hashes")
    need(isinstance(hl, list), "the published batch has no leaf_hashes")
    hashes = [unhex(h, 32, "leaf_hashes[]") for h in hl]
    need(len(hashes) == size, f"published batch has {len(hashes)} leaf hashes, size {size}")
    need(0 <= pos < size and hashes[pos] == lh, f"published leaf hash {pos} is not entry {i}'s")
    root = unhex(row.get("root"), 32, "root")
    need(mth(hashes) == root, "published leaf hashes do not give root_b")
    # P§20.1: a pool-served proof's leaf_index is "entry i's position in its batch tree, i − first_b".
    need(json_eq(p.get("leaf_index"), pos), f"proof's leaf_index {p.get('leaf_index')} ≠ {pos}")
    audit = p.get("audit_path")
    need(isinstance(audit, list), "audit_path is not an array")
    need(fold_path(lh, pos, size, audit) == root, "proof's audit path does not give root_b")
    need(str(p.get("entry_leaf_hash")).lower() == lh.hex(), "entry_leaf_hash ≠ SHA-256(0x00 ‖ leaf_i)")
    return f"entry {i} is leaf {pos} of {size} under batch root {root.hex()[:16]}…"


def step_pool_committed(c: Ctx) -> str:
    """P§14 "Commitment before use": the batch's published commit time ≤ the bet's arrival."""
    _, row = pool_row(c)
    ct = as_int(row.get("committed_at_ms"), "committed_at_ms")  # P§13 pairs, P§20.6: the commit time, ms
    at = as_int(c.proof.get("bet_created_at_ms"), "bet_created_at_ms")
    need(ct <= at, f"batch committed at {ct}, after the bet arrived ({at})")
    return f"batch committed {at - ct} ms before the bet"


def step_pool_game_id(c: Ctx) -> str:
    """P§14 "Game id": game_id_i = hex of the first 16 bytes of H(u64(i) ‖ y_i); P§13: the published
    batch (P§20.6 `served[]`) names this game as the entry's consumer.  P§14 "Serving" (entries
    served "strictly in index order, each exactly once"): the batch's served entries are
    first_b, first_b + 1, … with no gap, and `unserved` counts the rest."""
    p = c.proof
    _, row = pool_row(c)
    i = as_int(p.get("pool_index"), "pool_index")
    gid = h_tag("vrs/v1/pool-game", u64(i), unhex(p.get("y"), c.group.k, "y"))[:16].hex()
    need(gid == c.game_id, f"game id ≠ game_id_i = {gid}")
    served_all = row.get("served")
    need(isinstance(served_all, list) and all(isinstance(s, dict) for s in served_all), "the batch has no served array")
    served = [s for s in served_all if s.get("index") == i]
    need(len(served) == 1 and served[0].get("game_id") == c.game_id, f"published batch does not name this game as entry {i}'s consumer")
    first = as_int(row.get("first_index"), "first_index")
    idxs = [s.get("index") for s in served_all]
    need(idxs == list(range(first, first + len(idxs))), f"served entries {idxs} are not {first}, {first + 1}, … in order (a gap)")
    need(json_eq(row.get("unserved"), as_int(row.get("size"), "size") - len(idxs)), f"unserved {row.get('unserved')!r} ≠ size − served")
    return f"game id = H(u64({i}) ‖ y_{i})[:16]; the batch names it as entry {i}'s consumer; {len(idxs)} served, no gap"


def verify_epoch_commitment(c: Ctx, E: int, rec: dict) -> str:
    """Recompute x_E from E's published fields (P§10) and verify E's proof (P§13).  Also (mine,
    GUESS(G32)) E's previous_output against y of p(E), so that its chain link is checked too."""
    version = rec.get("version")
    prev = previous_epoch_of(E, version, rec.get("previous_epoch"))
    yp = y_of_epoch(c, prev)
    need(yp.hex() == str(rec.get("previous_output")).lower(), f"epoch {E}'s previous_output ≠ y of epoch {prev}")
    seed = seed_from_fields(E, version, prev, rec.get("previous_output"), rec.get("bets_root"), rec.get("nonce"),
                            as_int(rec.get("iterations"), "iterations"), rec.get("opened_at_ms"), rec.get("closed_at_ms"),
                            rec.get("security_margin"), rec.get("squarings_per_second"), c.group.elem_len)
    x = c.group.input_from_seed(seed)
    need(x.hex() == str(rec.get("x")).lower(), f"epoch {E}'s x ≠ the input of its published fields")
    c.group.verify_vdf(rec.get("x"), rec.get("y"), rec.get("pi"), rec.get("l"), rec.get("iterations"), seed=seed)
    return "x and proof verify"


def step_pool_bet_inclusion(c: Ctx) -> str:
    """P§14 "Binding served bets", P§13: the leaf recomputed from the proof's bet equals `leaf`; its
    hash is at bet_epoch.leaf_index among the leaf_hashes of GET /api/v1/epochs/{E}, "which must give
    E's bets_root and bet_count"; once E is resolved, x_E from E's published fields and E's proof;
    pend until then.  P§20.1: status `pending` (pend), `bound`, `missing` (fails); a null
    leaf_index fails.  GUESS(G32): my additions, bet_epoch.audit_path folded, its tree_size and
    bets_root equal to E's, and the acceptance inside E's window (P§14: E is "the epoch open when
    the game was served")."""
    p = c.proof
    be = p.get("bet_epoch")
    if be is None:
        return v1_time_rule(c, "bet_epoch")
    leaf = bet_leaf_bytes(p.get("bet") or {})
    need(leaf.hex() == str(p.get("leaf")).lower(), "leaf ≠ the bet's fields")
    E = as_int(be.get("epoch"), "bet_epoch.epoch")
    need(be.get("status") in ("pending", "bound"), f"bet_epoch.status {be.get('status')!r}")
    # Whether E is still open is what E's own record says, never the proof: a proof calling a
    # resolved epoch "pending" must not excuse a bet missing from its tree (P§13).
    rec = c.src.epoch(E)
    need(rec is not None, f"GET /api/v1/epochs/{E}: cannot be fetched")
    if rec.get("status") == "open":
        raise StepPend(f"bet epoch {E} is still open")
    need(rec.get("status") in ("closed", "resolved"), f"bet epoch {E} is {rec.get('status')!r}")
    hl = rec.get("leaf_hashes")
    need(isinstance(hl, list), f"epoch {E} has no leaf_hashes")
    hashes = [unhex(h, 32, "leaf_hashes[]") for h in hl]
    need(json_eq(rec.get("bet_count"), len(hashes)), f"epoch {E}'s bet_count ≠ its {len(hashes)} leaf hashes")
    root = mth(hashes)
    need(root.hex() == str(rec.get("bets_root")).lower(), f"epoch {E}'s leaf hashes do not give its bets_root")
    need(leaf_hash(leaf) in hashes, f"the bet is not in epoch {E}'s committed tree ({len(hashes)} leaves)")
    idx = hashes.index(leaf_hash(leaf))
    # A proof read while E was open says "pending" and carries no copy of the binding.
    if be.get("status") == "bound":
        need(json_eq(be.get("leaf_index"), idx), f"bet_epoch.leaf_index is not the leaf's position {idx}")
        need(json_eq(be.get("tree_size"), len(hashes)), "bet_epoch.tree_size ≠ E's bet_count")
        need(json_eq(be.get("bets_root"), rec.get("bets_root")), "bet_epoch.bets_root ≠ E's bets_root")
        audit = be.get("audit_path")
        need(isinstance(audit, list), "bet_epoch.audit_path is not an array")
        need(fold_path(leaf_hash(leaf), idx, len(hashes), audit) == root, "bet_epoch.audit_path does not give bets_root")
    created = as_int(p.get("bet_created_at_ms"), "bet_created_at_ms")
    opened, closed = as_int(rec.get("opened_at_ms"), "opened_at_ms"), as_int(rec.get("closed_at_ms"), "closed_at_ms")
    need(opened <= created <= closed, f"served at {created}, outside epoch {E}'s window {opened}..{closed}")
    if rec.get("status") != "resolved":
        raise StepPend(f"leaf {idx} of epoch {E}'s tree; epoch {E} not resolved yet")
    verify_epoch_commitment(c, E, rec)
    return f"leaf {idx} of {len(hashes)} under epoch {E}'s bets root, which its input committed"
