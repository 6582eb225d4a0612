"""Tampering: alter one field at a time in the fetched JSON and require a step to FAIL."""

from __future__ import annotations

import copy
import decimal

from .classgroup import BQFC_GENERATOR, BQFC_IDENTITY
from .games import cents, fmt_cents
from .source import Source
from .run import print_results, verify_game


def _flip_hex(s: str) -> str:
    last = s[-1]
    return s[:-1] + ("1" if last != "1" else "2")


def _flip_hex_mid(s: str) -> str:
    i = len(s) // 2
    return s[:i] + ("1" if s[i] != "1" else "2") + s[i + 1:]


def tampers_for(game_id: str, cache: dict, group):
    """(label, function(cache)) pairs; each alters one thing in the fetched responses."""
    vpath = f"/api/v1/verify/{game_id}"
    gpath = f"/api/v1/games/{game_id}"
    proof = cache[vpath][1]["proof"]
    pool = proof.get("pool_served") is True
    game = (proof.get("bet") or {}).get("game")
    T = []

    def P(fn):
        return lambda cc: fn(cc[vpath][1]["proof"])

    def R(fn):  # the game result of GET /api/v1/games/{id}
        return lambda cc: fn(cc[gpath][1]["result"])

    def rec(path, fn):
        return lambda cc: fn(cc[path][1])

    def step(action, fn):
        def f(cc):
            hit = [s for s in cc[vpath][1]["replay_steps"] if s.get("action") == action]
            if not hit:
                raise KeyError(action)
            for s in hit:
                fn(s)
        return f

    def setp(k, v):
        return P(lambda p: p.__setitem__(k, v(p[k]) if callable(v) else v))

    # --- the VDF, the outcome and the bet (every game)
    T.append(("rngValue", setp("rngValue", _flip_hex)))
    T.append(("y", setp("y", _flip_hex_mid)))
    T.append(("pi", setp("pi", _flip_hex_mid)))
    T.append(("l", setp("l", _flip_hex)))
    T.append(("x", setp("x", _flip_hex_mid)))
    T.append(("iterations", setp("iterations", lambda v: v + 1)))
    T.append(("modulus (another group)", setp("modulus", "rsa2048" if group.id.lower() != "rsa2048" else "test512")))
    T.append(("modulus (upper case: group passes)", setp("modulus", lambda v: v.upper())))
    T.append(("veo_class", setp("veo_class", "VEO-WESOLOWSKI-RSA2048X")))
    if group.kind == "rsa":
        T.append(("modulus_n", setp("modulus_n", _flip_hex_mid)))
    T.append(("leaf (one byte)", setp("leaf", _flip_hex)))
    T.append(("bet.game_id", P(lambda p: p["bet"].__setitem__("game_id", "0" * 32))))
    T.append(("bet.player_seed", P(lambda p: p["bet"].__setitem__("player_seed", (p["bet"].get("player_seed") or "") + "x"))))
    T.append(("bet.player_id", P(lambda p: p["bet"].__setitem__("player_id", "mallory"))))
    T.append(("bet_created_at_ms", setp("bet_created_at_ms", lambda v: v + 1)))
    T.append(("bet_created_at_ms as a string (type)", setp("bet_created_at_ms", lambda v: str(v))))
    T.append(("acceptance.signature", P(lambda p: p["acceptance"].__setitem__("signature", _flip_hex_mid(p["acceptance"]["signature"])))))
    T.append(("acceptance.accepted_at_ms", P(lambda p: p["acceptance"].__setitem__("accepted_at_ms", p["acceptance"]["accepted_at_ms"] - 1))))
    T.append(("acceptance.public_key", P(lambda p: p["acceptance"].__setitem__("public_key", _flip_hex(p["acceptance"]["public_key"])))))
    T.append(("acceptance removed (null)", setp("acceptance", None)))
    T.append(("acceptance key not published", rec("/", lambda r: r.__setitem__("acceptance_keys", [{"public_key": "00" * 32, "since_ms": 0}]))))
    T.append(("acceptance_keys absent from GET /", rec("/", lambda r: r.pop("acceptance_keys"))))
    # --- replay copies and the claimed outcome
    T.append(("replay order (two steps swapped)", lambda cc: cc[vpath][1]["replay_steps"].reverse()))
    T.append(("replay vdf_epoch_published.output", step("vdf_epoch_published", lambda s: s.__setitem__("output", _flip_hex_mid(s["output"])))))
    T.append(("replay bet_committed.leaf_index", step("bet_committed", lambda s: s.__setitem__("leaf_index", s["leaf_index"] + 1))))
    T.append(("replay bet_committed.accepted_at", step("bet_committed", lambda s: s.__setitem__("accepted_at", s["accepted_at"] - 1))))
    T.append(("replay randomness_derived.key", step("randomness_derived", lambda s: s.__setitem__("key", _flip_hex_mid(s["key"])))))
    T.append(("replay randomness_derived.message", step("randomness_derived", lambda s: s.__setitem__("message", s["message"] + "00"))))
    T.append(("replay randomness_derived.rngValue", step("randomness_derived", lambda s: s.__setitem__("rngValue", _flip_hex(s["rngValue"])))))
    T.append(("replay randomness_derived.player_seed", step("randomness_derived", lambda s: s.__setitem__("player_seed", "zz"))))
    T.append(("games result entropy", R(lambda r: r.__setitem__("entropy", _flip_hex_mid(r["entropy"])))))
    T.append(("games result rngValue", R(lambda r: r.__setitem__("rngValue", _flip_hex(r["rngValue"])))))
    T.append(("games result result_hash", R(lambda r: r.__setitem__("result_hash", _flip_hex(r["result_hash"])))))
    T.append(("games result.proof.y (copy)", R(lambda r: r["proof"].__setitem__("y", _flip_hex_mid(r["proof"]["y"])))))
    T.append(("games result.epoch", R(lambda r: r.__setitem__("epoch", (r.get("epoch") or 0) + 1))))
    T.append(("games result.verify_url", R(lambda r: r.__setitem__("verify_url", "/api/v1/verify/x"))))
    T.append(("games replay (copy)", lambda cc: cc[gpath][1]["replay"][2].__setitem__("rngValue", "00" * 32)))
    if game != "rng":
        T.append(("replay bytes_used", step("dice_rolled", lambda s: s.__setitem__("bytes_used", _flip_hex(s["bytes_used"])))))
        T.append(("replay skipped", step("dice_rolled", lambda s: s.__setitem__("skipped", s["skipped"] + 1))))
        T.append(("replay hmac_blocks", step("dice_rolled", lambda s: s.__setitem__("hmac_blocks", s["hmac_blocks"] + 1))))
        T.append(("replay hmac_blocks absent", step("dice_rolled", lambda s: s.pop("hmac_blocks"))))
        T.append(("replay bet_evaluated.total", step("bet_evaluated", lambda s: s.__setitem__("total", s["total"] + 1))))
        T.append(("replay bet_evaluated.amount", step("bet_evaluated", lambda s: s.__setitem__("amount", "9.99"))))
        T.append(("games result bet_type", R(lambda r: r.__setitem__("bet_type", "xx"))))
        T.append(("games result amount", R(lambda r: r.__setitem__("amount", "9.99"))))
        T.append(("bet.amount", P(lambda p: p["bet"].__setitem__("amount", fmt_cents(cents(p["bet"]["amount"], "") + 100)))))
        T.append(("bet.amount 3 decimals", P(lambda p: p["bet"].__setitem__("amount", p["bet"]["amount"] + "0"))))
        T.append(("replay dice value", step("dice_rolled", lambda s: s["dice"].__setitem__(0, s["dice"][0] % 6 + 1))))
        T.append(("games result die1", R(lambda r: r["outcome"].__setitem__("die1", r["outcome"]["die1"] % 6 + 1))))
        T.append(("games result outcome.total", R(lambda r: r["outcome"].__setitem__("total", r["outcome"]["total"] + 1))))
        T.append(("replay payout", step("bet_evaluated", lambda s: s.__setitem__("payout", fmt_cents(cents(s["payout"], "") + 1)))))
        T.append(("replay won", step("bet_evaluated", lambda s: s.__setitem__("won", not s["won"]))))
        T.append(("games result payout", R(lambda r: r.__setitem__("payout", fmt_cents(cents(r["payout"], "") + 1)))))
        T.append(("games result won", R(lambda r: r.__setitem__("won", not r["won"]))))
        bt = proof["bet"].get("bet_type")
        if proof["bet"].get("target") is not None:
            T.append(("bet.target", P(lambda p: p["bet"].__setitem__("target", p["bet"]["target"] + 1 if p["bet"]["target"] < (12 if game == "dice" else 6) else p["bet"]["target"] - 1))))
            T.append(("bet.target as a string", P(lambda p: p["bet"].__setitem__("target", str(p["bet"]["target"])))))
        else:
            T.append(("bet.target on a type that takes none", P(lambda p: p["bet"].__setitem__("target", 7))))
        if bt == "combo":
            T.append(("bet.combo", P(lambda p: p["bet"].__setitem__("combo", [p["bet"]["combo"][0], 6 if p["bet"]["combo"][1] != 6 else 5]))))
            T.append(("bet.combo descending", P(lambda p: p["bet"].__setitem__("combo", p["bet"]["combo"][::-1]))))
        other = {"dice": {"odd": "even", "even": "odd", "over7": "under7", "under7": "over7"},
                 "sicbo": {"big": "small", "small": "big", "odd": "even", "even": "odd"}}[game].get(bt)
        if other:
            T.append(("bet.bet_type", P(lambda p: p["bet"].__setitem__("bet_type", other))))
    else:
        T.append(("raw RNG claims dice", step("dice_rolled", lambda s: s.__setitem__("dice", [1, 2]))))
        T.append(("raw RNG claims a payout", step("bet_evaluated", lambda s: s.__setitem__("payout", "1.00"))))
        T.append(("raw RNG result.client_seed", R(lambda r: r.__setitem__("client_seed", "other"))))
        T.append(("raw RNG result.random", R(lambda r: r.__setitem__("random", _flip_hex(r["random"])))))
        T.append(("raw RNG leaf with a bet_type", P(lambda p: p["bet"].__setitem__("bet_type", "odd"))))
    if not pool:
        e = proof["vdfEpoch"]
        epath = f"/api/v1/epochs/{e}"
        T.append(("leaf_hash", setp("leaf_hash", _flip_hex)))
        T.append(("bets_root", setp("bets_root", _flip_hex)))
        T.append(("leaf_index", setp("leaf_index", lambda v: v + 1)))
        T.append(("bet_count", setp("bet_count", lambda v: v + 1)))
        if proof.get("audit_path"):
            T.append(("audit_path node", P(lambda p: p["audit_path"].__setitem__(0, _flip_hex(p["audit_path"][0])))))
        T.append(("previous_output", setp("previous_output", _flip_hex_mid)))
        T.append(("epoch_seed", setp("epoch_seed", _flip_hex)))
        T.append(("vdfEpoch", setp("vdfEpoch", lambda v: v + 1)))
        T.append(("timing.nonce", P(lambda p: p["timing"].__setitem__("nonce", _flip_hex(p["timing"]["nonce"])))))
        for k in ("opened_at_ms", "closed_at_ms", "squarings_per_second", "deadline_ms"):
            T.append((f"timing.{k}", P(lambda p, k=k: p["timing"].__setitem__(k, p["timing"][k] - 1))))
        T.append(("timing.security_margin", P(lambda p: p["timing"].__setitem__("security_margin", decimal.Decimal("1.49")))))
        T.append(("timing.security_margin 3 decimals", P(lambda p: p["timing"].__setitem__("security_margin", p["timing"]["security_margin"] + decimal.Decimal("0.001")))))
        T.append(("timing.previous_epoch", P(lambda p: p["timing"].__setitem__("previous_epoch", p["timing"]["previous_epoch"] - 1))))
        T.append(("timing.version 1", P(lambda p: p["timing"].__setitem__("version", 1))))
        T.append(("timing.prior_resolved_at_ms (copy)", P(lambda p: p["timing"].__setitem__("prior_resolved_at_ms", (p["timing"]["prior_resolved_at_ms"] or 0) + 1))))
        if e >= 2:
            T.append((f"epochs/{e - 1} resolved before the close", rec(f"/api/v1/epochs/{e - 1}", lambda r: r.__setitem__("resolved_at_ms", proof["timing"]["closed_at_ms"] - 1))))
            T.append((f"epochs/{e - 1} closed after e opened", rec(f"/api/v1/epochs/{e - 1}", lambda r: r.__setitem__("closed_at_ms", proof["timing"]["opened_at_ms"] + 1))))
            T.append((f"epochs/{e - 1} unpublished (404)", lambda cc: cc.__setitem__(f"/api/v1/epochs/{e - 1}", (404, {"error": "no epoch"}))))
        pe = proof["timing"]["previous_epoch"]
        if pe >= 1:
            T.append((f"epochs/{pe}.y (chain)", rec(f"/api/v1/epochs/{pe}", lambda r: r.__setitem__("y", _flip_hex_mid(r["y"])))))
            T.append((f"epochs/{pe}.iterations (T_p)", rec(f"/api/v1/epochs/{pe}", lambda r: r.__setitem__("iterations", r["iterations"] * 100))))
        T.append((f"epochs/{e}.leaf_hashes (one more)", rec(epath, lambda r: r["leaf_hashes"].append("00" * 32))))
        T.append((f"epochs/{e} not resolved", rec(epath, lambda r: r.__setitem__("status", "closed"))))
        T.append((f"epochs/{e} unpublished (404)", lambda cc: cc.__setitem__(epath, (404, {"error": "no epoch"}))))
        # P§13 `epoch_record`: each record member of its pairs, altered in the record alone.
        for k in ("modulus", "iterations", "previous_output", "bets_root", "bet_count", "x", "y", "pi", "l", "version",
                  "previous_epoch", "nonce", "opened_at_ms", "closed_at_ms", "security_margin",
                  "squarings_per_second", "deadline_ms"):
            def alter(r, k=k):
                v = r[k]
                if isinstance(v, bool) or v is None:
                    r[k] = 0
                elif isinstance(v, int):
                    r[k] = v + 1
                elif isinstance(v, decimal.Decimal):
                    r[k] = v + decimal.Decimal("0.01")
                elif k == "modulus":
                    r[k] = v.upper()
                else:
                    r[k] = _flip_hex_mid(v)
            T.append((f"epochs/{e}.{k} (record only)", rec(epath, alter)))
        T.append((f"epochs/{e}.deadline_ms absent", rec(epath, lambda r: r.pop("deadline_ms"))))
        T.append(("window longer than the bound", P(lambda p: p["timing"].__setitem__("closed_at_ms", p["timing"]["closed_at_ms"] + 10**6))))
        if group.kind == "classgroup":
            T.append(("discriminant", setp("discriminant", _flip_hex)))
            T.append(("discriminant_bits", setp("discriminant_bits", lambda v: v + 8)))
            T.append(("pi = identity", setp("pi", BQFC_IDENTITY.hex())))
            T.append(("y = generator", setp("y", BQFC_GENERATOR.hex())))
            T.append(("y with a nonzero pad byte", setp("y", lambda v: v[:-2] + "01")))
    else:
        b = proof["pool_batch"]
        bpath = f"/api/v1/pool/batches/{b}"
        T.append(("pool secret", setp("secret", _flip_hex)))
        T.append(("pool_index", setp("pool_index", lambda v: v + 1)))
        T.append(("pool_batch", setp("pool_batch", lambda v: v + 1 if v == 1 else v - 1)))
        T.append(("entry_seed", setp("entry_seed", _flip_hex)))
        T.append(("entry_leaf_hash", setp("entry_leaf_hash", _flip_hex)))
        T.append(("anchor_y", setp("anchor_y", _flip_hex_mid)))
        T.append(("entry_leaf", setp("entry_leaf", _flip_hex)))
        T.append(("leaf_index (batch position)", setp("leaf_index", lambda v: v + 1)))
        if proof.get("audit_path"):
            T.append(("entry audit_path node", P(lambda p: p["audit_path"].__setitem__(0, _flip_hex(p["audit_path"][0])))))
        # P§13's row pairs, each altered in the proof's copy alone.
        for k in ("batch_root", "previous_batch_root", "batch_seed"):
            T.append((f"proof.{k} (copy)", setp(k, _flip_hex)))
        for k in ("batch_first_index", "batch_size", "batch_committed_at_ms", "anchor_epoch"):
            T.append((f"proof.{k} (copy)", setp(k, lambda v: v + 1)))
        T.append(("published batch leaf hash", rec(bpath, lambda r: r["leaf_hashes"].__setitem__(proof["pool_index"] - proof["batch_first_index"], "00" * 32))))
        T.append(("published batch root", rec(bpath, lambda r: r.__setitem__("root", _flip_hex(r["root"])))))
        T.append(("published previous_root", rec(bpath, lambda r: r.__setitem__("previous_root", _flip_hex(r["previous_root"])))))
        T.append(("published seed", rec(bpath, lambda r: r.__setitem__("seed", _flip_hex(r["seed"])))))
        T.append(("published size", rec(bpath, lambda r: r.__setitem__("size", r["size"] + 1))))
        T.append(("published unserved", rec(bpath, lambda r: r.__setitem__("unserved", r["unserved"] + 1))))
        T.append(("published committed_at (seconds)", rec(bpath, lambda r: r.__setitem__("committed_at", r["committed_at"] + 1))))
        T.append(("batch committed after the bet", rec(bpath, lambda r: r.__setitem__("committed_at_ms", proof["bet_created_at_ms"] + 1))))
        T.append(("consumer of the entry", rec(bpath, lambda r: [s.__setitem__("game_id", "f" * 32) for s in r["served"] if s["index"] == proof["pool_index"]])))
        T.append(("a gap in the served entries", rec(bpath, lambda r: r["served"].pop(0) if r["served"][0]["index"] != proof["pool_index"] else r["served"].append(dict(r["served"][0], index=r["first_index"] + r["size"] + 5)))))
        T.append(("batch unpublished (404)", lambda cc: cc.__setitem__(bpath, (404, {"error": "no batch"}))))
        if b >= 2:
            T.append((f"pool/batches/{b - 1}.root", rec(f"/api/v1/pool/batches/{b - 1}", lambda r: r.__setitem__("root", _flip_hex(r["root"])))))
        ae = proof["anchor_epoch"]
        T.append((f"epochs/{ae}.pi (anchor epoch)", rec(f"/api/v1/epochs/{ae}", lambda r: r.__setitem__("pi", _flip_hex_mid(r["pi"])))))
        T.append((f"epochs/{ae}.y (anchor epoch)", rec(f"/api/v1/epochs/{ae}", lambda r: r.__setitem__("y", _flip_hex_mid(r["y"])))))
        be = proof.get("bet_epoch") or {}
        T.append(("bet_epoch.status missing", P(lambda p: p["bet_epoch"].__setitem__("status", "missing"))))
        T.append(("bet_epoch removed (null)", setp("bet_epoch", None)))
        if be.get("status") == "bound":
            E = be["epoch"]
            T.append(("bet_epoch.leaf_index", P(lambda p: p["bet_epoch"].__setitem__("leaf_index", p["bet_epoch"]["leaf_index"] + 1))))
            T.append(("bet_epoch.leaf_index null", P(lambda p: p["bet_epoch"].__setitem__("leaf_index", None))))
            T.append(("bet_epoch.tree_size", P(lambda p: p["bet_epoch"].__setitem__("tree_size", p["bet_epoch"]["tree_size"] + 1))))
            T.append(("bet_epoch.bets_root", P(lambda p: p["bet_epoch"].__setitem__("bets_root", _flip_hex(p["bet_epoch"]["bets_root"])))))
            if be.get("audit_path"):
                T.append(("bet_epoch.audit_path node", P(lambda p: p["bet_epoch"]["audit_path"].__setitem__(0, _flip_hex(p["bet_epoch"]["audit_path"][0])))))
            T.append((f"epochs/{E} bet leaf hash", rec(f"/api/v1/epochs/{E}", lambda r: r["leaf_hashes"].__setitem__(be["leaf_index"], "00" * 32))))
            T.append((f"epochs/{E}.nonce (bet epoch input)", rec(f"/api/v1/epochs/{E}", lambda r: r.__setitem__("nonce", _flip_hex(r["nonce"])))))
            T.append((f"epochs/{E}.closed_at_ms before the bet", rec(f"/api/v1/epochs/{E}", lambda r: r.__setitem__("closed_at_ms", proof["bet_created_at_ms"] - 1))))
    return T


