"""`vrs_client.verify` and `vrs-verify` against a live server: games of every kind verify, and
every alteration of the published data, served through a tampering proxy, fails a step; plus
the committed RSA-2048 test vectors, offline."""

from __future__ import annotations

import copy
import decimal
import hashlib
import json
import pathlib
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from argparse import Namespace
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import Live, wait_until
from vrs_client import BetAccepted, Client, InstantBet
from vrs_client.protocol.encoding import StepFail
from vrs_client.protocol.evidence import Rpc
from vrs_client.protocol.groups import make_group
from vrs_client.protocol.source import Source
from vrs_client.protocol.games import bet_leaf_bytes
from vrs_client.protocol.run import verify_game
from vrs_client.protocol.tamper import tampers_for
from vrs_client.protocol.witnessed import UNCHECKED_NOTE
from vrs_client.verify import VerifyError, verify

REPO = pathlib.Path(__file__).resolve().parents[3]
KINDS = [
    ("dice", "exact", {"target": 7}), ("dice", "over7", {}), ("dice", "under7", {}),
    ("dice", "odd", {}), ("dice", "even", {}), ("sicbo", "big", {}), ("sicbo", "small", {}),
    ("sicbo", "odd", {}), ("sicbo", "even", {}), ("sicbo", "total", {"target": 10}),
    ("sicbo", "single", {"target": 3}), ("sicbo", "double", {"target": 2}),
    ("sicbo", "triple", {"target": 6}), ("sicbo", "anyTriple", {}), ("sicbo", "combo", {"combo": [1, 2]}),
]


@pytest.fixture(scope="module")
def games(live: Live) -> dict[str, tuple[str, dict]]:
    """Games of every kind, resolved: label -> (game id, the bet's response as the player saved it)."""
    out: dict[str, tuple[str, dict]] = {}
    with Client(live.url) as c:
        for game, bet_type, extra in KINDS:
            bet = c.bet(game, bet_type, player_seed="lucky", instant=False, **extra)
            assert isinstance(bet, BetAccepted)
            out[f"{game}/{bet_type}"] = (bet.game_id, bet.raw)
        for label, seed in (("rng", "seed"), ("rng/noseed", None)):
            r = c.rng(seed)
            out[label] = (r.game_id, r.raw)
        wait_until("the pool filled", lambda: (c.stats().pool.get("depth") or 0) >= 4)
        for game, bet_type in (("dice", "over7"), ("sicbo", "big")):
            bet = c.bet(game, bet_type, instant=True)
            assert isinstance(bet, InstantBet), bet
            out[f"instant {game}/{bet_type}"] = (bet.game_id, bet.raw)
        for game_id, _ in out.values():
            c.wait(game_id, timeout=60)
    return out


def test_games_of_every_kind_verify(live: Live, games) -> None:
    for label, (game_id, _) in games.items():
        report = verify(game_id, server=live.url, group="test512")
        assert report.verified, (label, [s for s in report.steps if s.status == "FAIL"])
        names = {s.name for s in report.steps}
        expected = {"pool_inclusion", "pool_game_id"} if label.startswith("instant") else {
            "epoch_chain", "epoch_input", "merkle_inclusion"}
        assert expected | {"bet_leaf", "vdf_proof", "rng_value", "acceptance"} <= names, label


def test_the_group_is_the_verifiers_choice(live: Live, games) -> None:
    game_id, _ = games["dice/over7"]
    report = verify(game_id, server=live.url, group="rsa2048")
    assert "group" in report.failed


