#!/usr/bin/env python3
"""Independent verifier for vrs games, written from the documents alone.

Sources (the only ones read): docs/PROTOCOL.md (cited as "P§n"), docs/GAMES.md ("G§n") and the
interface description interface.md ("I§n").  Python 3.11, standard library only.  Everything
cryptographic that the documents define is implemented here: hash to group, hash to prime with
Baillie-PSW, Wesolowski verification over Z_N^*/{±1}, the class-group VDF of chiavdf (HashPrime,
create_discriminant, bqfc with P§18's xgcd_partial, composition, reduction, verification), strict
Ed25519 (RFC 8032), RFC 6962 trees and RFC 9162 inclusion proofs, the HMAC derivation, dice and
payouts.

Usage (a stable contract; a CI test runs it):
    vrs_docs_verify.py --server URL --group G [--tamper] GAME_ID [GAME_ID ...]
  options: --min-margin A   fail `timing` below margin A (P§13; default 1)
           --wait S         seconds to wait for a pending game or bet epoch (default 30)
           --strict-members fail `members` on a member P§20 does not list (default: named only)
           -v               with --tamper, print the step(s) that caught each alteration

Steps, in P§13's order: for an epoch game `group`, `bet_leaf`, `merkle_inclusion`,
`epoch_chain`, `epoch_record`, `epoch_input`, `vdf_proof`, `timing`, `rng_value`, `dice`,
`payout`, then `acceptance`, `anchor_inclusion`; for a pool-served game P§14's `pool_*` steps in
place of the epoch ones.  Extras, outside `vrs verify`'s list: `bets_root` (the browser page's
check, P§13), `result_hash` (P§17) and `members` (P§20's types and "as in proof" copies).

One line per step: `ok`, `FAIL` or `pend`, with a reason, then a summary line.  Exit 0 iff no
step failed (a `pend`, such as `anchor_inclusion` on a server that does not anchor, is not a
failure; a game still pending after --wait is), 1 if one failed, 2 on a usage or network error
(an unknown game, 404, is a usage error).  The server's own `verified` and `checks` are ignored.

--tamper verifies each game, then alters one field at a time in the fetched JSON (in memory)
and requires at least one step to FAIL for each alteration; exit 0 iff the game passed and
every alteration was caught.  make_games.py (next to this file) places games of every kind;
test_offline.py checks the building blocks.

Where the documents settle a point, the code cites the section.  Where they still leave
something to guess, the code says `GUESS(Gn)`, n being the item's number in GUESSES.md.
"""
from __future__ import annotations

import argparse
import copy
import decimal
import hashlib
import hmac
import json
import math
import re
import sys
import time
import urllib.error
import urllib.request

# ---------------------------------------------------------------------------------------------
# Encodings (P, "Conventions")
# ---------------------------------------------------------------------------------------------


def u8(v: int) -> bytes:
    return v.to_bytes(1, "big")


def u16(v: int) -> bytes:
    return v.to_bytes(2, "big")


def u32(v: int) -> bytes:
    return v.to_bytes(4, "big")


def u64(v: int) -> bytes:
    return v.to_bytes(8, "big")


def sha256(b: bytes) -> bytes:
    return hashlib.sha256(b).digest()


def h_tag(tag: str, *fields: bytes) -> bytes:
    """P§2: H_tag(fields) = SHA-256(u8(len(tag)) ‖ tag ‖ fields)."""
    t = tag.encode("ascii")
    return sha256(u8(len(t)) + t + b"".join(fields))


HEX_RE = re.compile(r"^[0-9a-fA-F]*$")


def unhex(s, nbytes: int | None, what: str) -> bytes:
    """Hex is accepted in either case on input, without 0x (P, Conventions; P§20 "Hex"); exact
    length when given (P§1: "shorter or longer strings are refused, not padded")."""
    if not isinstance(s, str) or not HEX_RE.match(s) or len(s) % 2:
        raise StepFail(f"{what}: not a hex string: {s!r:.80}")
    if nbytes is not None and len(s) != 2 * nbytes:
        raise StepFail(f"{what}: {len(s)} hex digits, expected {2 * nbytes}")
    return bytes.fromhex(s)


class StepFail(Exception):
    pass


class StepPend(Exception):
    pass


class UsageError(Exception):
    pass


def need(cond, msg: str):
    if not cond:
        raise StepFail(msg)


def as_int(v, what: str) -> int:
    # P§20 "Conventions": an integer is "a JSON number without fraction or exponent"; a bool is not one.
    if isinstance(v, bool) or not isinstance(v, int):
        raise StepFail(f"{what}: expected an integer, got {v!r}")
    return v


# ---------------------------------------------------------------------------------------------
# Baillie-PSW, exactly as P§5 states it
# ---------------------------------------------------------------------------------------------

SMALL_ODD_PRIMES = [p for p in range(3, 1000, 2) if all(p % q for q in range(3, math.isqrt(p) + 1, 2))]


def jacobi(a: int, n: int) -> int:
    assert n > 0 and n % 2 == 1
    a %= n
    result = 1
    while a:
        while a % 2 == 0:
            a //= 2
            if n % 8 in (3, 5):
                result = -result
        a, n = n, a
        if a % 4 == 3 and n % 4 == 3:
            result = -result
        a %= n
    return result if n == 1 else 0


