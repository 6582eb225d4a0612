#!/usr/bin/env python3
"""Place games on a running vrs server and print their ids for vrs_docs_verify.py, one line
per game, exactly two fields: `KIND GAME_ID`.  Standard library only.

    make_games.py --server URL [--no-instant] [--all]

By default a few representative games of each kind (10, or 8 with --no-instant):
  dice/exact, dice/over7 (amount 1e2), sicbo/total, sicbo/combo (faces sent descending),
  sicbo/single, sicbo/big (with a target, which GAMES §5 says is ignored), rng (a seed),
  rng/noseed, and two instant bets (instant-dice/exact, instant-sicbo/combo).
--all places every bet type of both games on both paths (about 50 games).
--no-instant leaves out the instant bets (a class-group server has no pool, PROTOCOL §19).

KIND is `dice/<bet_type>`, `sicbo/<bet_type>`, `rng` or `rng/noseed`; an instant bet's KIND is
`instant-<game>/<bet_type>:pool` when the pool served it (200) and `...:epoch` when it fell back
to the epoch path (202, PROTOCOL §14 "Which path").  Epoch-path bets are sent in parallel so
that one epoch holds several leaves (non-trivial audit paths); instant bets one after the other,
once the pool has a committed batch (GET /api/v1/pool/batches/1, waited for up to 20 s).
Exit 0 when every game was accepted, 1 when one was refused (printed on stderr), 2 when the
server cannot be reached."""
import argparse
import json
import sys
import threading
import time
import urllib.error
import urllib.request

DICE_ALL = [{"bet_type": "exact", "target": t} for t in (2, 7, 12)] + [{"bet_type": b} for b in ("over7", "under7", "odd", "even")]
SICBO_ALL = ([{"bet_type": b} for b in ("big", "small", "odd", "even", "anyTriple")]
             + [{"bet_type": "total", "target": t} for t in (4, 10, 17)]
             + [{"bet_type": b, "target": t} for b in ("single", "double", "triple") for t in (1, 6)]
             + [{"bet_type": "combo", "combo": [5, 2]}])

# (kind, path, body): the default, representative set.
DEFAULT_EPOCH = [
    ("dice/exact", "/api/v1/games/dice/bet", {"bet_type": "exact", "target": 7, "amount": 2.5, "player_seed": "seed-é"}),
    ("dice/over7", "/api/v1/games/dice/bet", {"bet_type": "over7", "amount": 1e2}),
    ("sicbo/total", "/api/v1/games/sicbo/bet", {"bet_type": "total", "target": 10, "amount": 0.5, "player_id": "p1"}),
    ("sicbo/combo", "/api/v1/games/sicbo/bet", {"bet_type": "combo", "combo": [5, 2], "player_seed": "c"}),
    ("sicbo/single", "/api/v1/games/sicbo/bet", {"bet_type": "single", "target": 6, "amount": 10000}),
    ("sicbo/big", "/api/v1/games/sicbo/bet", {"bet_type": "big", "target": 7, "amount": 0.01}),
    ("rng", "/api/v1/rng/generate", {"client_seed": "raw-ħ"}),
    ("rng/noseed", "/api/v1/rng/generate", {}),
]
DEFAULT_INSTANT = [
    ("instant-dice/exact", "/api/v1/games/dice/bet", {"bet_type": "exact", "target": 2, "amount": 1.5, "player_seed": "i0", "instant": True}),
    ("instant-sicbo/combo", "/api/v1/games/sicbo/bet", {"bet_type": "combo", "combo": [6, 1], "amount": 2, "instant": True}),
]


def all_jobs():
    epoch, instant = [], []
    for i, b in enumerate(DICE_ALL):
        epoch.append(("dice/" + b["bet_type"], "/api/v1/games/dice/bet",
                      dict(b, amount=[1, 2.5, 1e2, 0.01, 10000][i % 5], player_seed=f"seed-{i}-é", instant=False)))
        instant.append(("instant-dice/" + b["bet_type"], "/api/v1/games/dice/bet", dict(b, amount=1.5, player_seed=f"i{i}", instant=True)))
    for i, b in enumerate(SICBO_ALL):
        epoch.append(("sicbo/" + b["bet_type"], "/api/v1/games/sicbo/bet",
                      dict(b, amount=[1, 3.25, 0.5][i % 3], player_id=f"p{i}", instant=False)))
        instant.append(("instant-sicbo/" + b["bet_type"], "/api/v1/games/sicbo/bet", dict(b, amount=2, instant=True)))
    epoch.append(("rng", "/api/v1/rng/generate", {"client_seed": "raw-ħ"}))
    epoch.append(("rng/noseed", "/api/v1/rng/generate", {}))
    return epoch, instant


def request(server, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(server + path, data=data, method="GET" if body is None else "POST",
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read() or b"{}")
        except ValueError:
            return e.code, {}


def wait_until(done, seconds):
    """Polls `done` until it holds or `seconds` pass (then the caller goes on regardless)."""
    deadline = time.time() + seconds
    while not done() and time.time() < deadline:
        time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser(description="Place vrs games; print `KIND GAME_ID` lines.")
    ap.add_argument("--server", required=True)
    ap.add_argument("--no-instant", action="store_true", help="no instant (pool) bets")
    ap.add_argument("--all", action="store_true", help="every bet type of both games on both paths")
    a = ap.parse_args()
    s = a.server.rstrip("/")
    epoch, instant = all_jobs() if a.all else (DEFAULT_EPOCH, DEFAULT_INSTANT)
    if a.no_instant:
        instant = []
    try:
        request(s, "/health")
    except (urllib.error.URLError, OSError) as e:
        print(f"# cannot reach {s}: {e}", file=sys.stderr)
        return 2
    out = [None] * len(epoch)

    def run(k):
        kind, path, body = epoch[k]
        out[k] = (kind, *request(s, path, body))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(epoch))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Wait for a committed pool batch, so that the instant bets can be pool-served; a class-group
    # server keeps no pool (PROTOCOL §19; its group is GET /'s vdf_engine.epoch.modulus, §20.8).
    group = ((request(s, "/")[1].get("vdf_engine") or {}).get("epoch") or {}).get("modulus") or ""
    pooled = not group.startswith("classgroup")

    def pool_has_entries():
        return ((request(s, "/api/v1/stats")[1].get("pool") or {}).get("depth") or 0) > 0

    for kind, path, body in instant:  # one after the other, each once the pool holds an entry
        if pooled:
            wait_until(pool_has_entries, 20)
        status, resp = request(s, path, body)
        out.append((kind + (":pool" if status == 200 and resp.get("pool_served") is True else ":epoch"), status, resp))
    failed = False
    for kind, status, body in out:
        if status not in (200, 202) or "game_id" not in body:
            print(f"# {kind}: HTTP {status} {body}", file=sys.stderr)
            failed = True
            continue
        print(f"{kind} {body['game_id']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