def test_a_saved_acceptance_is_evidence(live: Live, games, tmp_path) -> None:
    for label in ("dice/exact", "instant sicbo/big"):
        game_id, saved = games[label]
        path = tmp_path / "bet.json"
        path.write_text(json.dumps(saved))
        report = verify(server=live.url, group="test512", acceptance=str(path))
        assert report.game_id == game_id and report.verified, report.steps
        assert {"acceptance_signature", "acceptance_stored", "acceptance_in_tree"} <= {
            s.name for s in report.steps if s.status == "ok"}, (label, report.steps)
    # A saved acceptance whose signature does not hold is no evidence.
    game_id, saved = games["dice/odd"]
    forged = copy.deepcopy(saved)
    sig = forged["acceptance"]["signature"]
    forged["acceptance"]["signature"] = sig[:-1] + ("0" if sig[-1] != "0" else "1")
    path.write_text(json.dumps(forged))
    report = verify(server=live.url, group="test512", acceptance=str(path))
    assert report.failed == ["acceptance_signature"], report.steps


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vrs_client.cli", *args], capture_output=True, text=True)


def test_the_command_line_checklist_and_exit_codes(live: Live, games, tmp_path) -> None:
    game_id, saved = games["sicbo/combo"]
    ok = _cli(game_id, "--server", live.url, "--group", "test512")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "verified" in ok.stdout and "vdf_proof" in ok.stdout
    as_json = _cli(game_id, "--server", live.url, "--group", "test512", "--json")
    report = json.loads(as_json.stdout)
    assert report["verified"] is True and report["game_id"] == game_id
    failed = _cli(game_id, "--server", live.url)  # the default group, rsa2048: not this server's
    assert failed.returncode == 1 and "FAILED: group" in failed.stdout
    unknown = _cli("0" * 32, "--server", live.url, "--group", "test512")
    assert unknown.returncode == 2 and "not found" in unknown.stderr
    unreachable = _cli(game_id, "--server", "http://127.0.0.1:9", "--group", "test512")
    assert unreachable.returncode == 2
    assert _cli("--help").returncode == 0
    with pytest.raises(VerifyError):
        verify("0" * 32, server=live.url, group="test512")


def _plain(v):
    """The fetched JSON back to plain types (the verifier reads numbers with a fraction as
    Decimal): equal by value, which is how P§13 compares numbers."""
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


