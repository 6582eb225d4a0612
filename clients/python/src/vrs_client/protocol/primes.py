"""Baillie-PSW, exactly as P§5 states it."""

from __future__ import annotations

import math


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