def run_tamper(game_id, src, group, args) -> bool:
    base = verify_game(game_id, src, group, args)
    print_results(game_id, base)
    if any(s == "FAIL" for _, s, _ in base):
        print("  tamper: the untampered game does not pass; not tampering")
        return False
    if any(n == "resolved" for n, _, _ in base):
        print("  tamper: game not resolved")
        return False
    cache = src.cache
    ok = True
    n = caught = 0
    for label, fn in tampers_for(game_id, cache, group):
        n += 1
        cc = copy.deepcopy(cache)
        try:
            fn(cc)
        except (KeyError, TypeError, IndexError, AttributeError) as e:
            ok = False
            print(f"  tamper {label:<38} NOT APPLIED (field absent: {e!r})")
            continue
        # The tampered copy is served from memory; anything it newly refers to is fetched live.
        res = verify_game(game_id, Source(src.server, cc), group, args, live=False)
        fails = [(name, r) for name, st, r in res if st == "FAIL"]
        if fails:
            caught += 1
            if args.verbose:
                print(f"  tamper {label:<38} caught by {', '.join(name for name, _ in fails)}: {fails[0][1][:90]}")
        else:
            ok = False
            print(f"  tamper {label:<38} NOT CAUGHT")
    print(f"  tamper: {caught} of {n} alterations caught")
    return ok
