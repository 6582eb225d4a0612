#!/usr/bin/env python3
"""Offline checks of vrs_docs_verify.py's building blocks (no server needed):
the worked examples of GAMES.md §6, Baillie-PSW on small numbers, Ed25519 (RFC 8032 §7.1
tests 1 and 2, plus strictness), RFC 6962 tree/path folding, the class-group law and bqfc
round trips, PROTOCOL §18's xgcd_partial (Lehmer) where it differs from plain Euclid, the
anchor-leaf step on a synthetic anchor batch, the dice/Sic Bo payout tables of GAMES.md §3-§4
(multipliers, winning-outcome counts, house edges), hmac_blocks (PROTOCOL §20.1), the JSON
comparison of `epoch_record` (§13), and whether the embedded §20 member table is current.

    python3 tools/docs-verifier/test_offline.py"""
import argparse
import itertools
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vrs_docs_verify as v  # noqa: E402


def test_games_worked_example():
    y = bytes(range(1, 65))
    gid = "0123456789abcdef0123456789abcdef"
    r = v.rng_value(y, gid, "lucky")
    assert r.hex() == "e94bba8eb7923ebd2bc4a789e0c0de16070e66afbf3acb57fabb6c174843d336"
    assert v.rng_value(y, gid, None).hex() == "4bac22548031788f86f3a049bd5685e8bbe0700cd9ee4f40452701d759e0b20a"
    assert v.rng_value(y, gid, "") == v.rng_value(y, gid, None)
    assert v.roll_dice(r, 2)[0] == [6, 4] and v.roll_dice(r, 3)[0] == [6, 4, 1]
    assert v.settle_dice({"bet_type": "over7"}, [6, 4], 100) == (True, 237)
    assert v.settle_sicbo({"bet_type": "total", "target": 10}, [6, 4, 1], 250) == (False, 0)
    assert v.settle_sicbo({"bet_type": "total", "target": 10}, [6, 3, 1], 250) == (True, 1750)
    assert v.roll_dice(r, 40)[0][32:38] == [6, 6, 3, 3, 2, 6]
    r2 = v.rng_value(y, gid, "lucky-20")
    assert r2.hex() == "63fd6a4c78e4d0b91e372182e75130924489f583ab532aa3cbb15fc1924e27af"
    dice, used, skipped, blocks = v.roll_dice(r2, 3)
    assert dice == [4, 5, 5] and len(used) == 4 and skipped == 1 and blocks == 0
    assert v.settle_sicbo({"bet_type": "total", "target": 14}, dice, 100) == (True, 1300)


def test_dice_table():
    # GAMES.md §3: 1.00 returns 35.64, 17.82, 11.88, 8.91, 7.12, 5.94; over/under 2.37; odd/even 1.98
    want = {2: 3564, 3: 1782, 4: 1188, 5: 891, 6: 712, 7: 594, 8: 712, 9: 891, 10: 1188, 11: 1782, 12: 3564}
    for t, c in want.items():
        a, b = (t - 1, 1) if t <= 7 else (6, t - 6)
        assert v.settle_dice({"bet_type": "exact", "target": t}, [a, b], 100) == (True, c)
    assert v.settle_dice({"bet_type": "exact", "target": 2}, [1, 1], 1000) == (True, 35640)
    assert v.settle_dice({"bet_type": "under7"}, [1, 2], 100) == (True, 237)
    assert v.settle_dice({"bet_type": "odd"}, [1, 2], 100) == (True, 198)
    assert v.settle_dice({"bet_type": "over7"}, [3, 4], 100) == (False, 0)
    assert v.settle_dice({"bet_type": "under7"}, [3, 4], 100) == (False, 0)


def test_sicbo_edges():
    # GAMES.md §4: winning-outcome counts and house edges over all 216 outcomes
    rolls = list(itertools.product(range(1, 7), repeat=3))

    def stats(bet):
        wins = [v.settle_sicbo(bet, list(d), 100) for d in rolls]
        n = sum(1 for w, _ in wins if w)
        edge = 1 - sum(p for _, p in wins) / 100 / 216
        return n, round(edge * 100, 2)

    assert stats({"bet_type": "big"}) == (105, 2.78)
    assert stats({"bet_type": "small"}) == (105, 2.78)
    assert stats({"bet_type": "odd"}) == (105, 2.78)
    assert stats({"bet_type": "even"}) == (105, 2.78)
    assert stats({"bet_type": "single", "target": 3})[1] == 7.87
    assert stats({"bet_type": "double", "target": 3}) == (16, 18.52)
    assert stats({"bet_type": "triple", "target": 3}) == (1, 16.2)
    assert stats({"bet_type": "anyTriple"}) == (6, 13.89)
    assert stats({"bet_type": "combo", "combo": [2, 5]}) == (30, 16.67)
    totals = {4: (3, 15.28), 5: (6, 13.89), 6: (10, 16.67), 7: (15, 9.72), 8: (21, 12.5), 9: (25, 18.98), 10: (27, 12.5)}
    for t, want in totals.items():
        assert stats({"bet_type": "total", "target": t}) == want, t
        assert stats({"bet_type": "total", "target": 21 - t}) == want, 21 - t


