"""Ed25519, RFC 8032 §5.1.7, strictly (P§11 "Signed acceptance")."""

from __future__ import annotations

import hashlib


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