class _TamperingProxy:
    """Serves a (tampered) copy of fetched responses over HTTP, and anything else from the live
    server: the verifier sees the alteration through its ordinary HTTP path."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.cache: dict = {}
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
                if self.path in proxy.cache:
                    status, data = proxy.cache[self.path]
                    body = json.dumps(_plain(data)).encode()
                else:
                    try:
                        with urllib.request.urlopen(proxy.upstream + self.path, timeout=30) as r:
                            status, body = r.status, r.read()
                    except urllib.error.HTTPError as e:
                        status, body = e.code, e.read()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture()
def proxy(live: Live) -> Iterator[_TamperingProxy]:
    p = _TamperingProxy(live.url)
    yield p
    p.close()


@pytest.mark.parametrize("label", ["dice/exact", "sicbo/combo", "rng", "instant dice/over7"])
def test_every_alteration_fails_a_step(live: Live, games, proxy: _TamperingProxy, label: str) -> None:
    """One alteration per checked field (bet, tree, chain, input, proof, timing, rngValue, dice,
    payout, acceptance, result hash, member types; for a pool game its batch, entry and bet
    epoch): each served through the proxy must fail at least one step."""
    game_id, _ = games[label]
    group = make_group("test512")
    recorder = Source(live.url)
    base = verify(game_id, server=live.url, group="test512")
    assert base.verified
    # What the verifier fetches, recorded once.
    for path in [f"/api/v1/verify/{game_id}", f"/api/v1/games/{game_id}", "/"]:
        recorder.get(path)
    verify_game(game_id, recorder, group, Namespace(min_margin=None, min_rate=None, wait=0, strict_members=False, verbose=False))
    # The proxy itself alters nothing: the untampered copy passes through it.
    proxy.cache = copy.deepcopy(recorder.cache)
    assert verify(game_id, server=proxy.url, group="test512", wait=0).verified
    missed = []
    alterations = tampers_for(game_id, recorder.cache, group)
    assert len(alterations) >= 10, label
    for what, alter in alterations:
        tampered = copy.deepcopy(recorder.cache)
        alter(tampered)
        proxy.cache = tampered
        report = verify(game_id, server=proxy.url, group="test512", wait=0)
        if report.verified:
            missed.append(what)
    assert not missed, f"{label}: not caught: {missed}"


def test_the_committed_vectors_verify_offline() -> None:
    vectors = json.loads((REPO / "docs/test-vectors/rsa2048.json").read_text())["vectors"]
    group = make_group("rsa2048")
    for v in vectors:
        x = group.input_from_seed(bytes.fromhex(v["seed"]))
        assert x.hex() == v["x"].lower()
        group.verify_vdf(v["x"], v["y"], v["pi"], v["l"], int(v["iterations"]), seed=bytes.fromhex(v["seed"]))
        # A proof of another y is refused.
        y = v["y"][:-1] + ("1" if v["y"][-1] != "1" else "2")
        with pytest.raises(StepFail):
            group.verify_vdf(v["x"], y, v["pi"], v["l"], int(v["iterations"]), seed=bytes.fromhex(v["seed"]))


def test_the_anchor_transaction_is_read_back_on_chain(anchored, proxy: _TamperingProxy) -> None:
    live, node = anchored
    with Client(live.url) as c:
        bet = c.bet("dice", "odd", player_seed="anchored", instant=False)
        c.wait(bet.game_id)
        wait_until(
            "the game's anchor batch confirmed",
            lambda: c.verification(bet.game_id).proof.get("anchor_status") == "confirmed",
            timeout=120,
        )
    report = verify(bet.game_id, server=live.url, group="test512", rpc=node)
    by_name = {s.name: s for s in report.steps}
    assert report.verified, report.steps
    assert by_name["anchor_inclusion"].status == "ok" and by_name["anchor_onchain"].status == "ok"
    # A server that names another chain, or a transaction that is not its batch's, fails there.
    proxy.upstream = live.url
    path = f"/api/v1/verify/{bet.game_id}"
    recorder = Source(live.url)
    recorder.get(path)
    # A root of the operator's choosing (the epoch's leaf alone as a batch) that another account
    # put on chain: the proof is consistent, only the transaction's sender betrays it (P§16).
    anchor = recorder.cache[path][1]["proof"]["anchor"]
    forged_root = hashlib.sha256(b"\x00" + bytes.fromhex(anchor["leaf"])).hexdigest()
    forged_tx = _send_from_another_account(node, "0x" + b"vrs-anchor-v1:".hex() + forged_root)

    def forge(p: dict) -> None:
        e = p["vdfEpoch"]
        p["anchorTx"] = p["legacyTx"] = p["anchor"]["tx"] = forged_tx
        p["anchor"].update(root=forged_root, calldata="0x" + b"vrs-anchor-v1:".hex() + forged_root, audit_path=[],
                           leaf_index=0, tree_size=1, epochs={"first": e, "last": e},
                           pool_batches={"from": anchor["pool_batches"]["from"], "to": anchor["pool_batches"]["from"]},
                           notary_batches={"from": anchor["notary_batches"]["from"],
                                           "to": anchor["notary_batches"]["from"]})

    for what, alter in [
        ("another chain id", lambda p: p.__setitem__("anchorChainId", p["anchorChainId"] + 1)),
        ("an unknown transaction", lambda p: (p.__setitem__("anchorTx", "0x" + "ab" * 32),
                                              p["anchor"].__setitem__("tx", "0x" + "ab" * 32))),
        ("a root another account put on chain", forge),
    ]:
        tampered = copy.deepcopy(recorder.cache)
        alter(tampered[path][1]["proof"])
        proxy.cache = tampered
        report = verify(bet.game_id, server=proxy.url, group="test512", rpc=node, wait=0)
        assert "anchor_onchain" in report.failed, (what, report.steps)
        if what.startswith("a root another account"):
            by_name = {s.name: s for s in report.steps}
            assert by_name["anchor_inclusion"].status == "ok", report.steps
            assert "not from the operator's anchor account" in by_name["anchor_onchain"].detail, report.steps


def _send_from_another_account(node: str, data: str) -> str:
    """Sends `data` from the node's second unlocked account (not the operator's) to itself and
    waits until it is mined; its hash."""
    rpc = Rpc(node)
    stranger = rpc.call("eth_accounts", [])[1]
    tx = rpc.call("eth_sendTransaction", [{"from": stranger, "to": stranger, "data": data, "value": "0x0"}])
    wait_until("the stranger's transaction mined", lambda: rpc.call("eth_getTransactionReceipt", [tx]) is not None,
               timeout=30)
    return tx


def test_class_group_games_verify() -> None:
    """A class-group server (no trusted setup): the discriminant of each epoch recomputed from
    its seed, the proof checked in its class group."""
    from conftest import _serve

    flags = ["--group", "classgroup-512", "--epoch-ms", "300", "--rate-limit", "0"]
    for live in _serve(flags):
        with Client(live.url) as c:
            bet = c.bet("sicbo", "total", target=11, instant=False)
            c.wait(bet.game_id, timeout=60)
        report = verify(bet.game_id, server=live.url, group="classgroup-512")
        assert report.verified, report.steps
        assert "class group" in next(s.detail for s in report.steps if s.name == "vdf_proof")
        assert "group" in verify(bet.game_id, server=live.url, group="test512").failed


def test_a_removed_or_altered_bet_fails_with_the_saved_acceptance(live: Live, games, proxy: _TamperingProxy, tmp_path) -> None:
    """The player's evidence: a server that drops the bet (404) or stores it altered fails
    acceptance_stored, with the signature still valid."""
    game_id, saved = games["dice/even"]
    path = tmp_path / "bet.json"
    path.write_text(json.dumps(saved))
    vpath = f"/api/v1/verify/{game_id}"
    recorder = Source(live.url)
    recorder.get(vpath)
    proxy.cache = {vpath: (404, {"verified": False, "error": "game not found", "game_id": game_id})}
    report = verify(server=proxy.url, group="test512", acceptance=str(path))
    by_name = {s.name: s.status for s in report.steps}
    assert by_name["acceptance_signature"] == "ok" and by_name["acceptance_stored"] == "FAIL", report.steps
    assert "removed" in next(s.detail for s in report.steps if s.name == "acceptance_stored")
    # Stored with another bet type: the leaf the server shows is not the one it signed.
    altered = copy.deepcopy(recorder.cache)
    proof = altered[vpath][1]["proof"]
    proof["leaf"] = proof["leaf"][:-2] + ("41" if proof["leaf"][-2:] != "41" else "42")
    proxy.cache = altered
    report = verify(server=proxy.url, group="test512", acceptance=str(path), wait=0)
    assert "acceptance_stored" in report.failed, report.steps
    out = _cli("--acceptance", str(path), "--server", proxy.url, "--group", "test512", "--wait", "0")
    assert out.returncode == 1 and "acceptance_stored" in out.stdout


def test_a_rate_floor_above_the_declared_rate_fails_timing(live: Live, games) -> None:
    # An understated rate stretches the window (P§10 "Whose numbers"): the verifier's floor
    # decides. At the epoch's own R it passes; one above, `timing` alone fails.
    game_id, _ = games["dice/even"]
    with urllib.request.urlopen(f"{live.url}/api/v1/verify/{game_id}") as r:
        rate = json.load(r)["proof"]["timing"]["squarings_per_second"]
    assert verify(game_id, server=live.url, group="test512", min_rate=rate).verified
    report = verify(game_id, server=live.url, group="test512", min_rate=str(rate + 1))
    assert report.failed == ["timing"], report.steps
    cli = _cli(game_id, "--server", live.url, "--group", "test512", "--min-rate", f"{rate + 1}")
    assert cli.returncode == 1 and "FAILED: timing" in cli.stdout, cli.stdout + cli.stderr
    for bad in ("0", "fast", "1.5", "-3", "nan"):
        with pytest.raises(VerifyError):
            verify(game_id, server=live.url, group="test512", min_rate=bad)


def test_witnessed_is_noted_without_a_policy_and_needs_the_log_with_one(live: Live, games, tmp_path) -> None:
    """P§21: this server keeps no log (no --log-origin). Without --witness-policy an epoch game's
    report notes what is trusted (a pool-served game's does not); with one, `witnessed` fails."""
    game_id, _ = games["dice/over7"]
    report = verify(game_id, server=live.url, group="test512")
    assert report.verified and report.notes == [UNCHECKED_NOTE]
    assert "witnessed" not in {s.name for s in report.steps}
    instant_id, _ = games["instant dice/over7"]
    assert verify(instant_id, server=live.url, group="test512").notes == []
    policy = tmp_path / "witnesses.policy"
    policy.write_text(json.loads((REPO / "docs/test-vectors/witnessed.json").read_text())["policy"])
    report = verify(game_id, server=live.url, group="test512", witness_policy=str(policy))
    by_name = {s.name: s for s in report.steps}
    assert report.failed == ["witnessed"] and report.notes == []
    assert "the server publishes no witnessed log for epoch" in by_name["witnessed"].detail
    as_json = json.loads(_cli(game_id, "--server", live.url, "--group", "test512", "--json").stdout)
    assert as_json["notes"] == [UNCHECKED_NOTE]
    human = _cli(game_id, "--server", live.url, "--group", "test512").stdout
    assert human.rstrip().endswith(f"note: {UNCHECKED_NOTE}")


def test_require_anchor_turns_a_pending_anchor_into_a_failure(live: Live, games) -> None:
    game_id, _ = games["dice/under7"]
    assert verify(game_id, server=live.url, group="test512").verified
    report = verify(game_id, server=live.url, group="test512", require_anchor=True)
    assert report.failed == ["anchor_inclusion"], report.steps
    bad = _cli("not-a-game-id", "--server", live.url)
    assert bad.returncode == 2


def test_a_proof_calling_its_bet_epoch_pending_does_not_excuse_a_missing_bet(live: Live, games, proxy: _TamperingProxy) -> None:
    """P§13: whether a served bet's epoch E is open is read from E's record, never from the
    proof's bet_epoch.status. A proof read while E was open (status pending, no copy of the
    binding) verifies once E has closed; a rewritten bet under such a proof fails
    pool_bet_inclusion, since E's published tree does not hold it."""
    game_id, _ = games["instant dice/over7"]
    vpath = f"/api/v1/verify/{game_id}"
    wait_until("the bet epoch resolved", lambda: not any(
        s.name == "pool_bet_inclusion" and s.status == "pend"
        for s in verify(game_id, server=live.url, group="test512").steps))
    src = Source(live.url)
    status, body = src.get(vpath)
    assert status == 200
    be = body["proof"]["bet_epoch"]
    lagging = copy.deepcopy(body)
    lagging["proof"]["bet_epoch"] = {"epoch": be["epoch"], "status": "pending"}
    proxy.cache = {vpath: (200, lagging)}
    report = verify(game_id, server=proxy.url, group="test512", wait=0)
    assert report.verified, report.steps
    assert [s.status for s in report.steps if s.name == "pool_bet_inclusion"] == ["ok"], report.steps
    rewritten = copy.deepcopy(lagging)
    rewritten["proof"]["bet"]["player_seed"] = "rewritten"
    rewritten["proof"]["leaf"] = bet_leaf_bytes(rewritten["proof"]["bet"]).hex()
    proxy.cache = {vpath: (200, rewritten)}
    report = verify(game_id, server=proxy.url, group="test512", wait=0)
    assert "pool_bet_inclusion" in report.failed, report.steps
    detail = [s.detail for s in report.steps if s.name == "pool_bet_inclusion"][0]
    assert "not in epoch" in detail, detail
