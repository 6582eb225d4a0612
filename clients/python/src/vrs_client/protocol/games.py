"""Bet leaves (P§11), rngValue, dice and payouts (P§12, G§1-§4)."""

from __future__ import annotations

import hashlib
import hmac
import re

from .encoding import StepFail, as_int, need, u16, u32, u8


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
