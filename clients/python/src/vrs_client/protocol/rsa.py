"""The RSA group Z_N^* / {±1}: hash to group, hash to prime, Wesolowski (P§1, §3-§7, appendix A)."""

from __future__ import annotations

from .encoding import StepFail, as_int, h_tag, need, sha256, u16, u32, u64, u8, unhex
from .primes import is_probable_prime


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
