#!/usr/bin/env python3
"""Independent verifier for the vrs VDF (protocol version 1).

Written from docs/PROTOCOL.md alone (plus the test-vector file it describes); it shares
no code with the Rust implementation. Python 3.11, standard library only.

Usage (from the repository root):

    python3 tests/independent/verify_vectors.py [PATH ...]

PATH defaults to docs/test-vectors/rsa2048.json, resolved from the repository root
(found from this script's location). Every vector is checked by the spec:
  - decoding rules (section 1), the seed -> x hash (section 3, section 9),
  - the Baillie-PSW hash to prime (section 5) and the verification equation (section 7),
  - for T <= 100000: y and pi recomputed directly (sections 4 and 6),
  - replay checkpoints (section 8) when a vector has them,
and negative self-checks make sure tampered vectors are refused. Output: one line per
vector, then "N passed, M failed". Exit status 0 iff everything passed.
"""

from __future__ import annotations

import hashlib
import json
import math
import string
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_VECTORS = REPO_ROOT / "docs" / "test-vectors" / "rsa2048.json"

# Above this many iterations, y is not recomputed by repeated squaring (too slow in Python).
DIRECT_RECOMPUTE_MAX_T = 100_000

# ---------------------------------------------------------------------------
# Section 1: the group and encodings
# ---------------------------------------------------------------------------

# The RSA-2048 challenge number, copied from PROTOCOL.md section 1 (512 hex digits).
RSA2048_HEX = (
    "c7970ceedcc3b0754490201a7aa613cd73911081c790f5f1a8726f463550bb5b"
    "7ff0db8e1ea1189ec72f93d1650011bd721aeeacc2acde32a04107f0648c2813"
    "a31f5b0b7765ff8b44b4b6ffc93384b646eb09c7cf5e8592d40ea33c80039f35"
    "b4f14a04b51f7bfd781be4d1673164ba8eb991c2c4d730bbbe35f592bdef524a"
    "f7e8daefd26c66fc02c479af89d64d373f442709439de66ceb955f3ea37d5159"
    "f6135809f85334b5cb1813addc80cd05609f10ac6a95ad65872c909525bdad32"
    "bc729592642920f24c61dc5b3c3b7923e56b16a4d9d373d8721f24a3fc0f1b31"
    "31f55615172866bccc30f95054c824e733a5eb6817f7bc16399d48c6361cc7e5"
)
RSA2048 = int(RSA2048_HEX, 16)


class Refused(Exception):
    """Verification refused; `stage` names the spec step that refused."""

    def __init__(self, stage: str, reason: str):
        super().__init__(f"{stage}: {reason}")
        self.stage = stage
        self.reason = reason


def modulus_from_id(modulus_id: str) -> int:
    """Section 1: modulus ids. Only rsa2048 and hex:<digits> are fully defined by the spec
    (test512/test1024 are named but their values are not given)."""
    if modulus_id == "rsa2048":
        return RSA2048
    if modulus_id.startswith("hex:"):
        digits = modulus_id[4:]
        if not digits or any(ch not in string.hexdigits for ch in digits):
            raise Refused("modulus", f"bad hex modulus id {modulus_id!r}")
        n = int(digits, 16)
        if n % 2 == 0 or not 64 <= n.bit_length() <= 2048:
            raise Refused("modulus", "hex modulus must be odd and of 64 to 2048 bits")
        return n
    raise Refused("modulus", f"unknown modulus id {modulus_id!r} (value not in PROTOCOL.md)")


def byte_length(n: int) -> int:
    """Section 1: k = ceil(bits(N) / 8)."""
    return (n.bit_length() + 7) // 8


def canon(v: int, n: int) -> int:
    """Section 1: canonical representative min(v, N - v) of the class {v, N - v}."""
    v %= n
    return min(v, n - v)


def encode_element(v: int, k: int) -> bytes:
    """Section 1: exactly k bytes, big-endian, zero-padded on the left."""
    return v.to_bytes(k, "big")


def decode_element(data: bytes, n: int, k: int, *, is_input: bool) -> int:
    """Section 1, decoding rules: refuse wrong length, 0, non-canonical v > (N-1)/2,
    and additionally 1 for an input x."""
    if len(data) != k:
        raise Refused("decode", f"length {len(data)} bytes, expected k = {k}")
    v = int.from_bytes(data, "big")
    if v == 0:
        raise Refused("decode", "value 0")
    if v > (n - 1) // 2:
        raise Refused("decode", "non-canonical value (v > (N-1)/2)")
    if is_input and v == 1:
        raise Refused("decode", "input x = 1 (the class ±1)")
    return v


