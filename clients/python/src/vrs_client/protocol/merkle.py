"""RFC 6962 trees (P§11) and the RFC 9162 §2.1.3.2 audit-path fold (P§16 step 5)."""

from __future__ import annotations

from .encoding import need, sha256, unhex


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