def test_bpsw():
    small = [p for p in range(2, 3000) if v.is_probable_prime(p)]
    sieve = [p for p in range(2, 3000) if all(p % q for q in range(2, int(p ** 0.5) + 1))]
    assert small == sieve
    assert v.is_probable_prime(2 ** 127 - 1) and v.is_probable_prime(2 ** 521 - 1)
    for c in (561, 3215031751, 2047, 1373653, 25326001, (2 ** 64 + 13) ** 2, 5459 * 5777, 2 ** 128 + 1):
        assert not v.is_probable_prime(c), c


def test_ed25519():
    pub = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
    sig = bytes.fromhex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
    assert v.ed25519_verify_strict(pub, b"", sig) is None
    assert v.ed25519_verify_strict(pub, b"x", sig) is not None
    pub2 = bytes.fromhex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c")
    sig2 = bytes.fromhex("92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00")
    assert v.ed25519_verify_strict(pub2, bytes([0x72]), sig2) is None
    # S + L (non-canonical S) is refused
    s = int.from_bytes(sig[32:], "little") + v.ED_L
    assert v.ed25519_verify_strict(pub, b"", sig[:32] + s.to_bytes(32, "little")) == "S ≥ L"
    # a small-order public key (the identity) is refused
    ident = (1).to_bytes(32, "little")
    assert v.ed25519_verify_strict(ident, b"", sig) is not None
    # non-canonical y (y = p) is refused
    assert v._ed_decode(v.ED_P.to_bytes(32, "little")) is None


def test_merkle():
    hs = [v.sha256(bytes([i])) for i in range(13)]
    root = v.mth(hs)
    for n in range(1, 14):
        r = v.mth(hs[:n])
        for i in range(n):
            path = audit_path(hs[:n], i)
            assert v.fold_path(hs[i], i, n, [p.hex() for p in path]) == r
    assert root == v.mth(hs)
    assert v.mth([]) == v.sha256(b"")


def audit_path(hs, i):
    """RFC 6962 PATH(m, D[n])."""
    n = len(hs)
    if n == 1:
        return []
    k = 1
    while k * 2 < n:
        k *= 2
    if i < k:
        return audit_path(hs[:k], i) + [v.mth(hs[k:])]
    return audit_path(hs[k:], i - k) + [v.mth(hs[:k])]


