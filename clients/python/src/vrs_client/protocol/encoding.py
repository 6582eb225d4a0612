"""Byte encodings, tagged hashes and the exceptions a step raises (P, "Conventions")."""

from __future__ import annotations

import hashlib
import re


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