def _strong_lucas(n: int, D: int, P: int, Q: int) -> bool:
    d, s = n + 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1

    def half(x):
        x %= n
        if x & 1:
            x += n
        return (x // 2) % n

    U, V, Qk = 1, P % n, Q % n  # index 1
    for bit in bin(d)[3:]:
        U, V, Qk = U * V % n, (V * V - 2 * Qk) % n, Qk * Qk % n  # index 2k
        if bit == "1":  # index 2k + 1
            U, V = half(P * U + V), half(D * U + P * V)
            Qk = Qk * Q % n
    if U == 0:
        return True
    for _ in range(s):  # V_(d·2^r), 0 ≤ r < s
        if V == 0:
            return True
        V, Qk = (V * V - 2 * Qk) % n, Qk * Qk % n
    return False


def is_probable_prime(c: int) -> bool:
    """P§5 steps 1-6."""
    if c < 2:
        return False
    if c % 2 == 0:
        return c == 2
    for p in SMALL_ODD_PRIMES:
        if c == p:
            return True
        if c % p == 0:
            return False
    d, s = c - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    x = pow(2, d, c)
    if x != 1 and x != c - 1:
        for _ in range(s - 1):
            x = x * x % c
            if x == c - 1:
                break
        else:
            return False
    r = math.isqrt(c)
    if r * r == c:
        return False
    D = 5
    while True:
        j = jacobi(D, c)
        if j == -1:
            break
        if j == 0 and abs(D) != c:
            return False
        D = -D - 2 if D > 0 else -D + 2
    return _strong_lucas(c, D, 1, ((1 - D) // 4) % c)


# ---------------------------------------------------------------------------------------------
# The RSA group Z_N^* / {±1} (P§1, §3-§7, appendix A)
# ---------------------------------------------------------------------------------------------

RSA2048_HEX = (
    "c7970ceedcc3b0754490201a7aa613cd73911081c790f5f1a8726f463550bb5b7ff0db8e1ea1189ec72f93d1650011bd"
    "721aeeacc2acde32a04107f0648c2813a31f5b0b7765ff8b44b4b6ffc93384b646eb09c7cf5e8592d40ea33c80039f35"
    "b4f14a04b51f7bfd781be4d1673164ba8eb991c2c4d730bbbe35f592bdef524af7e8daefd26c66fc02c479af89d64d37"
    "3f442709439de66ceb955f3ea37d5159f6135809f85334b5cb1813addc80cd05609f10ac6a95ad65872c909525bdad32"
    "bc729592642920f24c61dc5b3c3b7923e56b16a4d9d373d8721f24a3fc0f1b3131f55615172866bccc30f95054c824e7"
    "33a5eb6817f7bc16399d48c6361cc7e5"
)
TEST512_HEX = (
    "c568b9f1b880e96816234f4c113b37517999ad9d548be8f75ea694a6bd552a3080362ae464c6737f99681bfb8cda0baf"
    "a6255918984658de47b853ee50f01e4b"
)
TEST1024_HEX = (
    "c005415fc5e7e7a7ee518502e49bd810b3589b07ff253b9bebe5e4d59a0107d9e1b91427c8b6c8e532882bcb5210dd02"
    "06b7bfcd18b48d47ec392145018874a9baebd041afa7bf7e079c20da3ffe4a7e19cb4da8295f288118810abb0ed46970"
    "93bdd4c58d9e1fd23e73a03f0e7e0af9c0e1c5cec9a3ae365f1412ad4138652b"
)


class RsaGroup:
    kind = "rsa"

    def __init__(self, gid: str, n: int):
        self.id = gid
        self.N = n
        self.k = (n.bit_length() + 7) // 8
        self.elem_len = self.k
        self._y0 = {}
        self._h2g = {}
        self._h2p = {}
        self._vdf = {}

    def enc(self, v: int) -> bytes:
        return v.to_bytes(self.k, "big")

    def canon(self, v: int) -> int:
        return min(v, self.N - v)

    def decode(self, h: str, what: str, is_input: bool = False) -> int:
        """P§1 decoding rules: exactly 2k hex digits, not 0, canonical, an input not 1."""
        b = unhex(h, self.k, what)
        v = int.from_bytes(b, "big")
        need(v != 0, f"{what} is 0")
        need(v <= (self.N - 1) // 2, f"{what} is not canonical (> (N-1)/2)")
        if is_input:
            need(v != 1, f"{what} is the class ±1")
        return v

    def hash_to_group(self, seed: bytes) -> int:
        """P§3 (memoised: --tamper recomputes the same inputs many times)."""
        if seed not in self._h2g:
            self._h2g[seed] = self._hash_to_group(seed)
        return self._h2g[seed]

    def _hash_to_group(self, seed: bytes) -> int:
        L = self.k + 16
        B = -(-L // 32)
        nk = self.enc(self.N)
        a = 0
        while True:
            s = b"".join(h_tag("vrs/v1/hash-to-group", u16(self.k), nk, seed, u32(a), u32(i)) for i in range(B))[:L]
            x = self.canon(int.from_bytes(s, "big") % self.N)
            if x >= 2:
                return x
            a += 1

    def hash_to_prime(self, x: int, y: int, T: int) -> int:
        """P§5 (memoised)."""
        key = (x, y, T)
        if key not in self._h2p:
            self._h2p[key] = self._hash_to_prime(x, y, T)
        return self._h2p[key]

    def _hash_to_prime(self, x: int, y: int, T: int) -> int:
        nk = self.enc(self.N)
        j = 0
        while True:
            h = h_tag("vrs/v1/hash-to-prime", u16(self.k), nk, self.enc(x), self.enc(y), u64(T), u64(j))
            c = int.from_bytes(h, "big") | (1 << 255) | 1
            if is_probable_prime(c):
                return c
            j += 1

    def genesis(self, gid: str | None = None) -> bytes:
        """P§10: y_0 = hash_to_group(SHA-256(u8(14) ‖ "vrs/v1/genesis" ‖ u16(len(id)) ‖ id)), the id
        "exactly as spelled" (P§1, §10): the caller passes the proof's `modulus` once `group`
        found that it names this group (P§1: "a verifier takes the id from the proof's modulus")."""
        gid = self.id if gid is None else gid
        if gid not in self._y0:
            b = gid.encode("ascii")
            self._y0[gid] = self.enc(self.hash_to_group(sha256(u8(14) + b"vrs/v1/genesis" + u16(len(b)) + b)))
        return self._y0[gid]

    def input_from_seed(self, seed: bytes) -> bytes:
        return self.enc(self.hash_to_group(seed))

    def verify_vdf(self, x_h, y_h, pi_h, l_h, T, seed=None) -> str:
        """P§7 steps 1-5 (step 0, x from the seed, is done by the caller's *_input step).
        Memoised on the exact inputs (a failure is re-raised as it was)."""
        key = repr((x_h, y_h, pi_h, l_h, T))
        if key not in self._vdf:
            try:
                self._vdf[key] = (True, self._verify_vdf(x_h, y_h, pi_h, l_h, T))
            except StepFail as e:
                self._vdf[key] = (False, str(e))
        ok, msg = self._vdf[key]
        if not ok:
            raise StepFail(msg)
        return msg

    def _verify_vdf(self, x_h, y_h, pi_h, l_h, T) -> str:
        T = as_int(T, "iterations")
        need(1 <= T < 2**64, f"T = {T} out of range")
        x = self.decode(x_h, "x", is_input=True)
        y = self.decode(y_h, "y")
        pi = self.decode(pi_h, "pi")
        lb = unhex(l_h, 32, "l")
        l_ = int.from_bytes(lb, "big")
        l2 = self.hash_to_prime(x, y, T)
        need(l2 == l_, f"l differs from hash_to_prime(N, x, y, T) = {l2:064x}")
        r = pow(2, T, l_)
        w = self.canon(pow(pi, l_, self.N) * pow(x, r, self.N) % self.N)
        need(w == y, "pi^l · x^(2^T mod l) ≠ y")
        return f"pi^l · x^(2^T mod l) = y for T = {T}"


# ---------------------------------------------------------------------------------------------
# The class group of an imaginary quadratic field, chiavdf's VDF (P§18, §19)
# ---------------------------------------------------------------------------------------------


def hash_prime(seed: bytes, length: int, bitmask) -> int:
    """P§18 HashPrime (chiavdf's): "incrementing sprout as a big-endian integer of seed's length
    (wrapping at 256^len) and appending SHA-256(sprout) (the last digest cut to fit)"."""
    assert length % 8 == 0 and seed
    sprout = bytearray(seed)
    while True:
        blob = b""
        while len(blob) * 8 < length:
            for i in range(len(sprout) - 1, -1, -1):  # P§18: increment, then append the digest
                sprout[i] = (sprout[i] + 1) & 0xFF
                if sprout[i]:
                    break
            blob += sha256(bytes(sprout))[: length // 8 - len(blob)]
        p = int.from_bytes(blob, "big")
        for b in bitmask:
            p |= 1 << b
        p |= 1
        # P§18: chiavdf's is_prime_bpsw; "a strict BPSW agrees on every candidate larger than the
        # table's primes", so P§5's test is used.  GUESS(G44): the table's primes are not listed, so
        # for a tiny discriminant (a candidate that is itself a small prime) the verdict may differ.
        if is_probable_prime(p):
            return p


def create_discriminant(seed: bytes, bits: int) -> int:
    return -hash_prime(seed, bits, [0, 1, 2, bits - 1])


def _xgcd(a: int, b: int):
    """(g, x, y) with a·x + b·y = g = gcd(a, b) ≥ 0."""
    x0, x1, y0, y1 = 1, 0, 0, 1
    while b:
        q, r = divmod(a, b)
        a, b = b, r
        x0, x1 = x1, x0 - q * x1
        y0, y1 = y1, y0 - q * y1
    if a < 0:
        a, x0, y0 = -a, -x0, -y0
    return a, x0, y0


class Form(tuple):
    """A binary quadratic form (a, b, c); the discriminant is b² − 4ac."""

    def __new__(cls, a, b, c):
        return tuple.__new__(cls, (a, b, c))

    @property
    def disc(self):
        a, b, c = self
        return b * b - 4 * a * c

    def normalized(self):
        a, b, c = self
        if -a < b <= a:
            return self
        r = (a - b) // (2 * a)
        return Form(a, b + 2 * r * a, a * r * r + b * r + c)

    def reduced(self):
        a, b, c = self.normalized()
        while a > c or (a == c and b < 0):
            s = (c + b) // (2 * c)
            a, b, c = c, -b + 2 * s * c, c * s * s - b * s + a
        return Form(a, b, c).normalized()

    def is_reduced(self):
        a, b, c = self
        return a > 0 and -a < b <= a <= c and not (a == c and b < 0)


def form_from_ab(a: int, b: int, D: int) -> Form:
    num = b * b - D
    need(a > 0 and num % (4 * a) == 0, "(a, b) is not a form of D")
    return Form(a, b, num // (4 * a))


def compose(f: Form, g: Form, D: int) -> Form:
    """Gauss/Dirichlet composition followed by reduction (Buell, Thm 4.10 form of the law):
    e = gcd(a1, a2, (b1+b2)/2) = p·a1 + q·a2 + r·(b1+b2)/2,
    B = (p·a1·b2 + q·a2·b1 + r·(b1·b2 + D)/2) / e,  A = a1·a2/e²,  C = (B² − D)/(4A)."""
    a1, b1, _ = f
    a2, b2, _ = g
    s = (b1 + b2) // 2
    e1, u, v = _xgcd(a1, a2)
    e, w, z = _xgcd(e1, s)
    p, q, r = w * u, w * v, z
    A = a1 * a2 // (e * e)
    B = (p * a1 * b2 + q * a2 * b1 + r * (b1 * b2 + D) // 2) // e
    B %= 2 * A
    C = (B * B - D) // (4 * A)
    return Form(A, B, C).reduced()


def form_pow(f: Form, n: int, D: int) -> Form:
    result = Form(1, 1, (1 - D) // 4)
    base = f
    for bit in bin(n)[2:]:
        result = compose(result, result, D)
        if bit == "1":
            result = compose(result, base, D)
    return result


BQFC_SIZE = 100
BQFC_IDENTITY = b"\x04" + bytes(99)
BQFC_GENERATOR = b"\x08" + bytes(99)

_M64 = 1 << 64


def _w64(v: int) -> int:
    """A signed 64-bit two's-complement word (chiavdf's mp_limb_signed_t, P§18)."""
    v &= _M64 - 1
    return v - _M64 if v >> 63 else v


def _size(n: int) -> int:
    """P§18: size(n): bits of |n|, 1 for 0."""
    return max(1, abs(n).bit_length())


def xgcd_partial(r2: int, r1: int, L: int):
    """P§18, chiavdf's mpz_xgcd_partial (Lehmer with Jebelean's conditions), transcribed from the
    document's pseudo-code: word arithmetic in signed 64-bit two's complement.  It may stop one
    Euclidean step past the exact stop r1 ≤ L (it tests the bound on 64-bit approximations);
    that step shows in t, so the encoder must run exactly this.  Returns (co2, co1, r2, r1)."""
    co2, co1 = 0, -1
    while r1 != 0 and r1 > L:
        s = max(0, max(_size(r2), _size(r1)) - 63)
        rr2, rr1, bb = _w64(r2 >> s), _w64(r1 >> s), _w64((L >> s) % _M64)
        A2, A1, B2, B1 = 0, 1, 1, 0
        i = 0
        while rr1 != 0 and rr1 > bb:
            q = _w64(rr2 // rr1)
            t1 = _w64(rr2 - q * rr1)
            t2 = _w64(A2 - q * A1)
            t3 = _w64(B2 - q * B1)
            if i & 1:
                if t1 < _w64(-t3) or _w64(rr1 - t1) < _w64(t2 - A1):
                    break
            else:
                if t1 < _w64(-t2) or _w64(rr1 - t1) < _w64(t3 - B1):
                    break
            rr2, rr1, A2, A1, B2, B1 = rr1, t1, A1, t2, B1, t3
            i += 1
        if i == 0:
            q, r = divmod(r2, r1)
            r2, r1 = r1, r
            co2, co1 = co1, co2 - q * co1
        else:
            r2, r1 = B2 * r2 + A2 * r1, B1 * r2 + A1 * r1
            co2, co1 = B2 * co2 + A2 * co1, B1 * co2 + A1 * co1
            if r1 < 0:
                r1, co1 = -r1, -co1
            if r2 < 0:
                r2, co2 = -r2, -co2
    if r2 < 0:
        r2, co2, co1 = -r2, -co2, -co1
    return co2, co1, r2, r1


def _le(v: int, n: int) -> bytes:
    """P§18: LE(n, w) is |n| little-endian in exactly w bytes (refused when it does not fit)."""
    v = abs(v)
    if n < 0 or v.bit_length() > 8 * n:
        raise StepFail(f"bqfc field {v} does not fit {n} bytes")
    return v.to_bytes(n, "little")


def _d_bits(D: int) -> int:
    """P§18: d_bits = ⌈bits(|D|)/32⌉·32."""
    return -(-abs(D).bit_length() // 32) * 32


def bqfc_encode(f: Form, D: int) -> bytes:
    """P§18 "Compressed forms" (chiavdf's bqfc), the encoding pseudo-code line for line."""
    a, b, _ = f
    if (a, b) == (1, 1):
        return BQFC_IDENTITY
    if (a, b) == (2, 1):
        return BQFC_GENERATOR
    d_bits = _d_bits(D)
    if a == b:  # P§18: "if a = b: a' = a, t = 0, g = 0, b0 = 0, b_sign = 0 (the one special case)"
        ap, t, g, b0, b_sign = a, 0, 0, 0, False
    else:
        _, co1, _, _ = xgcd_partial(a, abs(b), math.isqrt(a))
        t = -co1
        g = math.gcd(a, t)
        if g == 1:
            ap, b0 = a, 0
        else:
            ap = a // g
            need(t % g == 0, "bqfc: t / g not exact")
            t = t // g
            b0 = abs(b) // ap
        b_sign = b < 0
    g_size = (max(1, g.bit_length()) + 7) // 8 - 1
    need(g_size < d_bits // 32, f"bqfc: g_size {g_size} ≥ d_bits/32")
    out = bytes([(1 if b_sign else 0) | (2 if t < 0 else 0), g_size])
    out += _le(ap, d_bits // 16 - g_size) + _le(t, d_bits // 32 - g_size)
    out += _le(g, g_size + 1) + _le(b0, g_size + 1)
    need(len(out) <= BQFC_SIZE, "bqfc longer than 100 bytes")
    return out + bytes(BQFC_SIZE - len(out))


def bqfc_decode(data: bytes, D: int, what: str) -> Form:
    """P§18: read the fields back, decompress (the document's pseudo-code), and accept only a
    reduced form of D (c an integer, gcd(a, b, c) = 1) whose encoding is exactly these bytes."""
    need(len(data) == BQFC_SIZE, f"{what}: {len(data)} bytes, expected 100")
    # P§18: "a decoder reads a first byte with bit 2 or bit 3 set as that form (bit 3 wins)
    # whatever the other 99 bytes hold, as chiavdf does".  (So the identity and the generator
    # have many accepted encodings, unlike P§18's "makes the encoding of every element unique";
    # see GUESSES.md G55.)
    if data[0] & 0x08:
        return form_from_ab(2, 1, D)
    if data[0] & 0x04:
        return form_from_ab(1, 1, D)
    d_bits = _d_bits(D)
    g_size = data[1]
    need(g_size < d_bits // 32, f"{what}: g_size {g_size} ≥ d_bits/32")
    off = 2
    fields = []
    for n in (d_bits // 16 - g_size, d_bits // 32 - g_size, g_size + 1, g_size + 1):
        fields.append(int.from_bytes(data[off:off + n], "little"))
        off += n
    ap, t, g, b0 = fields
    if data[0] & 2:
        t = -t
    if t == 0:
        a, b = ap, ap
    else:
        need(ap != 0, f"{what}: a' = 0 with t ≠ 0")
        tp = t + ap if t < 0 else t
        gg, u, _ = _xgcd(tp, ap)
        need(gg == 1, f"{what}: gcd(t⁺, a') ≠ 1")
        u %= ap
        sq = (t * t % ap) * (D % ap) % ap
        r = math.isqrt(sq)
        need(r * r == sq, f"{what}: (t² mod a')·(D mod a') mod a' is not a perfect square")
        b = r * u % ap
        a = ap * g if g > 1 else ap
        if b0 > 0:
            b = b + ap * b0
        if data[0] & 1:
            b = -b
    f = form_from_ab(a, b, D)
    need(f.is_reduced(), f"{what}: not a reduced form of D")
    need(math.gcd(math.gcd(f[0], f[1]), f[2]) == 1, f"{what}: gcd(a, b, c) ≠ 1")
    need(bqfc_encode(f, D) == data, f"{what}: bytes are not the bqfc encoding of their form")
    return f


class ClassGroupVdf:
    kind = "classgroup"

    def __init__(self, bits: int):
        self.bits = bits
        self.id = f"classgroup-{bits}"
        self.elem_len = BQFC_SIZE
        self._disc = {}
        self._vdf = {}

    def genesis(self, gid: str | None = None) -> bytes:
        return BQFC_GENERATOR  # P§19: y_0 = the generator's bytes (08 then 99 zero bytes)

    def discriminant(self, seed: bytes) -> int:
        if seed not in self._disc:
            self._disc[seed] = create_discriminant(seed, self.bits)
        return self._disc[seed]

    def input_from_seed(self, seed: bytes) -> bytes:
        self.discriminant(seed)
        return BQFC_GENERATOR  # P§19: x_e = the generator (2, 1) of D_e

    def verify_vdf(self, x_h, y_h, pi_h, l_h, T, seed=None) -> str:
        """P§18 "Verification", P§19 "Checks".  Memoised on the exact inputs."""
        key = repr((x_h, y_h, pi_h, l_h, T, seed))
        if key not in self._vdf:
            try:
                self._vdf[key] = (True, self._verify_vdf(x_h, y_h, pi_h, l_h, T, seed))
            except StepFail as e:
                self._vdf[key] = (False, str(e))
        ok, msg = self._vdf[key]
        if not ok:
            raise StepFail(msg)
        return msg

    def _verify_vdf(self, x_h, y_h, pi_h, l_h, T, seed) -> str:
        T = as_int(T, "iterations")
        need(T >= 1, "T < 1")
        need(seed is not None, "class-group proof without a seed")
        D = self.discriminant(seed)
        xb = unhex(x_h, BQFC_SIZE, "x")
        yb = unhex(y_h, BQFC_SIZE, "y")
        pb = unhex(pi_h, BQFC_SIZE, "pi")
        lb = unhex(l_h, 33, "l")  # P§19, §20 "Hex": ℓ (B) of a class group is 33 bytes
        x = bqfc_decode(xb, D, "x")
        y = bqfc_decode(yb, D, "y")
        pi = bqfc_decode(pb, D, "pi")
        B = hash_prime(bqfc_encode(x, D) + bqfc_encode(y, D), 264, [263])
        need(int.from_bytes(lb, "big") == B, f"l differs from B = HashPrime(bqfc(x) ‖ bqfc(y), 264, {{263}}) = {B:066x}")
        r = pow(2, T, B)
        w = compose(form_pow(pi, B, D), form_pow(x, r, D), D)
        need((w[0], w[1]) == (y[0], y[1]), "pi^B · x^(2^T mod B) ≠ y")
        return f"pi^B · x^(2^T mod B) = y in the class group of D ({self.bits} bits) for T = {T}"


def make_group(gid: str):
    """The verifier's group, from --group (P§13: "The group is the verifier's choice, never the
    server's").  Ids are matched ignoring ASCII case, as P§13 compares them."""
    low = gid.lower()
    if low == "rsa2048":
        return RsaGroup(gid, int(RSA2048_HEX, 16))
    if low == "test512":
        return RsaGroup(gid, int(TEST512_HEX, 16))
    if low == "test1024":
        return RsaGroup(gid, int(TEST1024_HEX, 16))
    if low.startswith("hex:"):
        digits = gid[4:]
        if not digits or not HEX_RE.match(digits):
            raise UsageError(f"bad modulus id {gid}")
        n = int(digits, 16)
        if n % 2 == 0 or not 64 <= n.bit_length() <= 2048:
            raise UsageError("hex: modulus must be odd, 64 to 2048 bits")
        # P§1: "hex:<digits> (any odd modulus of 64 to 2048 bits ...)"; the id that enters y_0 is
        # the proof's, once `group` found it equal to this one ignoring case (P§1, §13).
        return RsaGroup(gid, n)
    if low == "classgroup":
        return ClassGroupVdf(1024)
    m = re.fullmatch(r"classgroup-(\d+)", low)
    if m:
        bits = int(m.group(1))
        if bits % 8 or not 8 <= bits <= 1024:
            raise UsageError("classgroup bits must be a multiple of 8 from 8 to 1024")
        return ClassGroupVdf(bits)
    raise UsageError(f"unknown group {gid}")


# ---------------------------------------------------------------------------------------------
# Ed25519, RFC 8032 §5.1.7, strictly (P§11 "Signed acceptance")
# ---------------------------------------------------------------------------------------------

ED_P = 2**255 - 19
ED_L = 2**252 + 27742317777372353535851937790883648493
ED_D = -121665 * pow(121666, ED_P - 2, ED_P) % ED_P
ED_SQRT_M1 = pow(2, (ED_P - 1) // 4, ED_P)
ED_IDENTITY = (0, 1, 1, 0)


def _ed_add(P, Q):
    x1, y1, z1, t1 = P
    x2, y2, z2, t2 = Q
    A = (y1 - x1) * (y2 - x2) % ED_P
    B = (y1 + x1) * (y2 + x2) % ED_P
    C = t1 * 2 * ED_D * t2 % ED_P
    Dd = z1 * 2 * z2 % ED_P
    E, F, G, H = B - A, Dd - C, Dd + C, B + A
    return (E * F % ED_P, G * H % ED_P, F * G % ED_P, E * H % ED_P)


def _ed_mul(s: int, P):
    Q = ED_IDENTITY
    for bit in bin(s)[2:]:
        Q = _ed_add(Q, Q)
        if bit == "1":
            Q = _ed_add(Q, P)
    return Q


def _ed_encode(P) -> bytes:
    x, y, z, _ = P
    zi = pow(z, ED_P - 2, ED_P)
    x, y = x * zi % ED_P, y * zi % ED_P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


def _ed_decode(b: bytes):
    """RFC 8032 §5.1.3, refusing non-canonical y (y ≥ p) and x = 0 with the sign bit set."""
    if len(b) != 32:
        return None
    v = int.from_bytes(b, "little")
    sign = v >> 255
    y = v & ((1 << 255) - 1)
    if y >= ED_P:
        return None
    u = (y * y - 1) % ED_P
    w = (ED_D * y * y + 1) % ED_P
    x = u * pow(w, 3, ED_P) * pow(u * pow(w, 7, ED_P), (ED_P - 5) // 8, ED_P) % ED_P
    if (w * x * x - u) % ED_P != 0:
        if (w * x * x + u) % ED_P != 0:
            return None
        x = x * ED_SQRT_M1 % ED_P
    if x == 0 and sign:
        return None
    if x & 1 != sign:
        x = ED_P - x
    return (x, y, 1, x * y % ED_P)


ED_B = _ed_decode((4 * pow(5, ED_P - 2, ED_P) % ED_P).to_bytes(32, "little"))


def _ed_small_order(P) -> bool:
    return _ed_encode(_ed_mul(8, P)) == _ed_encode(ED_IDENTITY)


def ed25519_verify_strict(pub: bytes, msg: bytes, sig: bytes) -> str | None:
    """Returns None when valid, else the reason.  P§11: "strictly: S < L, A and R canonical
    encodings of points that are not of small order, and encode([S]B − [k]A) = R" (canonical: y < p,
    and RFC 8032 §5.1.3's refusal of x = 0 with the sign bit set; small order: [8]P = identity)."""
    if len(pub) != 32 or len(sig) != 64:
        return "wrong key or signature length"
    A = _ed_decode(pub)
    R = _ed_decode(sig[:32])
    if A is None:
        return "public key is not a canonical point encoding"
    if R is None:
        return "R is not a canonical point encoding"
    S = int.from_bytes(sig[32:], "little")
    if S >= ED_L:
        return "S ≥ L"
    if _ed_small_order(A):
        return "public key of small order"
    if _ed_small_order(R):
        return "R of small order"
    k = int.from_bytes(hashlib.sha512(sig[:32] + pub + msg).digest(), "little") % ED_L
    negA = ((-A[0]) % ED_P, A[1], A[2], (-A[3]) % ED_P)
    check = _ed_add(_ed_mul(S, ED_B), _ed_mul(k, negA))
    if _ed_encode(check) != sig[:32]:
        return "encode([S]B − [k]A) ≠ R"
    return None


# ---------------------------------------------------------------------------------------------
# RFC 6962 trees (P§11) and the RFC 9162 §2.1.3.2 audit-path fold (P§16 step 5)
# ---------------------------------------------------------------------------------------------


def leaf_hash(leaf: bytes) -> bytes:
    return sha256(b"\x00" + leaf)


def mth(hashes: list[bytes]) -> bytes:
    n = len(hashes)
    if n == 0:
        return sha256(b"")
    if n == 1:
        return hashes[0]
    k = 1
    while k * 2 < n:
        k *= 2
    return sha256(b"\x01" + mth(hashes[:k]) + mth(hashes[k:]))


def fold_path(lh: bytes, index: int, size: int, path: list) -> bytes:
    need(0 <= index < size, f"leaf index {index} not below tree size {size}")
    r, fn, sn = lh, index, size - 1
    for s in path:
        sb = unhex(s, 32, "audit path node")
        need(sn > 0, "audit path too long")
        if fn & 1 or fn == sn:
            r = sha256(b"\x01" + sb + r)
            while fn & 1 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = sha256(b"\x01" + r + sb)
        fn, sn = fn >> 1, sn >> 1
    need(sn == 0, "audit path too short")
    return r


# ---------------------------------------------------------------------------------------------
# Bet leaves (P§11), outcomes (P§12, G§1-§4)
# ---------------------------------------------------------------------------------------------


def f_field(s: str) -> bytes:
    b = s.encode("utf-8")
    return u16(len(b)) + b


AMOUNT_RE = re.compile(r"^(0|[1-9][0-9]*)\.([0-9]{2})$")


def cents(s, what: str) -> int:
    # P§20.1/§20.2: `amount` and `payout` are strings "with exactly two fraction digits".
    # GUESS(G20): and no sign, no leading zero beyond one ("0.25", "100.00"): the documents say only
    # "exactly two fraction digits" (P§11, G "Conventions").
    if not isinstance(s, str) or not AMOUNT_RE.match(s):
        raise StepFail(f"{what}: {s!r} is not a decimal with two fraction digits")
    i, f = s.split(".")
    return int(i) * 100 + int(f)


def fmt_cents(c: int) -> str:
    return f"{c // 100}.{c % 100:02d}"


def bet_leaf_bytes(bet: dict) -> bytes:
    """P§11: u8(10) ‖ "vrs/v1/bet" ‖ f(game_id) ‖ f(game) ‖ f(bet_type) ‖ f(target) ‖ f(combo)
    ‖ f(amount) ‖ f(player_id) ‖ f(player_seed) ‖ f(operator_key).
    P§20.1 names the proof's `bet` members after the leaf's fields, with their JSON types; P§11: "a
    member that is null in the proof's bet is f("") = 00 00 in the leaf"; a raw RNG request has
    empty bet_type, target, combo and amount and its client_seed as player_seed."""
    def s(v, what):
        if v is None:
            return ""
        need(isinstance(v, str), f"bet.{what}: expected a string, got {v!r}")
        return v

    game = s(bet.get("game"), "game")
    need(game in ("dice", "sicbo", "rng"), f"bet.game {game!r} unknown")
    target = bet.get("target")
    target_s = "" if target is None else str(as_int(target, "bet.target"))
    combo = bet.get("combo")
    if combo is None:
        combo_s = ""
    else:
        need(isinstance(combo, list) and len(combo) == 2, "bet.combo is not two integers")
        c = [as_int(v, "bet.combo") for v in combo]
        need(c[0] < c[1], "bet.combo is not in ascending order")  # P§11: "a,b" ascending
        combo_s = f"{c[0]},{c[1]}"
    amount = bet.get("amount")
    if amount is not None:
        cents(amount, "bet.amount")
    fields = [s(bet.get("game_id"), "game_id"), game, s(bet.get("bet_type"), "bet_type"), target_s, combo_s,
              s(amount, "amount"), s(bet.get("player_id"), "player_id"), s(bet.get("player_seed"), "player_seed"),
              s(bet.get("operator_key"), "operator_key")]
    return u8(10) + b"vrs/v1/bet" + b"".join(f_field(x) for x in fields)


def rng_value(y: bytes, game_id: str, player_seed) -> bytes:
    """P§12 / G§1."""
    return hmac.new(y, game_id.encode("utf-8") + (player_seed or "").encode("utf-8"), hashlib.sha256).digest()


def roll_dice(rng: bytes, count: int):
    """G§2: returns (dice, the bytes consumed, skipped, extra HMAC blocks)."""
    dice, used, skipped, block, n = [], bytearray(), 0, rng, 0
    while len(dice) < count:
        for b in block:
            if len(dice) == count:
                break
            used.append(b)
            if b >= 252:
                skipped += 1
            else:
                dice.append(1 + b % 6)
        if len(dice) < count:
            n += 1
            block = hmac.new(rng, u32(n), hashlib.sha256).digest()
    return dice, bytes(used), skipped, n


DICE_TYPES = {"exact", "over7", "under7", "odd", "even"}
SICBO_TYPES = {"big", "small", "odd", "even", "total", "single", "double", "triple", "anyTriple", "combo"}
SICBO_TOTAL_ODDS = {4: 60, 17: 60, 5: 30, 16: 30, 6: 17, 15: 17, 7: 12, 14: 12, 8: 8, 13: 8, 9: 6, 12: 6, 10: 6, 11: 6}


def settle_dice(bet: dict, dice: list[int], amount_c: int):
    """G§3: returns (won, payout in cents)."""
    bt = bet.get("bet_type")
    total = sum(dice)
    if bt == "exact":
        t = as_int(bet.get("target"), "target")
        need(2 <= t <= 12, f"exact target {t} outside 2-12")
        ways, won = 6 - abs(t - 7), total == t
    elif bt == "over7":
        ways, won = 15, total > 7
    elif bt == "under7":
        ways, won = 15, total < 7
    elif bt == "odd":
        ways, won = 18, total % 2 == 1
    elif bt == "even":
        ways, won = 18, total % 2 == 0
    else:
        raise StepFail(f"dice bet_type {bt!r} unknown")
    return won, (amount_c * 99 * 36 // (100 * ways) if won else 0)


def settle_sicbo(bet: dict, dice: list[int], amount_c: int):
    """G§4: a win returns amount × (X + 1)."""
    bt = bet.get("bet_type")
    total = sum(dice)
    triple = dice[0] == dice[1] == dice[2]
    odds = None
    if bt == "big":
        odds = 1 if 11 <= total <= 17 and not triple else None
    elif bt == "small":
        odds = 1 if 4 <= total <= 10 and not triple else None
    elif bt == "odd":
        odds = 1 if total % 2 == 1 and not triple else None
    elif bt == "even":
        odds = 1 if total % 2 == 0 and not triple else None
    elif bt == "total":
        t = as_int(bet.get("target"), "target")
        need(4 <= t <= 17, f"total target {t} outside 4-17")
        odds = SICBO_TOTAL_ODDS[t] if total == t else None
    elif bt in ("single", "double", "triple"):
        t = as_int(bet.get("target"), "target")
        need(1 <= t <= 6, f"{bt} target {t} outside 1-6")
        m = dice.count(t)
        if bt == "single":
            odds = m if m >= 1 else None
        elif bt == "double":
            odds = 10 if m >= 2 else None
        else:
            odds = 180 if m == 3 else None
    elif bt == "anyTriple":
        odds = 30 if triple else None
    elif bt == "combo":
        c = bet.get("combo")
        need(isinstance(c, list) and len(c) == 2 and c[0] != c[1] and all(1 <= as_int(v, "combo") <= 6 for v in c),
             f"combo {c!r} is not two distinct faces 1-6")
        odds = 5 if c[0] in dice and c[1] in dice else None
    else:
        raise StepFail(f"sicbo bet_type {bt!r} unknown")
    return (odds is not None), (amount_c * (odds + 1) if odds is not None else 0)


# ---------------------------------------------------------------------------------------------
# Fetching what the documents say a verifier fetches
# ---------------------------------------------------------------------------------------------


class Source:
    """GET with a cache; an offline copy (for --tamper) serves only what was fetched."""

    def __init__(self, server: str | None, cache=None):
        self.server = server.rstrip("/") if server else None
        self.cache = {} if cache is None else cache

    def get(self, path: str):
        if path in self.cache:
            return self.cache[path]
        if self.server is None:
            raise UsageError(f"offline: {path} was not fetched")
        req = urllib.request.Request(self.server + path, headers={"accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, body = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, body = e.code, e.read()
        except (urllib.error.URLError, OSError) as e:
            raise UsageError(f"GET {path}: {e}") from None
        try:
            # P§10 "Plan": margin_e = 100 · A_e, "read the number's decimal text" (one of the two
            # readings it allows): JSON numbers with a fraction are read as decimals.
            data = json.loads(body, parse_float=decimal.Decimal)
        except ValueError:
            data = None  # not JSON: a record that "cannot be fetched" (P§13)
        res = (status, data)
        self.cache[path] = res
        return res

    def record(self, path: str):
        """A published record, or None when it cannot be fetched (any answer but a 200 with a JSON
        object).  P§13: "A record a step needs that cannot be fetched, or lacks a member the step
        reads, fails that step"; only a network error is exit 2."""
        status, data = self.get(path)
        return data if status == 200 and isinstance(data, dict) else None

    def epoch(self, n: int):
        """GET /api/v1/epochs/{n} (P§13, §20.3)."""
        return self.record(f"/api/v1/epochs/{n}")

    def pool_batch(self, b: int):
        """GET /api/v1/pool/batches/{b} (P§14 "Serving", §20.6)."""
        return self.record(f"/api/v1/pool/batches/{b}")


# ---------------------------------------------------------------------------------------------
# The steps.  Each takes the context and returns its `ok` detail, or raises StepFail/StepPend.
# ---------------------------------------------------------------------------------------------


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
    """P§11, §13: fold the audit path (RFC 9162 §2.1.3.2) from the leaf hash to the bets root."""
    p = c.proof
    lh = leaf_hash(unhex(p.get("leaf"), None, "leaf"))
    idx, size = as_int(p.get("leaf_index"), "leaf_index"), as_int(p.get("bet_count"), "bet_count")
    audit = p.get("audit_path")
    need(isinstance(audit, list), "audit_path is not an array")
    root = fold_path(lh, idx, size, audit)
    need(root.hex() == str(p.get("bets_root")).lower(), "audit path does not give bets_root")
    return f"leaf {idx} of {size} under bets root {root.hex()[:16]}…"


def step_bets_root(c: Ctx) -> str:
    """P§13: not one of `vrs verify`'s steps, but the browser page's: "plus bets_root from the
    epoch's published leaf_hashes".  The leaf hashes of GET /api/v1/epochs/{e} must number
    bet_count, give bets_root, and hold this game's leaf hash at leaf_index."""
    e = as_int(c.proof.get("vdfEpoch"), "vdfEpoch")
    rec = c.src.epoch(e)
    need(rec is not None, f"GET /api/v1/epochs/{e}: cannot be fetched")
    lh_list = rec.get("leaf_hashes")
    need(isinstance(lh_list, list), f"epoch {e} has no leaf_hashes")
    hashes = [unhex(h, 32, "leaf_hashes[]") for h in lh_list]
    need(len(hashes) == as_int(rec.get("bet_count"), "bet_count"), "leaf_hashes count ≠ bet_count")
    root = mth(hashes)
    need(root.hex() == str(rec.get("bets_root")).lower(), "epoch's leaf hashes do not give its bets_root")
    need(root.hex() == str(c.proof.get("bets_root")).lower(), "proof's bets_root ≠ the epoch's")
    need(len(hashes) == c.proof.get("bet_count"), "proof's bet_count ≠ the epoch's")
    idx = as_int(c.proof.get("leaf_index"), "leaf_index")
    need(0 <= idx < len(hashes) and hashes[idx].hex() == str(c.proof.get("leaf_hash")).lower(),
         "the epoch's leaf at leaf_index is not this game's")
    return f"{len(hashes)} published leaves of epoch {e} hash to its bets root"


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
    need(opened <= closed, "opened_at_ms > closed_at_ms")
    # Not in rules 1-3, but stated by P§10: "Close" (closed_at_ms is "never before the acceptance of
    # a game it holds, nor before opened_at_ms") and "Whose numbers" (opened_at_ms ≤ acceptance ≤
    # closed_at_ms).  GUESS(G33): that a verifier's `timing` checks it with bet_created_at_ms.
    created = as_int(c.proof.get("bet_created_at_ms"), "bet_created_at_ms")
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
    signs this game's leaf, its epoch (vdfEpoch) or pool entry (pool_index), and bet_created_at_ms."""
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
        number = as_int(p.get("vdfEpoch"), "vdfEpoch")
        need(acc.get("epoch") == number and acc.get("pool_index") is None, "acceptance names another epoch")
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
    cd = "0x7672732d616e63686f722d76313a" + root.hex()
    if a.get("calldata") is not None:
        need(str(a["calldata"]).lower() == cd, "calldata ≠ 'vrs-anchor-v1:' ‖ root")
    return f"leaf {pos} of {size} under anchor root {root.hex()[:16]}… (batch {a.get('batch')}, tx {a.get('tx')})"


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
    if be.get("status") == "pending":
        raise StepPend(f"bet epoch {E} is not closed yet")
    need(be.get("status") == "bound", f"bet epoch {E} is {be.get('status')!r}")
    rec = c.src.epoch(E)
    need(rec is not None, f"GET /api/v1/epochs/{E}: cannot be fetched")
    hl = rec.get("leaf_hashes")
    need(isinstance(hl, list), f"epoch {E} has no leaf_hashes")
    hashes = [unhex(h, 32, "leaf_hashes[]") for h in hl]
    idx = as_int(be.get("leaf_index"), "bet_epoch.leaf_index")
    need(0 <= idx < len(hashes) and hashes[idx] == leaf_hash(leaf), f"leaf {idx} of epoch {E} is not this bet's")
    need(json_eq(rec.get("bet_count"), len(hashes)), f"epoch {E}'s bet_count ≠ its {len(hashes)} leaf hashes")
    need(json_eq(be.get("tree_size"), len(hashes)), "bet_epoch.tree_size ≠ E's bet_count")
    root = mth(hashes)
    need(root.hex() == str(rec.get("bets_root")).lower(), f"epoch {E}'s leaf hashes do not give its bets_root")
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


# ---------------------------------------------------------------------------------------------
# `members`: P§20's JSON types, and its "as in proof" copies (an extra step)
# ---------------------------------------------------------------------------------------------

# --- BEGIN §20 MEMBERS (generated by gen_members.py from PROTOCOL §20)
MEMBERS = {'20.1': {'checks': ['array'],
          'checks[]': ['object'],
          'checks[].detail': ['string'],
          'checks[].name': ['string'],
          'checks[].passed': ['boolean'],
          'game_id': ['string'],
          'proof': ['object'],
          'proof.acceptance': ['null', 'object'],
          'proof.anchor': ['object'],
          'proof.anchorChain': ['string'],
          'proof.anchorChainId': ['integer'],
          'proof.anchorTx': ['null', 'string'],
          'proof.anchor_epoch': ['integer'],
          'proof.anchor_status': ['string'],
          'proof.anchor_y': ['string'],
          'proof.audit_path': ['array'],
          'proof.audit_path[]': ['string'],
          'proof.batch_committed_at_ms': ['integer'],
          'proof.batch_first_index': ['integer'],
          'proof.batch_root': ['string'],
          'proof.batch_seed': ['string'],
          'proof.batch_size': ['integer'],
          'proof.bet': ['object'],
          'proof.bet.amount': ['null', 'string'],
          'proof.bet.bet_type': ['null', 'string'],
          'proof.bet.combo': ['array', 'null'],
          'proof.bet.combo[]': ['integer'],
          'proof.bet.game': ['string'],
          'proof.bet.game_id': ['string'],
          'proof.bet.operator_key': ['string'],
          'proof.bet.player_id': ['string'],
          'proof.bet.player_seed': ['null', 'string'],
          'proof.bet.target': ['integer', 'null'],
          'proof.bet_count': ['integer'],
          'proof.bet_created_at_ms': ['integer'],
          'proof.bet_epoch': ['null', 'object'],
          'proof.bet_epoch.audit_path': ['array'],
          'proof.bet_epoch.audit_path[]': ['string'],
          'proof.bet_epoch.bets_root': ['string'],
          'proof.bet_epoch.epoch': ['integer'],
          'proof.bet_epoch.leaf_index': ['integer', 'null'],
          'proof.bet_epoch.status': ['string'],
          'proof.bet_epoch.tree_size': ['integer'],
          'proof.bets_root': ['string'],
          'proof.checkpoints': ['array'],
          'proof.checkpoints[]': ['object'],
          'proof.checkpoints[].iteration': ['integer'],
          'proof.checkpoints[].value': ['string'],
          'proof.derivation': ['string'],
          'proof.discriminant': ['string'],
          'proof.discriminant_bits': ['integer'],
          'proof.entry_leaf': ['string'],
          'proof.entry_leaf_hash': ['string'],
          'proof.entry_seed': ['string'],
          'proof.epoch_seed': ['string'],
          'proof.iterations': ['integer'],
          'proof.l': ['string'],
          'proof.leaf': ['string'],
          'proof.leaf_hash': ['string'],
          'proof.leaf_index': ['integer'],
          'proof.legacyTx': ['null', 'string'],
          'proof.modulus': ['string'],
          'proof.modulus_n': ['string'],
          'proof.pi': ['string'],
          'proof.pool_batch': ['integer'],
          'proof.pool_index': ['integer'],
          'proof.pool_served': ['boolean'],
          'proof.previous_batch_root': ['string'],
          'proof.previous_output': ['string'],
          'proof.rngValue': ['string'],
          'proof.secret': ['string'],
          'proof.timing': ['object'],
          'proof.timing.closed_at_ms': ['integer'],
          'proof.timing.deadline_ms': ['integer', 'null'],
          'proof.timing.nonce': ['null', 'string'],
          'proof.timing.opened_at_ms': ['integer'],
          'proof.timing.previous_closed_at_ms': ['integer', 'null'],
          'proof.timing.previous_epoch': ['integer'],
          'proof.timing.previous_iterations': ['integer', 'null'],
          'proof.timing.prior_resolved_at_ms': ['integer', 'null'],
          'proof.timing.security_margin': ['null', 'number'],
          'proof.timing.squarings_per_second': ['integer', 'null'],
          'proof.timing.version': ['integer'],
          'proof.vdfEpoch': ['integer'],
          'proof.veo_class': ['string'],
          'proof.x': ['string'],
          'proof.y': ['string'],
          'replay_steps': ['array'],
          'replay_steps[bet_committed]': ['object'],
          'replay_steps[bet_committed].accepted_at': ['integer'],
          'replay_steps[bet_committed].action': ['string'],
          'replay_steps[bet_committed].audit_path': ['array'],
          'replay_steps[bet_committed].audit_path[]': ['string'],
          'replay_steps[bet_committed].batch_committed_at': ['integer'],
          'replay_steps[bet_committed].batch_root': ['string'],
          'replay_steps[bet_committed].batch_size': ['integer'],
          'replay_steps[bet_committed].bet_count': ['integer'],
          'replay_steps[bet_committed].bets_root': ['string'],
          'replay_steps[bet_committed].closed_at': ['integer'],
          'replay_steps[bet_committed].description': ['string'],
          'replay_steps[bet_committed].entry_leaf_hash': ['string'],
          'replay_steps[bet_committed].epoch': ['integer'],
          'replay_steps[bet_committed].game_id': ['string'],
          'replay_steps[bet_committed].leaf': ['string'],
          'replay_steps[bet_committed].leaf_hash': ['string'],
          'replay_steps[bet_committed].leaf_index': ['integer'],
          'replay_steps[bet_committed].pool_index': ['integer'],
          'replay_steps[bet_committed].step': ['integer'],
          'replay_steps[bet_evaluated]': ['object'],
          'replay_steps[bet_evaluated].action': ['string'],
          'replay_steps[bet_evaluated].amount': ['null', 'string'],
          'replay_steps[bet_evaluated].bet_type': ['null', 'string'],
          'replay_steps[bet_evaluated].combo': ['array', 'null'],
          'replay_steps[bet_evaluated].combo[]': ['integer'],
          'replay_steps[bet_evaluated].note': ['null', 'string'],
          'replay_steps[bet_evaluated].payout': ['null', 'string'],
          'replay_steps[bet_evaluated].rule': ['null', 'string'],
          'replay_steps[bet_evaluated].step': ['integer'],
          'replay_steps[bet_evaluated].target': ['integer', 'null'],
          'replay_steps[bet_evaluated].total': ['integer', 'null'],
          'replay_steps[bet_evaluated].won': ['boolean', 'null'],
          'replay_steps[dice_rolled]': ['object'],
          'replay_steps[dice_rolled].action': ['string'],
          'replay_steps[dice_rolled].bytes_used': ['null', 'string'],
          'replay_steps[dice_rolled].dice': ['array'],
          'replay_steps[dice_rolled].dice[]': ['integer'],
          'replay_steps[dice_rolled].hmac_blocks': ['integer', 'null'],
          'replay_steps[dice_rolled].note': ['null', 'string'],
          'replay_steps[dice_rolled].rule': ['string'],
          'replay_steps[dice_rolled].skipped': ['integer', 'null'],
          'replay_steps[dice_rolled].step': ['integer'],
          'replay_steps[randomness_derived]': ['object'],
          'replay_steps[randomness_derived].action': ['string'],
          'replay_steps[randomness_derived].formula': ['string'],
          'replay_steps[randomness_derived].game_id': ['string'],
          'replay_steps[randomness_derived].key': ['string'],
          'replay_steps[randomness_derived].message': ['string'],
          'replay_steps[randomness_derived].player_seed': ['null', 'string'],
          'replay_steps[randomness_derived].rngValue': ['string'],
          'replay_steps[randomness_derived].step': ['integer'],
          'replay_steps[vdf_epoch_published]': ['object'],
          'replay_steps[vdf_epoch_published].action': ['string'],
          'replay_steps[vdf_epoch_published].batch_seed': ['string'],
          'replay_steps[vdf_epoch_published].bets_root': ['string'],
          'replay_steps[vdf_epoch_published].computation_ms': ['integer'],
          'replay_steps[vdf_epoch_published].description': ['string'],
          'replay_steps[vdf_epoch_published].epoch': ['integer'],
          'replay_steps[vdf_epoch_published].epoch_seed': ['string'],
          'replay_steps[vdf_epoch_published].input': ['string'],
          'replay_steps[vdf_epoch_published].iterations': ['integer'],
          'replay_steps[vdf_epoch_published].l': ['string'],
          'replay_steps[vdf_epoch_published].modulus': ['string'],
          'replay_steps[vdf_epoch_published].output': ['string'],
          'replay_steps[vdf_epoch_published].pi': ['string'],
          'replay_steps[vdf_epoch_published].pool_batch': ['integer'],
          'replay_steps[vdf_epoch_published].previous_epoch': ['integer'],
          'replay_steps[vdf_epoch_published].previous_output': ['string'],
          'replay_steps[vdf_epoch_published].published_at': ['integer'],
          'replay_steps[vdf_epoch_published].secret': ['string'],
          'replay_steps[vdf_epoch_published].step': ['integer'],
          'replay_steps[vdf_epoch_published].version': ['integer'],
          'verified': ['boolean']},
 '20.2': {'game_id': ['string'],
          'message': ['string'],
          'replay': ['array'],
          'resolves_at_epoch': ['integer'],
          'result': ['object'],
          'result.amount': ['string'],
          'result.bet_id': ['string'],
          'result.bet_type': ['string'],
          'result.client_seed': ['null', 'string'],
          'result.combo': ['array', 'null'],
          'result.combo[]': ['integer'],
          'result.entropy': ['string'],
          'result.epoch': ['integer', 'null'],
          'result.game': ['string'],
          'result.game_id': ['string'],
          'result.operator_key': ['string'],
          'result.outcome': ['object'],
          'result.outcome.die1': ['integer'],
          'result.outcome.die2': ['integer'],
          'result.outcome.die3': ['integer'],
          'result.outcome.total': ['integer'],
          'result.payout': ['string'],
          'result.player_id': ['string'],
          'result.player_seed': ['null', 'string'],
          'result.pool_index': ['integer'],
          'result.pool_served': ['boolean'],
          'result.proof': ['object'],
          'result.random': ['string'],
          'result.request_id': ['string'],
          'result.resolved_at': ['integer'],
          'result.result_hash': ['string'],
          'result.rngValue': ['string'],
          'result.rule': ['string'],
          'result.target': ['integer', 'null'],
          'result.verified': ['boolean'],
          'result.verify_page': ['string'],
          'result.verify_url': ['string'],
          'result.won': ['boolean'],
          'status': ['string']},
 '20.3': {'anchor': ['object'],
          'bet_count': ['integer', 'null'],
          'bets_root': ['null', 'string'],
          'closed_at_ms': ['integer', 'null'],
          'deadline_ms': ['integer', 'null'],
          'epoch': ['integer'],
          'iterations': ['integer', 'null'],
          'l': ['null', 'string'],
          'leaf_hashes': ['array'],
          'leaf_hashes[]': ['string'],
          'modulus': ['string'],
          'nonce': ['null', 'string'],
          'opened_at_ms': ['integer'],
          'pi': ['null', 'string'],
          'previous_epoch': ['integer', 'null'],
          'previous_output': ['null', 'string'],
          'resolved_at_ms': ['integer', 'null'],
          'security_margin': ['null', 'number'],
          'squarings_per_second': ['integer', 'null'],
          'status': ['string'],
          'veo_class': ['string'],
          'version': ['integer'],
          'x': ['null', 'string'],
          'y': ['null', 'string']},
 '20.4': {'acceptance': ['object'],
          'acceptance.accepted_at_ms': ['integer'],
          'acceptance.epoch': ['integer', 'null'],
          'acceptance.kind': ['string'],
          'acceptance.leaf': ['string'],
          'acceptance.leaf_hash': ['string'],
          'acceptance.pool_index': ['integer', 'null'],
          'acceptance.public_key': ['string'],
          'acceptance.signature': ['string'],
          'acceptance.version': ['integer'],
          'accepted': ['boolean'],
          'bet_id': ['string'],
          'game_id': ['string'],
          'message': ['string'],
          'poll_url': ['string'],
          'pool_index': ['integer'],
          'pool_served': ['boolean'],
          'request_id': ['string'],
          'resolves_at_epoch': ['integer'],
          'result': ['object'],
          'result.amount': ['string'],
          'result.bet_type': ['string'],
          'result.outcome': ['object'],
          'result.outcome.die1': ['integer'],
          'result.outcome.die2': ['integer'],
          'result.outcome.die3': ['integer'],
          'result.outcome.total': ['integer'],
          'result.payout': ['string'],
          'result.rngValue': ['string'],
          'result.won': ['boolean'],
          'status': ['string'],
          'verify_page': ['string'],
          'verify_url': ['string']},
 '20.5': {'anchor': ['object'],
          'anchor.audit_path': ['array'],
          'anchor.audit_path[]': ['string'],
          'anchor.batch': ['integer'],
          'anchor.block': ['integer', 'null'],
          'anchor.calldata': ['string'],
          'anchor.chain': ['string'],
          'anchor.chain_id': ['integer'],
          'anchor.enabled': ['boolean'],
          'anchor.epochs': ['object'],
          'anchor.epochs.first': ['integer'],
          'anchor.epochs.last': ['integer'],
          'anchor.leaf': ['string'],
          'anchor.leaf_hash': ['string'],
          'anchor.leaf_index': ['integer'],
          'anchor.message': ['string'],
          'anchor.notary_batches': ['object'],
          'anchor.notary_batches.from': ['integer'],
          'anchor.notary_batches.to': ['integer'],
          'anchor.pool_batches': ['object'],
          'anchor.pool_batches.from': ['integer'],
          'anchor.pool_batches.to': ['integer'],
          'anchor.root': ['string'],
          'anchor.status': ['string'],
          'anchor.tree_size': ['integer'],
          'anchor.tx': ['null', 'string']},
 '20.6': {'anchor_epoch': ['integer'],
          'committed_at': ['integer'],
          'committed_at_ms': ['integer'],
          'first_index': ['integer'],
          'leaf_hashes': ['array'],
          'leaf_hashes[]': ['string'],
          'number': ['integer'],
          'previous_root': ['string'],
          'root': ['string'],
          'seed': ['string'],
          'served': ['array'],
          'served[]': ['object'],
          'served[].game_id': ['string'],
          'served[].index': ['integer'],
          'served[].served_at_ms': ['integer'],
          'served[].verify_url': ['string'],
          'size': ['integer'],
          'unserved': ['integer']},
 '20.7': {'entropy': ['string'],
          'entropy_hash': ['string'],
          'epoch': ['integer'],
          'iterations': ['integer', 'null'],
          'message': ['string'],
          'modulus': ['string'],
          'source': ['string'],
          'status': ['string'],
          'timestamp': ['integer'],
          'veo_class': ['string'],
          'verify_url': ['null', 'string']},
 '20.8': {'acceptance_key': ['string'],
          'acceptance_keys': ['array'],
          'acceptance_keys[]': ['object'],
          'acceptance_keys[].public_key': ['string'],
          'acceptance_keys[].since_ms': ['integer', 'null'],
          'anchoring': ['object'],
          'anchoring.chain': ['string'],
          'anchoring.chain_id': ['integer'],
          'anchoring.enabled': ['boolean'],
          'anchoring.message': ['null', 'string'],
          'anchoring.state': ['string'],
          'database': ['string'],
          'description': ['string'],
          'links': ['object'],
          'links.api_docs': ['string'],
          'links.docs': ['string'],
          'links.health': ['string'],
          'links.recent': ['string'],
          'links.stats': ['string'],
          'links.verify': ['string'],
          'links.whitepaper': ['string'],
          'service': ['string'],
          'status': ['string'],
          'uptime': ['integer'],
          'vdf_engine': ['object'],
          'vdf_engine.computation_time': ['string'],
          'vdf_engine.epoch': ['object'],
          'vdf_engine.epoch.computing': ['integer', 'null'],
          'vdf_engine.epoch.current': ['integer', 'null'],
          'vdf_engine.epoch.iterations': ['integer'],
          'vdf_engine.epoch.last_resolved': ['integer', 'null'],
          'vdf_engine.epoch.modulus': ['string'],
          'vdf_engine.role': ['string'],
          'vdf_engine.security': ['object'],
          'vdf_engine.security.margin': ['number'],
          'vdf_engine.security.protocol_version': ['integer'],
          'vdf_engine.security.rule': ['string'],
          'vdf_engine.security.squarings_per_second': ['integer'],
          'vdf_engine.security.vdf_threads': ['integer'],
          'vdf_engine.status': ['string'],
          'version': ['string']}}
# --- END §20 MEMBERS


def json_type(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, (float, decimal.Decimal)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def doc_types(kind: str, path: str):
    """P§20's types for a member path of one response kind, or None when no table lists it."""
    if kind == "games":
        if path.startswith("replay["):
            return doc_types("verify", "replay_steps" + path[len("replay"):])
        if path == "result.proof" or path.startswith("result.proof."):
            return doc_types("verify", path[len("result."):])
        return MEMBERS.get("20.2", {}).get(path)
    if kind == "verify":
        if path.startswith("proof.acceptance."):
            return MEMBERS.get("20.4", {}).get(path[len("proof."):])  # P§20.1: "repeated in 20.4"
        if path.startswith("proof.anchor."):
            return MEMBERS.get("20.5", {}).get(path[len("proof."):])
        return MEMBERS.get("20.1", {}).get(path)
    if kind == "epoch":
        if path.startswith("anchor."):
            return MEMBERS.get("20.5", {}).get(path)
        return MEMBERS.get("20.3", {}).get(path)
    if kind == "batch":
        return MEMBERS.get("20.6", {}).get(path)
    if kind == "root":
        return MEMBERS.get("20.8", {}).get(path)
    return None


def type_problems(kind: str, value, path: str = ""):
    """(wrong types, undocumented paths) of a response, walked member by member.  An array's
    elements are `path[]`; replay steps are `replay_steps[<action>]` (P§20 "Paths")."""
    wrong, undoc = [], []

    def walk(v, p):
        if p:
            want = doc_types(kind, p)
            if want is None:
                undoc.append(p)
                return
            t = json_type(v)
            if t not in want and not (t == "integer" and "number" in want):
                wrong.append(f"{p} is {t}, P§20 says {' or '.join(want)}")
                return
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{p}.{k}" if p else k)
        elif isinstance(v, list):
            for x in v:
                if p in ("replay_steps", "replay") and isinstance(x, dict):
                    walk(x, f"{p}[{x.get('action')}]")
                else:
                    walk(x, f"{p}[]")

    walk(value, path)
    return wrong, undoc


def secs(ms):
    """P§20 "Times": the `*_at` members are the `_ms` instants "in whole seconds (rounded down)"."""
    return ms // 1000 if isinstance(ms, int) and not isinstance(ms, bool) else None


REPLAY_ORDER = ["bet_committed", "vdf_epoch_published", "randomness_derived", "dice_rolled", "bet_evaluated"]
# Members that may legitimately change between two fetches of one game (a bet epoch closing,
# an anchor batch forming): compared only when both copies are final.  GUESS(G53).
MOVING = {"bet_epoch", "anchor", "anchor_status", "anchorTx", "legacyTx"}


def step_members(c: Ctx) -> str:
    """(Extra.)  P§20: every member of every response fetched for this game has the JSON type
    P§20 gives it, and the copies P§20 calls "as in proof" (replay steps, the game result, its
    `proof` "member for member" and `replay` "element for element") agree.  Members P§20 does not
    list are named (and fail with --strict-members)."""
    p, bet = c.proof, c.proof.get("bet") or {}
    wrong, undoc = [], []
    kinds = [("/api/v1/verify/", "verify"), ("/api/v1/games/", "games"), ("/api/v1/epochs/", "epoch"),
             ("/api/v1/pool/batches/", "batch")]
    for path, (status, data) in sorted(c.src.cache.items()):
        if status != 200 or not isinstance(data, dict):
            continue
        kind = "root" if path == "/" else next((k for pre, k in kinds if path.startswith(pre)), None)
        if kind is None:
            continue
        w, u = type_problems(kind, data)
        wrong += [f"{path}: {x}" for x in w]
        undoc += [f"{path}: {x}" for x in u]
    need(not wrong, "; ".join(wrong[:4]) + (f" (+{len(wrong) - 4} more)" if len(wrong) > 4 else ""))
    bad = []

    def eq(what, a, b):
        if not json_eq(a, b):
            bad.append(f"{what} ({a!r:.40} ≠ {b!r:.40})")

    # replay_steps (P§20.1): five objects, steps 1-5, in order.
    steps = c.resp.get("replay_steps")
    need(isinstance(steps, list) and [s.get("action") for s in steps] == REPLAY_ORDER
         and [s.get("step") for s in steps] == [1, 2, 3, 4, 5], "replay_steps are not the five steps in order")
    bc, vp, rd, be = (c.replay[a] for a in ("bet_committed", "vdf_epoch_published", "randomness_derived", "bet_evaluated"))
    for k in ("leaf", "leaf_index", "audit_path"):
        eq(f"bet_committed.{k}", bc.get(k), p.get(k))
    eq("bet_committed.game_id", bc.get("game_id"), c.game_id)
    eq("bet_committed.accepted_at", bc.get("accepted_at"), secs(p.get("bet_created_at_ms")))
    for rk, pk in (("epoch", "vdfEpoch"), ("modulus", "modulus"), ("iterations", "iterations"), ("input", "x"),
                   ("output", "y"), ("pi", "pi"), ("l", "l")):
        eq(f"vdf_epoch_published.{rk}", vp.get(rk), p.get(pk))
    eq("randomness_derived.game_id", rd.get("game_id"), c.game_id)
    eq("randomness_derived.player_seed", rd.get("player_seed"), bet.get("player_seed"))
    for k in ("bet_type", "target", "amount", "combo"):
        eq(f"bet_evaluated.{k}", be.get(k), bet.get(k))
    t = p.get("timing") or {}
    if not c.pool:
        eq("bet_committed.leaf_hash", bc.get("leaf_hash"), p.get("leaf_hash"))
        for k in ("bets_root", "bet_count"):
            eq(f"bet_committed.{k}", bc.get(k), p.get(k))
        eq("bet_committed.epoch", bc.get("epoch"), p.get("vdfEpoch"))
        eq("bet_committed.closed_at", bc.get("closed_at"), secs(t.get("closed_at_ms")))
        for k in ("epoch_seed", "previous_output", "bets_root"):
            eq(f"vdf_epoch_published.{k}", vp.get(k), p.get(k))
        eq("vdf_epoch_published.previous_epoch", vp.get("previous_epoch"), t.get("previous_epoch"))
        eq("vdf_epoch_published.version", vp.get("version"), t.get("version"))
        e = p.get("vdfEpoch")
        rec = c.src.epoch(e) if isinstance(e, int) else None
        if rec is not None:
            eq("vdf_epoch_published.published_at", vp.get("published_at"), secs(rec.get("resolved_at_ms")))
        # P§13's timing table: closed_p, T_p, and when y_{e−1} was stored, "as the server sees them";
        # they must be what the records say (the rules read the records).
        if t.get("version") == 2 and isinstance(e, int):
            pe = t.get("previous_epoch")
            rp = c.src.epoch(pe) if isinstance(pe, int) and pe >= 1 else None
            eq("timing.previous_closed_at_ms", t.get("previous_closed_at_ms"), rp.get("closed_at_ms") if rp else None)
            eq("timing.previous_iterations", t.get("previous_iterations"), rp.get("iterations") if rp else None)
            rq = c.src.epoch(e - 1) if e >= 2 else None
            eq("timing.prior_resolved_at_ms", t.get("prior_resolved_at_ms"), rq.get("resolved_at_ms") if rq else None)
        if rec is not None:  # P§20.3: `epoch` n; modulus and veo_class "as in proof"
            eq(f"epochs/{e}.epoch", rec.get("epoch"), e)
            eq(f"epochs/{e}.veo_class", rec.get("veo_class"), p.get("veo_class"))
    else:
        for k in ("pool_index", "entry_leaf_hash", "batch_root", "batch_size"):
            eq(f"bet_committed.{k}", bc.get(k), p.get(k))
        eq("bet_committed.batch_committed_at", bc.get("batch_committed_at"), secs(p.get("batch_committed_at_ms")))
        for k in ("pool_batch", "batch_seed", "secret"):
            eq(f"vdf_epoch_published.{k}", vp.get(k), p.get(k))
        b = p.get("pool_batch")
        row = c.src.pool_batch(b) if isinstance(b, int) else None
        if row is not None:
            eq(f"pool/batches/{b}.committed_at", row.get("committed_at"), secs(row.get("committed_at_ms")))
            for s in row.get("served") or []:
                eq(f"pool/batches/{b}.served[{s.get('index')}].verify_url", s.get("verify_url"), f"/api/v1/verify/{s.get('game_id')}")
    # The game result (P§20.2).
    g = c.games()
    need(g is not None, f"GET /api/v1/games/{c.game_id}: cannot be fetched")
    res = g.get("result") or {}
    eq("games.status", g.get("status"), "resolved")
    eq("games.game_id", g.get("game_id"), c.game_id)
    eq("games.replay (element for element)", g.get("replay"), c.resp.get("replay_steps"))
    notes = []
    for k in ("game_id", "game"):
        eq(f"result.{k}", res.get(k), bet.get(k))
    if bet.get("game") == "rng":
        eq("result.client_seed", res.get("client_seed"), bet.get("player_seed"))
        # P§20.2 lists result.player_seed ("as proof.bet.player_seed") for every game; the server
        # leaves it out of a raw RNG result (its seed is result.client_seed).  GUESS(G54).
        if "player_seed" in res:
            eq("result.player_seed", res.get("player_seed"), bet.get("player_seed"))
        else:
            notes.append("result.player_seed absent (raw RNG)")
        for k in ("player_id", "operator_key", "bet_type", "amount", "won", "payout", "outcome", "bet_id"):
            if k in res:
                bad.append(f"result.{k} present for raw RNG (P§20.2: bets only)")
    else:
        for k in ("bet_type", "amount", "target", "combo", "player_id", "operator_key", "player_seed"):
            if k not in res:
                bad.append(f"result.{k} absent")
            eq(f"result.{k}", res.get(k), bet.get(k))
        if "request_id" in res or "client_seed" in res or "random" in res:
            bad.append("result has raw-RNG members for a bet")
    eq("result.epoch", res.get("epoch"), None if c.pool else p.get("vdfEpoch"))
    if c.pool:
        eq("result.pool_served", res.get("pool_served"), True)
        eq("result.pool_index", res.get("pool_index"), p.get("pool_index"))
    elif "pool_served" in res or "pool_index" in res:
        bad.append("result.pool_served/pool_index on an epoch game (P§20.2: pool-served games only)")
    eq("result.verify_url", res.get("verify_url"), f"/api/v1/verify/{c.game_id}")
    eq("result.verify_page", res.get("verify_page"), f"/verify?game={c.game_id}")
    rp = res.get("proof")
    need(isinstance(rp, dict), "result.proof is not an object")
    for k in sorted(set(rp) | set(p)):
        if k in MOVING and not (k == "bet_epoch" and (rp.get(k) or {}).get("status") == (p.get(k) or {}).get("status")):
            continue
        if k not in rp or k not in p or not json_eq(rp[k], p[k]):
            bad.append(f"result.proof.{k} ≠ proof.{k}")
    need(not bad, "; ".join(bad[:4]) + (f" (+{len(bad) - 4} more)" if len(bad) > 4 else ""))
    if undoc:
        note = f"undocumented in P§20: {', '.join(sorted(set(undoc))[:6])}" + (" …" if len(set(undoc)) > 6 else "")
        need(not c.args.strict_members, note)
        notes.append(note)
    return "every member has P§20's type; the copies agree" + "".join(f"; note: {n}" for n in notes)


# ---------------------------------------------------------------------------------------------
# Running the steps for one game
# ---------------------------------------------------------------------------------------------

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


def run_steps(c: Ctx):
    results = []
    for name, fn in (POOL_STEPS if c.pool else EPOCH_STEPS):
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


# ---------------------------------------------------------------------------------------------
# --tamper: alter one field at a time in the fetched JSON and require a FAIL
# ---------------------------------------------------------------------------------------------


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Verify vrs games from the public API (documents-only implementation).")
    ap.add_argument("--server", required=True)
    ap.add_argument("--group", default="rsa2048", help="rsa2048 (default), test512, test1024, hex:<digits>, classgroup-<bits>")
    ap.add_argument("--min-margin", type=decimal.Decimal, default=None)
    ap.add_argument("--wait", type=float, default=30.0, help="seconds to wait for a pending game or bet epoch (default 30)")
    ap.add_argument("--tamper", action="store_true", help="self-test: alter one field at a time, require a FAIL")
    ap.add_argument("--strict-members", action="store_true", help="fail `members` on a member P§20 does not list")
    ap.add_argument("-v", "--verbose", action="store_true", help="with --tamper, print which step caught each alteration")
    ap.add_argument("game_ids", nargs="+", metavar="GAME_ID")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    t0 = time.time()
    try:
        group = make_group(args.group)
        failed = False
        for gid in args.game_ids:
            src = Source(args.server)
            if args.tamper:
                failed |= not run_tamper(gid, src, group, args)
            else:
                res = verify_game(gid, src, group, args)
                print_results(gid, res)
                failed |= any(s == "FAIL" for _, s, _ in res)
        print(f"{len(args.game_ids)} game(s), {'FAILED' if failed else 'all passed'}, {time.time() - t0:.1f} s")
        return 1 if failed else 0
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