def parse_hex(text: object, nbytes: int, what: str) -> bytes:
    """Conventions: hex in either case, no 0x prefix. Section 9 fixes the width
    (2k digits for elements, 64 for l and the seed)."""
    if not isinstance(text, str):
        raise Refused("decode", f"{what} is not a string")
    if any(ch not in string.hexdigits for ch in text):
        raise Refused("decode", f"{what} is not plain hex")
    if len(text) != 2 * nbytes:
        raise Refused("decode", f"{what} has {len(text)} hex digits, expected {2 * nbytes}")
    return bytes.fromhex(text)


def u8(v: int) -> bytes:
    return v.to_bytes(1, "big")


def u16(v: int) -> bytes:
    return v.to_bytes(2, "big")


def u32(v: int) -> bytes:
    return v.to_bytes(4, "big")


def u64(v: int) -> bytes:
    return v.to_bytes(8, "big")


# ---------------------------------------------------------------------------
# Section 2: tagged hashes
# ---------------------------------------------------------------------------

TAG_HASH_TO_GROUP = b"vrs/v1/hash-to-group"
TAG_HASH_TO_PRIME = b"vrs/v1/hash-to-prime"
assert len(TAG_HASH_TO_GROUP) == 20 and len(TAG_HASH_TO_PRIME) == 20  # section 2 table


def tagged_hash(tag: bytes, fields: bytes) -> bytes:
    """Section 2: H_tag(fields) = SHA-256(u8(len(tag)) || tag || fields)."""
    return hashlib.sha256(u8(len(tag)) + tag + fields).digest()


# ---------------------------------------------------------------------------
# Section 3: hash to group (seed -> x)
# ---------------------------------------------------------------------------


