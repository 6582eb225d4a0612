"""The verifier's group, from its name (P§13: the group is the verifier's choice)."""

from __future__ import annotations

import re

from .encoding import HEX_RE, UsageError
from .rsa import RSA2048_HEX, RsaGroup, TEST1024_HEX, TEST512_HEX
from .classgroup import ClassGroupVdf

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