def test_classgroup():
    rnd = random.Random(7)
    D = v.create_discriminant(b"\x00" * 32, 512)
    assert -D % 8 == 7 and (-D).bit_length() == 512 and v.is_probable_prime(-D)
    g = v.form_from_ab(2, 1, D)
    assert v.bqfc_encode(g, D) == v.BQFC_GENERATOR
    assert v.bqfc_encode(v.form_from_ab(1, 1, D), D) == v.BQFC_IDENTITY
    for _ in range(100):
        f = v.form_pow(g, rnd.getrandbits(80), D)
        assert f.is_reduced() and f.disc == D
        assert tuple(v.bqfc_decode(v.bqfc_encode(f, D), D, "f"))[:2] == f[:2]
    a, b = rnd.getrandbits(50), rnd.getrandbits(50)
    assert v.compose(v.form_pow(g, a, D), v.form_pow(g, b, D), D) == v.form_pow(g, a + b, D)
    # a Wesolowski proof computed here verifies, and a wrong T does not
    T = 300
    y = v.form_pow(g, 2 ** T, D)
    B = v.hash_prime(v.bqfc_encode(g, D) + v.bqfc_encode(y, D), 264, [263])
    pi = v.form_pow(g, 2 ** T // B, D)
    grp = v.ClassGroupVdf(512)
    grp._disc[b"s"] = D
    grp.verify_vdf(v.BQFC_GENERATOR.hex(), v.bqfc_encode(y, D).hex(), v.bqfc_encode(pi, D).hex(), f"{B:066x}", T, seed=b"s")
    try:
        grp.verify_vdf(v.BQFC_GENERATOR.hex(), v.bqfc_encode(y, D).hex(), v.bqfc_encode(pi, D).hex(), f"{B:066x}", T + 1, seed=b"s")
        raise AssertionError("wrong T accepted")
    except v.StepFail:
        pass


def test_rsa_small_proof():
    g = v.make_group("test512")
    x = g.hash_to_group(b"\x01" * 32)
    for T in (1, 2, 255, 256, 1000):
        y = g.canon(pow(x, 2 ** T, g.N))
        l_ = g.hash_to_prime(x, y, T)
        pi = g.canon(pow(x, 2 ** T // l_, g.N))
        assert (pi == 1) == (T < 256)
        g.verify_vdf(g.enc(x).hex(), g.enc(y).hex(), g.enc(pi).hex(), f"{l_:064x}", T)
    try:  # a non-canonical y (N - y) is refused
        g.verify_vdf(g.enc(x).hex(), g.enc(g.N - y).hex(), g.enc(pi).hex(), f"{l_:064x}", T)
        raise AssertionError("non-canonical y accepted")
    except v.StepFail:
        pass


def test_anchor_synthetic():
    """The anchor step on a batch built by the rules of PROTOCOL §16 (epochs 5..8, pool batches 2..3)."""
    g = v.make_group("test512")
    e = 6
    p = {"vdfEpoch": e, "iterations": 10, "bets_root": "11" * 32, "previous_output": "22" * 64, "x": "33" * 64,
         "y": "44" * 64, "l": "55" * 32, "pi": "66" * 64}
    rec = v.epoch_record_hash(e, 10, bytes.fromhex(p["bets_root"]), bytes.fromhex(p["previous_output"]),
                              bytes.fromhex(p["x"]), bytes.fromhex(p["y"]), bytes.fromhex(p["l"]), bytes.fromhex(p["pi"]))
    leaves = [b"\x01" + v.u64(n) + (rec if n == e else v.sha256(bytes([n]))) for n in range(5, 9)]
    leaves += [b"\x02" + v.u64(b) + v.sha256(b"pool" + bytes([b])) for b in (2, 3)]
    hs = [v.leaf_hash(lf) for lf in leaves]
    root = v.mth(hs)
    idx = e - 5
    p["anchor"] = {"batch": 1, "epochs": {"first": 5, "last": 8}, "pool_batches": {"from": 2, "to": 4},
                   "notary_batches": {"from": 1, "to": 1}, "leaf": leaves[idx].hex(),
                   "leaf_hash": v.leaf_hash(leaves[idx]).hex(), "leaf_index": idx,
                   "tree_size": 6, "audit_path": [h.hex() for h in audit_path(hs, idx)], "root": root.hex(),
                   "calldata": "0x7672732d616e63686f722d76313a" + root.hex(), "tx": None}
    c = type("C", (), {})()
    # No witness policy: the version-1 calldata passes, saying it binds no batch number.
    c.proof, c.pool, c.group, c.args = p, False, g, argparse.Namespace(witness=None)
    assert "leaf 1 of 6" in v.step_anchor_inclusion(c)
    p["anchor"]["tree_size"] = 7
    try:
        v.step_anchor_inclusion(c)
        raise AssertionError("wrong tree size accepted")
    except v.StepFail:
        pass


# A reduced form of a 1024-bit discriminant where PROTOCOL §18's xgcd_partial (Lehmer, 64-bit
# words) stops one step past the exact Euclidean stop; found by enumerating random forms
# (22 of 24,586 forms of 1024-bit discriminants, none of 45,028 of 512-bit ones).
D1024 = -int("e17cd99dc0299a0a0a5561bb456026a00e8b9b8c3776d561cf00c529ff30bce89f6240bbc2721c17afc250ae7f9d9e9185a49e38e9"
             "8898528e40f5538629783d61599a8707a9aecdc2dbf9c0050ca0ec9bef2083a7f421d921bf45cac51336c095069333304cf452b66a"
             "8d891407b155799a38b1c4ef933e7f475a1436d9efff", 16)
LEHMER_A = 5559651144192124268289353691682632868449479915799511202969540270516788852855792743317529446865064582432930553062673062704462050762250335027518676132662652
LEHMER_B = -5033544932888565336502562197899327133255196915512500082850088205119293993292078402781446944666467608180906517907271587702723056557111647925990464646216015


def euclid_partial(r2, r1, L):
    co2, co1 = 0, -1
    while r1 != 0 and r1 > L:
        q, r = divmod(r2, r1)
        r2, r1 = r1, r
        co2, co1 = co1, co2 - q * co1
    return co2, co1, r2, r1


def test_xgcd_partial_lehmer():
    a, b = LEHMER_A, LEHMER_B
    L = v.math.isqrt(a)
    co2, co1, r2, r1 = v.xgcd_partial(a, abs(b), L)
    e2, e1, er2, er1 = euclid_partial(a, abs(b), L)
    assert er1 <= L < er2                      # Euclid stops at the first remainder ≤ L
    assert r2 == er1 and r2 <= L and r1 < r2   # the document's algorithm takes one step more
    assert co1 != e1 and co2 == e1
    # both are cofactor sequences: co·|b| ≡ ±r (mod a)
    assert (co1 * abs(b) - r1) % a == 0 or (co1 * abs(b) + r1) % a == 0
    f = v.form_from_ab(a, b, D1024)
    assert f.is_reduced()
    enc = v.bqfc_encode(f, D1024)
    assert enc.hex().startswith("01007c8daf914010d728")  # t from the Lehmer cofactor
    assert tuple(v.bqfc_decode(enc, D1024, "f"))[:2] == (a, b)
    # small inputs: one Euclid step at a time (s = 0), same as Euclid
    for a2, b2 in ((1000003, 12345), (2**61 - 1, 2**40 + 17), (97, 0)):
        assert v.xgcd_partial(a2, b2, v.math.isqrt(a2))[:2] == euclid_partial(a2, b2, v.math.isqrt(a2))[:2]


def test_bqfc_special_cases():
    D = v.create_discriminant(b"\x01" * 32, 512)
    g = v.form_from_ab(2, 1, D)
    # a = b: PROTOCOL §18 "the one special case" t = 0, g = 0, b0 = 0.  With D = −p prime,
    # a(a − 4c) = D leaves only a = 1 (the identity, which has its flag), so a small composite D
    # is used: (3, 3, 5) of D = −51.
    f, D51 = v.Form(3, 3, 5), -51
    assert f.is_reduced() and f.disc == D51
    enc = v.bqfc_encode(f, D51)
    assert enc[:7] == bytes([0, 0, 3, 0, 0, 0, 0]) and not any(enc[7:])
    assert tuple(v.bqfc_decode(enc, D51, "f"))[:2] == (3, 3)
    # flag bytes: bit 3 wins, whatever follows (as chiavdf reads them)
    assert tuple(v.bqfc_decode(b"\x0c" + b"\xff" * 99, D, "g"))[:2] == (2, 1)
    assert tuple(v.bqfc_decode(b"\x04" + bytes(98) + b"\x01", D, "i"))[:2] == (1, 1)
    # a non-zero padding byte, or a wrong g_size, is refused
    h = v.form_pow(g, 12345, D)
    e = v.bqfc_encode(h, D)
    for bad in (e[:-1] + b"\x01", e[:1] + b"\x10" + e[2:]):
        try:
            v.bqfc_decode(bad, D, "h")
            raise AssertionError("non-canonical bqfc accepted")
        except v.StepFail:
            pass


def test_hmac_blocks():
    # PROTOCOL §20.1: hmac_blocks = ⌈(len(bytes_used) − 32)/32⌉ when positive, else 0
    r = v.rng_value(bytes(range(1, 65)), "0123456789abcdef0123456789abcdef", "lucky")
    for count in (2, 3, 30, 33, 40, 70):
        dice, used, skipped, blocks = v.roll_dice(r, count)
        assert len(dice) == count and blocks == max(0, -(-(len(used) - 32) // 32))


def test_json_eq():
    D = v.decimal.Decimal
    assert v.json_eq(D("1.5"), D("1.50")) and v.json_eq(1, D("1.0")) and v.json_eq(None, None)
    assert not v.json_eq(True, 1) and not v.json_eq(0, None) and not v.json_eq("ab", "AB") and not v.json_eq("1", 1)
    assert v.json_eq({"a": [1, None]}, {"a": [1, None]}) and not v.json_eq({"a": 1}, {"a": 1, "b": 2})


def test_members_table_current():
    """The §20 table embedded in the verifier is the one PROTOCOL.md §20 gives (a warning only:
    run gen_members.py --write after an edit of §20)."""
    import gen_members
    doc = gen_members.DEFAULT_DOC
    if not os.path.exists(doc):
        print("note: docs/PROTOCOL.md not found; §20 table not compared")
        return
    with open(doc, encoding="utf-8") as f:
        current = gen_members.parse(f.read())
    if current != v.MEMBERS:
        print("WARNING: PROTOCOL §20 changed since the verifier's table was generated; run gen_members.py --write")
    assert v.doc_types("verify", "replay_steps[dice_rolled].hmac_blocks") == ["integer", "null"]
    assert v.doc_types("games", "result.proof.acceptance.signature") == ["string"]


if __name__ == "__main__":
    for name, fn in list(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
            print("ok  ", name)