def hash_to_group(seed: bytes, n: int) -> int:
    """Section 3: x = canon(int_be(S) mod N) for the first attempt a with x >= 2."""
    if len(seed) != 32:
        raise Refused("seed", "seed must be 32 bytes")
    k = byte_length(n)
    big_l = k + 16  # L bytes
    blocks = -(-big_l // 32)  # B = ceil(L / 32)
    prefix = u16(k) + encode_element(n, k) + seed
    a = 0
    while True:
        s = b"".join(
            tagged_hash(TAG_HASH_TO_GROUP, prefix + u32(a) + u32(i)) for i in range(blocks)
        )[:big_l]
        x = canon(int.from_bytes(s, "big") % n, n)
        if x >= 2:
            return x
        a += 1


# ---------------------------------------------------------------------------
# Section 4: evaluation
# ---------------------------------------------------------------------------


def evaluate(x: int, t: int, n: int) -> int:
    """Section 4: y = canon(x^(2^T) mod N), by T sequential squarings."""
    return canon(pow(x, 1 << t, n), n)


# ---------------------------------------------------------------------------
# Section 5: hash to prime, with the Baillie-PSW test
# ---------------------------------------------------------------------------

SMALL_ODD_PRIMES = [p for p in range(3, 1000, 2) if all(p % q for q in range(3, math.isqrt(p) + 1, 2))]


def jacobi(a: int, n: int) -> int:
    """Jacobi symbol (a/n) for odd n > 0 (own implementation, via quadratic reciprocity)."""
    if n <= 0 or n % 2 == 0:
        raise ValueError("jacobi: n must be odd and positive")
    a %= n
    result = 1
    while a != 0:
        while a % 2 == 0:
            a //= 2
            if n % 8 in (3, 5):
                result = -result
        a, n = n, a
        if a % 4 == 3 and n % 4 == 3:
            result = -result
        a %= n
    return result if n == 1 else 0


def strong_probable_prime_base2(c: int) -> bool:
    """Section 5, step 3: Miller-Rabin with a = 2, for odd c >= 3."""
    d, s = c - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    z = pow(2, d, c)
    if z == 1 or z == c - 1:  # 2^d = 1, or r = 0 case of 2^(d 2^r) = -1
        return True
    for _ in range(1, s):  # r = 1 .. s-1
        z = z * z % c
        if z == c - 1:
            return True
    return False


def is_perfect_square(c: int) -> bool:
    """Section 5, step 4."""
    r = math.isqrt(c)
    return r * r == c


def selfridge_method_a(c: int) -> int | None:
    """Section 5, step 5: the first D in 5, -7, 9, -11, 13, ... with (D/c) = -1.
    Returns None when some D has (D/c) = 0 with |D| != c (c is then composite).
    c must be odd and not a perfect square (otherwise no such D exists)."""
    d = 5
    while True:
        j = jacobi(d, c)
        if j == -1:
            return d
        if j == 0 and abs(d) != c:
            return None
        d = -(d + 2) if d > 0 else -(d - 2)


def strong_lucas_probable_prime(c: int) -> bool:
    """Section 5, step 5: strong Lucas test with P = 1, Q = (1 - D)/4 (Selfridge method A),
    for odd c >= 3 that is not a perfect square."""
    d_param = selfridge_method_a(c)
    if d_param is None:
        return False
    p, q = 1, (1 - d_param) // 4
    # c + 1 = d * 2^s with d odd
    d, s = c + 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    u, v, qk = lucas_uv(d, p, q, d_param, c)
    if u == 0 or v == 0:  # U_d = 0, or r = 0 case of V_(d 2^r) = 0
        return True
    for _ in range(1, s):  # r = 1 .. s-1: V_(2m) = V_m^2 - 2 Q^m
        v = (v * v - 2 * qk) % c
        qk = qk * qk % c
        if v == 0:
            return True
    return False


def lucas_uv(m: int, p: int, q: int, d_param: int, c: int) -> tuple[int, int, int]:
    """(U_m, V_m, Q^m) mod c for the Lucas sequences of (P, Q), D = P^2 - 4Q, c odd.
    Left-to-right binary method with the standard identities
      U_2k = U_k V_k,  V_2k = V_k^2 - 2 Q^k,
      U_(k+1) = (P U_k + V_k)/2,  V_(k+1) = (D U_k + P V_k)/2."""
    assert d_param == p * p - 4 * q

    def half(z: int) -> int:  # z / 2 mod c (c odd)
        return (z if z % 2 == 0 else z + c) // 2 % c

    u, v, qk = 0, 2, 1  # k = 0
    for bit in bin(m)[2:]:
        u, v, qk = u * v % c, (v * v - 2 * qk) % c, qk * qk % c  # k -> 2k
        if bit == "1":  # k -> k + 1
            u, v = half(p * u + v), half(d_param * u + p * v)
            qk = qk * q % c
    return u % c, v % c, qk % c


def is_probable_prime(c: int) -> bool:
    """Section 5: the Baillie-PSW test, steps 1-6 exactly as listed."""
    # Step 1
    if c < 2:
        return False
    if c % 2 == 0:
        return c == 2
    # Step 2: trial division by every odd prime p < 1000
    for p in SMALL_ODD_PRIMES:
        if c == p:
            return True
        if c % p == 0:
            return False
    return bpsw_steps_3_to_6(c)


def bpsw_steps_3_to_6(c: int) -> bool:
    """Section 5, steps 3-6, for odd c >= 3 (separate so the self-checks can exercise them
    without the trial division of step 2 hiding their behaviour)."""
    if not strong_probable_prime_base2(c):  # step 3
        return False
    if is_perfect_square(c):  # step 4
        return False
    if not strong_lucas_probable_prime(c):  # step 5
        return False
    return True  # step 6


def hash_to_prime(n: int, x: int, y: int, t: int) -> tuple[int, int]:
    """Section 5: the challenge l and the counter j at which it was found."""
    k = byte_length(n)
    prefix = u16(k) + encode_element(n, k) + encode_element(x, k) + encode_element(y, k) + u64(t)
    j = 0
    while True:
        h = tagged_hash(TAG_HASH_TO_PRIME, prefix + u64(j))
        c = int.from_bytes(h, "big") | (1 << 255) | 1
        if is_probable_prime(c):
            return c, j
        j += 1


# ---------------------------------------------------------------------------
# Section 6: the proof (used only to recompute pi directly for small T)
# ---------------------------------------------------------------------------


def prove_directly(x: int, t: int, l: int, n: int) -> int:
    """Section 6: pi = canon(x^q mod N) with q = floor(2^T / l)."""
    return canon(pow(x, (1 << t) // l, n), n)


# ---------------------------------------------------------------------------
# Section 7: verification
# ---------------------------------------------------------------------------


def check_iterations(t: object) -> int:
    """Sections 4 and 7.1: T is an integer, 1 <= T < 2^64."""
    if not isinstance(t, int) or isinstance(t, bool):
        raise Refused("decode", "iterations is not an integer")
    if t < 1:
        raise Refused("decode", "T must be at least 1")
    if t >= 1 << 64:
        raise Refused("decode", "T must be below 2^64")
    return t


def verify(n: int, x_bytes: bytes, y_bytes: bytes, t: object, l_bytes: bytes, pi_bytes: bytes) -> int:
    """Section 7. Returns the counter j at which l' was found; raises Refused otherwise."""
    k = byte_length(n)
    # 7.1: decode x, y, pi by section 1; l is exactly 32 bytes; T >= 1
    x = decode_element(x_bytes, n, k, is_input=True)
    y = decode_element(y_bytes, n, k, is_input=False)
    pi = decode_element(pi_bytes, n, k, is_input=False)
    if len(l_bytes) != 32:
        raise Refused("decode", "l must be exactly 32 bytes")
    l = int.from_bytes(l_bytes, "big")
    t = check_iterations(t)
    # 7.2: recompute l' by section 5
    l_prime, j = hash_to_prime(n, x, y, t)
    if l_prime != l:
        raise Refused("challenge", "l does not match hash_to_prime(N, x, y, T)")
    # 7.3: r = 2^T mod l
    r = pow(2, t, l)
    # 7.4: w = canon(pi^l * x^r mod N)
    w = canon(pow(pi, l, n) * pow(x, r, n) % n, n)
    # 7.5: accept iff w = y
    if w != y:
        raise Refused("equation", "pi^l * x^r != y in Z_N^*/{±1}")
    return j


# ---------------------------------------------------------------------------
# Section 8: replay checkpoints
# ---------------------------------------------------------------------------


def check_replay(replay: object, n: int, x: int, y: int, t: int) -> int:
    """Section 8: each segment c_j = canon(c_i^(2^(j-i))), with c_0 = x and c_T = y.
    Returns the number of segments checked."""
    if not isinstance(replay, list):
        raise Refused("replay", "replay is not an array")
    k = byte_length(n)
    points = {0: x, t: y}
    for entry in replay:
        if not isinstance(entry, dict):
            raise Refused("replay", "replay entry is not an object")
        i = entry.get("iteration")
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i <= t:
            raise Refused("replay", f"bad checkpoint iteration {i!r}")
        c = decode_element(parse_hex(entry.get("value"), k, "replay value"), n, k, is_input=False)
        if i in points and points[i] != c:
            raise Refused("replay", f"checkpoint {i} contradicts x, y or another checkpoint")
        points[i] = c
    its = sorted(points)
    for a, b in zip(its, its[1:]):
        if canon(pow(points[a], 1 << (b - a), n), n) != points[b]:
            raise Refused("replay", f"segment {a} -> {b} does not match")
    return len(its) - 1


# ---------------------------------------------------------------------------
# Section 9: the proof document
# ---------------------------------------------------------------------------


@dataclass
class Outcome:
    j: int  # counter at which l was found (section 5)
    recomputed: bool  # y and pi recomputed directly (sections 4, 6)
    replay_segments: int  # section 8 segments checked


def verify_document(doc: dict, *, recompute: bool = False) -> Outcome:
    """Section 9: decode a proof document, check seed -> x (section 3) when a seed is
    present, then verify it by section 7. With recompute, also recompute y (section 4) and
    pi (section 6) directly, and check replay checkpoints (section 8)."""
    if not isinstance(doc, dict):
        raise Refused("decode", "vector is not an object")
    modulus_id = doc.get("modulus")
    if not isinstance(modulus_id, str):
        raise Refused("decode", "modulus is not a string")
    n = modulus_from_id(modulus_id)
    k = byte_length(n)
    x_bytes = parse_hex(doc.get("x"), k, "x")
    y_bytes = parse_hex(doc.get("y"), k, "y")
    pi_bytes = parse_hex(doc.get("pi"), k, "pi")
    l_bytes = parse_hex(doc.get("l"), 32, "l")
    t = doc.get("iterations")
    if "seed" in doc:
        seed = parse_hex(doc["seed"], 32, "seed")
        if hash_to_group(seed, n) != int.from_bytes(x_bytes, "big"):
            raise Refused("seed", "x != hash_to_group(seed)")
    j = verify(n, x_bytes, y_bytes, t, l_bytes, pi_bytes)
    outcome = Outcome(j=j, recomputed=False, replay_segments=0)
    if recompute:
        x = int.from_bytes(x_bytes, "big")
        y = int.from_bytes(y_bytes, "big")
        if t <= DIRECT_RECOMPUTE_MAX_T:
            if evaluate(x, t, n) != y:
                raise Refused("evaluate", "y != canon(x^(2^T) mod N) by repeated squaring")
            l = int.from_bytes(l_bytes, "big")
            if prove_directly(x, t, l, n) != int.from_bytes(pi_bytes, "big"):
                raise Refused("proof", "pi != canon(x^floor(2^T / l) mod N)")
            outcome.recomputed = True
        if "replay" in doc:
            outcome.replay_segments = check_replay(doc["replay"], n, x, y, t)
    return outcome


# ---------------------------------------------------------------------------
# Negative self-checks on each vector
# ---------------------------------------------------------------------------


def flip_hex_bit(text: str, bit: int) -> str:
    """Flip bit `bit` (0 = least significant) of a fixed-width hex string."""
    v = int(text, 16) ^ (1 << bit)
    return format(v, f"0{len(text)}x")


def with_fields(doc: dict, **fields) -> dict:
    new = dict(doc)
    for key, value in fields.items():
        if value is None:
            new.pop(key, None)
        else:
            new[key] = value
    return new


def rederive_l(doc: dict) -> dict:
    """Give a tampered statement its own honest challenge l (section 5), so that refusal
    must come from the verification equation (section 7.4-7.5), not from the l check.
    Left unchanged if the tampered values do not decode (refusal then comes from 7.1)."""
    try:
        n = modulus_from_id(doc["modulus"])
        k = byte_length(n)
        x = decode_element(parse_hex(doc["x"], k, "x"), n, k, is_input=True)
        y = decode_element(parse_hex(doc["y"], k, "y"), n, k, is_input=False)
        t = check_iterations(doc["iterations"])
    except Refused:
        return doc
    l, _ = hash_to_prime(n, x, y, t)
    return with_fields(doc, l=format(l, "064x"))


def tampered_variants(doc: dict) -> list[tuple[str, dict, set[str] | None]]:
    """(description, tampered document, stages allowed to refuse it or None for any).
    Every variant MUST be refused."""
    n = modulus_from_id(doc["modulus"])
    k = byte_length(n)
    t = doc["iterations"]
    no_seed = with_fields(doc, seed=None)
    out: list[tuple[str, dict, set[str] | None]] = []
    for bit in (0, 1, 1000):
        for field in ("y", "pi", "x"):
            out.append((f"{field} bit {bit} flipped", with_fields(doc, **{field: flip_hex_bit(doc[field], bit)}), None))
        out.append((f"l bit {bit} flipped", with_fields(doc, l=flip_hex_bit(doc["l"], bit)), None))
    for delta in (+1, -1):
        out.append((f"T {delta:+d}", with_fields(doc, iterations=t + delta), None))
    # Same tampering, but l re-derived honestly for the tampered statement (and no seed
    # binding x): only the verification equation can catch these.
    eq = {"equation"}
    out.append(("y bit 1 flipped, l re-derived", rederive_l(with_fields(doc, y=flip_hex_bit(doc["y"], 1))), eq))
    out.append(("pi bit 1 flipped", with_fields(doc, pi=flip_hex_bit(doc["pi"], 1)), eq))
    out.append(("x bit 1 flipped, no seed, l re-derived", rederive_l(with_fields(no_seed, x=flip_hex_bit(doc["x"], 1))), eq))
    out.append(("T +1, l re-derived", rederive_l(with_fields(doc, iterations=t + 1)), eq))
    # Non-canonical encodings (section 1): N - v is the same class, but must be refused.
    dec = {"decode"}
    for field in ("y", "pi", "x"):
        v = int(doc[field], 16)
        base = no_seed if field == "x" else doc  # with a seed, the seed check would refuse N - x first
        out.append((f"non-canonical {field} (N - {field})", with_fields(base, **{field: format(n - v, f"0{2 * k}x")}), dec))
    out.append(("non-canonical y (N - y), l re-derived", rederive_l(with_fields(doc, y=format(n - int(doc["y"], 16), f"0{2 * k}x"))), dec))
    # Other decoding rules (sections 1, 4, 7.1, 9).
    out.append(("y with one extra byte", with_fields(doc, y="00" + doc["y"]), dec))
    out.append(("l with one byte missing", with_fields(doc, l=doc["l"][2:]), dec))
    out.append(("x = 1", with_fields(no_seed, x=format(1, f"0{2 * k}x")), dec))
    out.append(("y = 0", with_fields(doc, y="0" * (2 * k)), dec))
    out.append(("T = 0", with_fields(doc, iterations=0), dec))
    out.append(("T = 2^64", with_fields(doc, iterations=1 << 64), dec))
    out.append(("x with 0x prefix", with_fields(doc, x="0x" + doc["x"][2:]), dec))
    return out


def negative_checks(doc: dict) -> tuple[int, list[str]]:
    """Run every tampered variant; returns (count, problems). Also checks the positive
    variants that must still verify (upper-case hex, section 'Conventions'; no seed)."""
    problems = []
    variants = tampered_variants(doc)
    for desc, bad, allowed in variants:
        try:
            verify_document(bad)
        except Refused as refused:
            if allowed is not None and refused.stage not in allowed:
                problems.append(f"{desc}: refused at {refused.stage!r}, expected {sorted(allowed)}")
        except Exception as exc:  # noqa: BLE001 - a crash is not a clean refusal
            problems.append(f"{desc}: crashed with {exc!r}")
        else:
            problems.append(f"{desc}: ACCEPTED")
    positives = [
        ("upper-case hex", with_fields(doc, **{f: doc[f].upper() for f in ("x", "y", "pi", "l", "seed") if f in doc})),
        ("without seed", with_fields(doc, seed=None)),
    ]
    for desc, good in positives:
        try:
            verify_document(good)
        except Refused as refused:
            problems.append(f"{desc}: refused ({refused})")
    return len(variants) + len(positives), problems


# ---------------------------------------------------------------------------
# Self-checks of the primality test (section 5)
# ---------------------------------------------------------------------------


def trial_division_is_prime(n: int) -> bool:
    if n < 2:
        return False
    return all(n % p for p in range(2, math.isqrt(n) + 1))


def primality_self_check() -> list[str]:
    """Section 5: is_probable_prime agrees with trial division below 20000, and the steps
    3-5 behave as known (base-2 strong pseudoprimes, strong Lucas pseudoprimes)."""
    problems = []
    limit = 20000
    sprp2, slprp = [], []
    for n in range(limit):
        truth = trial_division_is_prime(n)
        if is_probable_prime(n) != truth:
            problems.append(f"is_probable_prime({n}) != {truth}")
        if n >= 3 and n % 2 == 1:
            # Steps 3-6 alone (no trial division) must also be exact here.
            if bpsw_steps_3_to_6(n) != truth:
                problems.append(f"steps 3-6 on {n} != {truth}")
            if not truth and strong_probable_prime_base2(n):
                sprp2.append(n)
            if not truth and not is_perfect_square(n) and strong_lucas_probable_prime(n):
                slprp.append(n)
    # Base-2 strong pseudoprimes (OEIS A001262) and strong Lucas pseudoprimes with
    # Selfridge's method A (OEIS A217255) below 20000.
    if sprp2 != [2047, 3277, 4033, 4681, 8321, 15841]:
        problems.append(f"base-2 strong pseudoprimes below {limit}: {sprp2}")
    if slprp != [5459, 5777, 10877, 16109, 18971]:
        problems.append(f"strong Lucas pseudoprimes below {limit}: {slprp}")
    for n in (2047, 3277, 4033, 4681, 8321):  # pass step 3, so step 5 must refuse them
        if not strong_probable_prime_base2(n):
            problems.append(f"{n} should pass Miller-Rabin base 2")
        if is_probable_prime(n) or bpsw_steps_3_to_6(n) or strong_lucas_probable_prime(n):
            problems.append(f"{n} (base-2 strong pseudoprime) accepted")
    for n in (1093**2, 3511**2, 3215031751):
        if not strong_probable_prime_base2(n) or bpsw_steps_3_to_6(n):
            problems.append(f"{n} should pass step 3 and be refused by steps 4-5")
    for n in (561, 1105, 1729):  # Carmichael numbers
        if is_probable_prime(n) or bpsw_steps_3_to_6(n):
            problems.append(f"Carmichael number {n} accepted")
    # Larger known values: primes, composites, and a strong pseudoprime to bases 2,3,5,7.
    for n, truth in (
        ((1 << 61) - 1, True),
        ((1 << 67) - 1, False),
        ((1 << 127) - 1, True),
        ((1 << 255) - 19, True),
        ((1 << 256) - 189, True),
        ((1 << 256) - 187, False),
        (3215031751, False),
        (1093**2, False),  # squares of the Wieferich primes are base-2 strong pseudoprimes
        (3511**2, False),
        (3825123056546413051, False),
        (((1 << 127) - 1) ** 2, False),
        (((1 << 127) - 1) * ((1 << 89) - 1), False),
    ):
        if is_probable_prime(n) != truth:
            problems.append(f"is_probable_prime({n}) != {truth}")
    for a, n, expected in ((1001, 9907, -1), (19, 45, 1), (8, 21, -1), (5, 21, 1), (6, 9, 0), (30, 59, -1)):
        if jacobi(a, n) != expected:
            problems.append(f"jacobi({a}, {n}) != {expected}")
    # Jacobi against Euler's criterion for small odd primes, including negative a.
    for p in SMALL_ODD_PRIMES[:40]:
        for a in range(-60, 60):
            euler = pow(a, (p - 1) // 2, p)
            expected = 0 if a % p == 0 else (1 if euler == 1 else -1)
            if jacobi(a, p) != expected:
                problems.append(f"jacobi({a}, {p}) != {expected}")
    return problems


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def vector_label(doc: object) -> str:
    if isinstance(doc, dict):
        modulus = doc.get("modulus", "?")
        if isinstance(modulus, str) and len(modulus) > 24:
            modulus = modulus[:20] + "…"
        return f"{modulus} T={doc.get('iterations', '?')}"
    return "?"


def check_vector(doc: dict) -> tuple[bool, str]:
    label = vector_label(doc)
    try:
        outcome = verify_document(doc, recompute=True)
    except Refused as refused:
        return False, f"FAIL {label}: {refused}"
    except Exception as exc:  # noqa: BLE001
        return False, f"FAIL {label}: crashed: {exc!r}"
    try:
        count, problems = negative_checks(doc)
    except Exception as exc:  # noqa: BLE001
        return False, f"FAIL {label}: negative self-checks crashed: {exc!r}"
    if problems:
        return False, f"FAIL {label}: negative self-check: " + "; ".join(problems)
    details = [f"l found at counter j={outcome.j}"]
    details.append("y and pi recomputed directly" if outcome.recomputed else "y not recomputed (T too large)")
    if outcome.replay_segments:
        details.append(f"{outcome.replay_segments} replay segments checked")
    details.append(f"{count} tampered/variant documents handled correctly")
    return True, f"ok   {label} ({', '.join(details)})"


def load_vectors(path: Path) -> list:
    with path.open(encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or not isinstance(data.get("vectors"), list):
        raise ValueError("expected an object {description, vectors}")
    if not data["vectors"]:
        raise ValueError("no vectors")
    return data["vectors"]


def resolve(arg: str) -> Path:
    path = Path(arg)
    if not path.is_absolute() and not path.exists():
        path = REPO_ROOT / path
    return path


def main(argv: list[str]) -> int:
    paths = [resolve(a) for a in argv] if argv else [DEFAULT_VECTORS]
    passed = failed = 0

    try:
        problems = primality_self_check()
    except Exception as exc:  # noqa: BLE001 - a crash counts as a failed self-check
        problems = [f"crashed: {exc!r}"]
    if problems:
        print("FAIL self-check primality: " + "; ".join(problems[:10]))
        failed += 1

    for path in paths:
        try:
            vectors = load_vectors(path)
        except (OSError, ValueError) as exc:
            print(f"FAIL {path}: {exc}")
            failed += 1
            continue
        for doc in vectors:
            ok, line = check_vector(doc)
            print(line, flush=True)
            if ok:
                passed += 1
            else:
                failed += 1

    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
