#!/usr/bin/env python3
"""Bet latency and effective margins of a running `vrs serve` (used by benches/margin.sh).

Places BETS dice bets, one every SPACING seconds, polls each GET /api/v1/games/{id} every 0.1 s
until it answers 200, and prints one JSON object: the latencies from each 202 to its first 200
(median, p95, max, in seconds), and, over the epochs resolved meanwhile, the effective margin
that each epoch's published times give (docs/PROTOCOL.md section 10, "Timing": the least, the
median) and the median time an epoch took bets.

usage: bet_latency.py URL [BETS [SPACING]]
"""

import json
import statistics
import sys
import threading
import time
import urllib.request

K = 100_000


def get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.status, json.load(r)


def post(url, body):
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, json.load(r)


def effective_margin(rec, pred):
    """The largest margin the epoch's published times keep (PROTOCOL section 10)."""
    t = rec["iterations"]
    r = rec["squarings_per_second"]
    window = rec["closed_at_ms"] - rec["opened_at_ms"]
    best = t * K / (window * r) if window > 0 else float("inf")
    if pred is not None:
        span = rec["closed_at_ms"] - pred["closed_at_ms"]
        if span > 0:
            best = max(best, (pred["iterations"] + t) * K / (span * r))
    return best / 100


def main():
    url = sys.argv[1].rstrip("/")
    bets = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    spacing = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    _, stats = get(f"{url}/api/v1/stats")
    first_epoch = stats["epoch"]["current"]
    latencies = []
    lock = threading.Lock()

    def one(i):
        _, r = post(f"{url}/api/v1/games/dice/bet", {"bet_type": "over7", "amount": 1, "player_seed": f"l{i}"})
        start = time.monotonic()
        while True:
            status, _ = get(f"{url}/api/v1/games/{r['game_id']}")
            if status == 200:
                break
            time.sleep(0.1)
        with lock:
            latencies.append(time.monotonic() - start)

    threads = []
    for i in range(bets):
        t = threading.Thread(target=one, args=(i,))
        t.start()
        threads.append(t)
        time.sleep(spacing)
    for t in threads:
        t.join()
    _, stats = get(f"{url}/api/v1/stats")
    last = stats["epoch"]["last_resolved"]
    recs = {}
    for n in range(max(1, first_epoch - 8), last + 1):
        _, recs[n] = get(f"{url}/api/v1/epochs/{n}")
    margins, windows = [], []
    for n in range(first_epoch, last + 1):
        rec = recs[n]
        windows.append(rec["closed_at_ms"] - rec["opened_at_ms"])
        if rec.get("version") == 2:
            p = rec["previous_epoch"]
            margins.append(effective_margin(rec, recs.get(p) if p >= 1 else None))
    security = stats["epoch"].get("security", {})
    latencies.sort()
    print(
        json.dumps(
            {
                "bets": len(latencies),
                "latency_p50_s": round(statistics.median(latencies), 2),
                "latency_p95_s": round(latencies[int(0.95 * (len(latencies) - 1))], 2),
                "latency_max_s": round(latencies[-1], 2),
                "epochs": len(margins),
                "window_p50_ms": statistics.median(windows),
                # Version-1 epochs (a server from before the timing rule) have none.
                "effective_margin_min": round(min(margins), 2) if margins else None,
                "effective_margin_p50": round(statistics.median(margins), 2) if margins else None,
                "vdf_threads": security.get("vdf_threads", 1),
                "squarings_per_second": security.get("squarings_per_second"),
            }
        )
    )


if __name__ == "__main__":
    main()
