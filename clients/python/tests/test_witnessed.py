"""The `witnessed` step (docs/PROTOCOL.md §21), offline: the shared vector
docs/test-vectors/witnessed.json (the Rust step's cases: pass exactly those marked passes),
C2SP's published key, note and cosignature examples, the policy's rules, strict entries, a
tampered audit path, the logged record against the proof's fields, and the verifier's flags and
notes. No server needed."""

from __future__ import annotations

import base64
import copy
import decimal
import json
import pathlib
import subprocess
import sys
from argparse import Namespace

import pytest

from vrs_client.cli import _print
from vrs_client.protocol.encoding import StepFail
from vrs_client.protocol.groups import make_group
from vrs_client.protocol.run import steps_for
from vrs_client.protocol.source import Source
from vrs_client.protocol.steps import Ctx, step_witnessed
from vrs_client.protocol.witnessed import (
    UNCHECKED_NOTE,
    CommitmentEntry,
    PlanEntry,
    Policy,
    VoidEntry,
    WitnessFloor,
    _verify_lines,
    check,
    check_proof,
    cosigned_message,
    decode_entry,
    default_max_rate,
    parse_note,
    parse_vkey,
    policy_notes,
    prove,
)
from vrs_client.verify import Report, Step, VerifyError, _notes, verify

REPO = pathlib.Path(__file__).resolve().parents[3]
VECTOR = json.loads((REPO / "docs/test-vectors/witnessed.json").read_text())
POLICY = Policy.parse(VECTOR["policy"])
S, DELTA = VECTOR["max_rate"], VECTOR["delta_ms"]
IN_TIME = next(c for c in VECTOR["cases"] if c["passes"])
FLOOR = WitnessFloor(POLICY, S, DELTA)


def _verdict(plan, commitment, policy=POLICY, previous_output=()) -> tuple[bool, str]:
    try:
        return True, check(plan, commitment, list(previous_output), policy, S, DELTA)
    except StepFail as e:
        return False, str(e)


def test_the_shared_vector_passes_exactly_the_cases_marked_passes() -> None:
    assert any(c["passes"] for c in VECTOR["cases"]) and any(not c["passes"] for c in VECTOR["cases"])
    for case in VECTOR["cases"]:
        if "proof" in case:
            # Rule 2 in full: the proof's record against the logged entries.
            proof = dict(case["proof"], log={"origin": "vrs.test/log", "plan": case["plan"],
                                             "commitment": case["commitment"],
                                             "previous_output": case["previous_output"]})
            proof["timing"] = dict(proof["timing"], security_margin=decimal.Decimal(str(proof["timing"]["security_margin"])))
            try:
                ok, detail = True, check_proof(proof, FLOOR)
            except StepFail as e:
                ok, detail = False, str(e)
            assert (ok, detail) == (case["passes"], case["detail"]), case["name"]
            continue
        ok, detail = _verdict(case["plan"], case["commitment"], previous_output=case["previous_output"])
        assert ok == case["passes"], (case["name"], detail, case["detail"])
        if ok:
            assert detail == case["detail"], case["name"]


def test_quorum_none_needs_no_cosignature_and_unknown_lines_are_ignored() -> None:
    log_line = VECTOR["policy"].splitlines()[0]
    ok, detail = _verdict(IN_TIME["plan"], IN_TIME["commitment"], Policy.parse(f"{log_line}\nquorum none\n"))
    assert ok, detail
    assert "quorum none" in detail


# --- C2SP's own examples ----------------------------------------------------------------------

def test_vkeys_parse_as_published_and_the_key_id_is_checked() -> None:
    v = parse_vkey("PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")
    assert (v.name, v.key_id, v.alg) == ("PeterNeumann", 0xC74F20A3, 0x01)
    w = parse_vkey("remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2")
    assert (w.alg, w.key_id) == (0x04, 0xDA77ADE7)
    # A '+' inside the base64 part: split on the first two only.
    assert parse_vkey("TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6").alg == 0x01
    for bad in ("TEST+7997405d+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6", "TEST", "TEST+7997405c",
                "+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6",
                "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10T"):  # base64 cut short
        with pytest.raises(StepFail):
            parse_vkey(bad)


def test_the_signed_note_example_verifies_and_an_altered_one_does_not() -> None:
    key = parse_vkey("example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k")
    note = ("This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlT"
            "gK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n")
    text, sigs = parse_note(note)
    assert text == b"This is an example message.\n"
    assert _verify_lines(text, sigs, {(key.name, key.key_id): key})
    text, sigs = parse_note(note.replace("example message", "example massage"))
    with pytest.raises(StepFail, match="invalid signature"):
        _verify_lines(text, sigs, {(key.name, key.key_id): key})


def test_the_cosignature_example_has_the_specs_layout_and_verifies() -> None:
    # note.rs's vector: Go's PeterNeumann key as a witness, cosigning at 1679315147.
    w = parse_vkey("witness.example/w1+cc9a7044+BBpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")
    text = b"example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    line = ("— witness.example/w1 zJpwRAAAAABkGFDLJeR//pqzhnEKVvEm2wWbh2RJ6oru5+cUUfm5X9NnlaGr8aSH9QE5RVZD4QGlxl2F"
            "5UpVIIi94p178KLfqPPsAA==\n")
    _, sigs = parse_note(text.decode() + "\n" + line)
    (name, kid, sig), = sigs
    assert (name, kid, int.from_bytes(sig[:8], "big")) == ("witness.example/w1", w.key_id, 1_679_315_147)
    assert _verify_lines(text, sigs, {(w.name, w.key_id): w})
    assert cosigned_message(text, 7).startswith(b"cosignature/v1\ntime 7\nexample.com/")


# --- The policy ---------------------------------------------------------------------------------

def test_the_policy_counts_groups_and_describes_its_quorum() -> None:
    keys = [line.split()[-1] for line in VECTOR["policy"].splitlines() if line.startswith("witness")]
    log = VECTOR["policy"].splitlines()[0].split()[1]
    text = (f"# comment\nlog {log} https://log.example/\nwitness X1 {keys[0]}\n\twitness X2 {keys[1]} https://x2/\n"
            f"group X any X1 X2\nwitness Y1 {keys[2]}\ngroup XY all X Y1\nquorum XY\n")
    p = Policy.parse(text)
    assert p.describe() == "2 of (1 of (X1, X2), Y1)"
    assert p.satisfied_by({"X2", "Y1"}) and not p.satisfied_by({"X1", "X2"})
    assert [w.name for w in p.witnesses] == ["X1", "X2", "Y1"] and p.witnesses[1].url == "https://x2/"
    assert POLICY.describe() == "2 of (W0, W1, W2)"
    assert Policy.parse("quorum none\n").describe() == "none (no cosignature required)"


@pytest.mark.parametrize("text, says", [
    ("witness a {w0}\n", "no quorum"),
    ("witness a {w0}\nquorum b\n", "line 2"),  # names refer only to lines above
    ("quorum g\nwitness a {w0}\ngroup g any a\n", "line 1"),
    ("witness a {w0}\ngroup g 1 a b\nwitness b {w1}\nquorum g\n", "not defined above"),
    ("witness a {w0}\nwitness b {w0}\nquorum a\n", "twice"),  # no key listed twice
    ("log {log}\nlog {log}\nquorum none\n", "twice"),
    ("witness a {w0}\nwitness a {w1}\nquorum a\n", "taken"),
    ("witness none {w0}\nquorum none\n", "taken"),
    ("witness a {w0}\ngroup g 1 a a\nquorum g\n", "listed twice"),
    ("witness a {w0}\ngroup g 2 a\nquorum g\n", "1..=1"),
    ("witness a {w0}\ngroup g 0 a\nquorum g\n", "1..=1"),
    ("witness a {w0}\ngroup g 01 a\nquorum g\n", "1..=1"),
    ("witness a {w0}\ngroup g a\nquorum g\n", "at least one member"),
    ("witness a {w0}\nquorum a\nquorum a\n", "exactly one"),  # exactly one quorum line
    ("witness a {w0}\nquorum a none\n", "one name"),
    ("quorum none\nfrobnicate\n", "unknown keyword"),
    ("log {w0}\nquorum none\n", "type 0x01"),
    ("witness a {log}\nquorum none\n", "type 0x04"),
    ("witness a {w0} https://a/ extra\nquorum none\n", "optional URL"),
    ("witness a {w0} # a comment after a line is not one\nquorum none\n", "optional URL"),
    ("witness a w0+00000000+BEOnLnFEAXYt9mtowm373yaCquyfJHTspGE+QkoPuv08\nquorum none\n", "key ID"),
])
def test_bad_policies_are_refused_with_their_line(text: str, says: str) -> None:
    lines = VECTOR["policy"].splitlines()
    keys = {"log": lines[0].split()[1], "w0": lines[1].split()[2], "w1": lines[2].split()[2]}
    with pytest.raises(StepFail, match=says):
        Policy.parse(text.format(**keys))


# --- Entries and proofs -------------------------------------------------------------------------

def _tagged(tag: str, body: bytes) -> bytes:
    return bytes([len(tag)]) + tag.encode() + body


def test_entries_decode_strictly() -> None:
    plan = decode_entry(bytes.fromhex(IN_TIME["plan"][0]["entry"]))
    assert isinstance(plan, PlanEntry) and (plan.epoch, plan.margin_centi) == (1, 150)
    commitment = decode_entry(bytes.fromhex(IN_TIME["commitment"][0]["entry"]))
    assert isinstance(commitment, CommitmentEntry) and commitment.nonce == b"\x01" * 32
    void = _tagged("vrs/log/void", (9).to_bytes(8, "big") + (5).to_bytes(8, "big"))
    assert decode_entry(void) == VoidEntry(9, 5)
    operator = _tagged("vrs/log/operator", bytes(8) + b"\x00\x07rsa2048" + bytes(32) + bytes(8) + bytes(20))
    assert decode_entry(operator).group == "rsa2048"
    pool = _tagged("vrs/log/pool-batch", bytes(8 * 3 + 32 + 8 + 32 + 32 + 8))
    assert decode_entry(pool).size == 0
    for bad, says in [(void + b"\x00", "1 bytes after the void entry"), (void[:-1], "short entry"),
                      (_tagged("vrs/log/vote", bytes(16)), "unknown tag"), (b"", "short entry"),
                      (operator[:-21], "short entry")]:
        with pytest.raises(StepFail, match=says):
            decode_entry(bad)


def test_a_tampered_inclusion_proof_fails() -> None:
    later = copy.deepcopy(IN_TIME["commitment"][1])  # entry 1 in a checkpoint of size 3: a path of two
    assert len(later["proof"]) == 2
    entry, cosigned = prove(later, POLICY)
    assert isinstance(entry, CommitmentEntry) and list(cosigned) == [("w1", POLICY.witnesses[1].key.key_id)]
    for what, alter, says in [
        ("another sibling", lambda e: e["proof"].__setitem__(0, base64.b64encode(b"\x07" * 32).decode()), "inclusion"),
        ("siblings swapped", lambda e: e["proof"].reverse(), "inclusion"),
        ("a path too long", lambda e: e["proof"].append(e["proof"][0]), "too long"),
        ("a path too short", lambda e: e["proof"].pop(), "too short"),
        ("another index", lambda e: e.__setitem__("index", 2), "inclusion"),
        ("an index beyond the tree", lambda e: e.__setitem__("index", 3), "not in a tree of 3"),
        ("a hash that is not base64", lambda e: e["proof"].__setitem__(0, "not base64!"), "base64"),
        ("a hash of 31 bytes", lambda e: e["proof"].__setitem__(0, base64.b64encode(bytes(31)).decode()), "32 bytes"),
    ]:
        tampered = copy.deepcopy(later)
        alter(tampered)
        with pytest.raises(StepFail, match=says):
            prove(tampered, POLICY)
    # In the step: the commitment's list fails as a whole.
    tampered = copy.deepcopy(later)
    tampered["proof"].reverse()
    ok, detail = _verdict(IN_TIME["plan"], [IN_TIME["commitment"][0], tampered])
    assert not ok and detail.startswith("the commitment: the inclusion proof of entry 1 in 3"), detail


def test_an_altered_checkpoint_or_entry_fails() -> None:
    for what, alter in [
        ("root", lambda e: e.__setitem__("checkpoint", e["checkpoint"].replace("\n2\n", "\n3\n", 1))),
        ("no log signature", lambda e: e.__setitem__("checkpoint", "\n".join(
            line for line in e["checkpoint"].split("\n") if not line.startswith("— vrs.test/log")))),
        ("entry bytes", lambda e: e.__setitem__("entry", e["entry"][:-2] + "00")),
        ("entry not hex", lambda e: e.__setitem__("entry", e["entry"][:-2] + "zz")),
        ("another origin", lambda e: e.__setitem__("checkpoint", "other.log" + e["checkpoint"][len("vrs.test/log"):])),
    ]:
        tampered = copy.deepcopy(IN_TIME["commitment"][0])
        alter(tampered)
        ok, detail = _verdict(IN_TIME["plan"], [tampered])
        assert not ok, (what, detail)


# --- Rule 3: the record judged is the logged one ------------------------------------------------

def _proof(case=IN_TIME) -> dict:
    """A verification's proof showing exactly the logged epoch, with its `log` (the vector's y of
    epoch p is u64(p), so previous_output is that for p ≥ 1)."""
    p = decode_entry(bytes.fromhex(case["plan"][0]["entry"]))
    c = decode_entry(bytes.fromhex(case["commitment"][0]["entry"]))
    return {
        "vdfEpoch": c.epoch, "bets_root": c.bets_root.hex(), "bet_count": c.bet_count, "iterations": c.iterations,
        "timing": {"version": 2, "previous_epoch": c.previous, "nonce": c.nonce.hex(),
                   "security_margin": decimal.Decimal(c.margin_centi) / 100,
                   "squarings_per_second": c.squarings_per_second, "opened_at_ms": c.opened_ms,
                   "closed_at_ms": c.closed_ms, "deadline_ms": p.deadline_ms},
        "previous_output": c.previous.to_bytes(8, "big").hex(),
        "log": {"origin": "vrs.test/log", "plan": case["plan"], "commitment": case["commitment"],
                "previous_output": case["previous_output"]},
    }


def test_the_proof_showing_the_logged_epoch_passes() -> None:
    assert check_proof(_proof(), FLOOR).startswith("epoch 1: plan (entry 0) and commitment (entry 1)")


@pytest.mark.parametrize("field, alter", [
    ("epoch", lambda p: p.__setitem__("vdfEpoch", 2)),
    ("previous_epoch", lambda p: p["timing"].__setitem__("previous_epoch", 1)),
    ("bets_root", lambda p: p.__setitem__("bets_root", "ab" * 32)),
    ("bet_count", lambda p: p.__setitem__("bet_count", 1)),
    ("nonce", lambda p: p["timing"].__setitem__("nonce", "02" * 32)),
    ("iterations", lambda p: p.__setitem__("iterations", 45_000_001)),
    ("security_margin", lambda p: p["timing"].__setitem__("security_margin", decimal.Decimal("1.51"))),
    ("squarings_per_second", lambda p: p["timing"].__setitem__("squarings_per_second", 999_999)),
    ("opened_at_ms", lambda p: p["timing"].__setitem__("opened_at_ms", p["timing"]["opened_at_ms"] - 1)),
    ("closed_at_ms", lambda p: p["timing"].__setitem__("closed_at_ms", p["timing"]["closed_at_ms"] + 1)),
    ("deadline_ms", lambda p: p["timing"].__setitem__("deadline_ms", p["timing"]["deadline_ms"] + 1)),
])
def test_a_proof_field_differing_from_the_logged_commitment_fails_naming_it(field, alter) -> None:
    proof = _proof()
    alter(proof)
    with pytest.raises(StepFail, match=field) as e:
        check_proof(proof, FLOOR)
    # The epoch is compared with the log's own first; every other field as "shown ≠ logged".
    assert "the log's entries are epoch 1's" in str(e.value) if field == "epoch" else "not the one logged" in str(e.value)


def test_a_previous_output_other_than_the_logged_one_fails() -> None:
    case = next(c for c in VECTOR["cases"] if c["name"] == "the previous output logged with the commitment")
    assert check_proof(_proof(case), FLOOR).startswith(
        "epoch 2: plan (entry 0), commitment (entry 1) and output of epoch 1 (entry 2)")
    # y_1′ served to one client, every other field as logged.
    proof = _proof(case)
    proof["previous_output"] = "ff" * 8
    with pytest.raises(StepFail, match="previous_output hashes to"):
        check_proof(proof, FLOOR)
    # The log without p's output: nothing fixed y_1.
    proof = _proof(case)
    del proof["log"]["previous_output"]
    with pytest.raises(StepFail, match="no cosigned checkpoint holds the output of epoch 1"):
        check_proof(proof, FLOOR)


def test_no_log_a_version_1_epoch_or_a_failing_log_fail_witnessed() -> None:
    proof = _proof()
    del proof["log"]
    with pytest.raises(StepFail, match="the server publishes no witnessed log for epoch 1"):
        check_proof(proof, FLOOR)
    proof["timing"]["version"] = 1
    with pytest.raises(StepFail, match="version 1"):
        check_proof(proof, FLOOR)
    proof = _proof()
    proof["log"]["plan"] = "nope"
    with pytest.raises(StepFail, match="log member is malformed"):
        check_proof(proof, FLOOR)
    withheld = next(c for c in VECTOR["cases"] if c["name"].startswith("withheld"))
    with pytest.raises(StepFail, match="short of the quorum"):
        check_proof(_proof(withheld), FLOOR)


# --- In the verifier ----------------------------------------------------------------------------

def _ctx(proof: dict, witness) -> Ctx:
    args = Namespace(min_margin=None, min_rate=None, wait=0, strict_members=False, verbose=False, witness=witness)
    return Ctx("0" * 32, Source(None), make_group("test512"), args, {"proof": proof})


def test_epoch_games_get_witnessed_after_timing_only_with_a_policy() -> None:
    names = [n for n, _ in steps_for(_ctx(_proof(), FLOOR))]
    assert names[names.index("timing") + 1] == "witnessed"
    assert "witnessed" not in [n for n, _ in steps_for(_ctx(_proof(), None))]
    assert "witnessed" not in [n for n, _ in steps_for(_ctx({**_proof(), "pool_served": True}, FLOOR))]
    assert step_witnessed(_ctx(_proof(), FLOOR)).startswith("epoch 1:")


def test_the_note_without_a_policy_is_in_the_report() -> None:
    path = "/api/v1/verify/" + "0" * 32
    src = Source(None, {path: (200, {"proof": _proof()})})
    assert _notes(src, "0" * 32, None) == [UNCHECKED_NOTE]
    assert _notes(src, "0" * 32, FLOOR) == []
    pool = Source(None, {path: (200, {"proof": {"pool_served": True}})})
    assert _notes(pool, "0" * 32, None) == []
    assert _notes(Source(None, {path: (202, {"status": "pending"})}), "0" * 32, None) == []
    assert UNCHECKED_NOTE == (
        "witnessed: not checked (no --witness-policy): the operator is trusted not to withhold an epoch's "
        "commitment, stage a stall or backdate its times (docs/PROTOCOL.md §21)")
    report = Report("0" * 32, [Step("group", "ok", "test512")], [UNCHECKED_NOTE])
    assert json.loads(report.to_json())["notes"] == [UNCHECKED_NOTE]
    assert json.loads(Report("0" * 32, []).to_json())["notes"] == []


def test_the_note_is_printed_after_the_checklist(capsys) -> None:
    _print(Report("0" * 32, [Step("timing", "ok", "fine")], [UNCHECKED_NOTE]))
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ["verified", f"note: {UNCHECKED_NOTE}"]


def test_the_flags_are_the_verifiers_and_checked_before_any_request(tmp_path) -> None:
    assert default_max_rate("rsa2048") == 9_000_000 and default_max_rate("test512") == 9_000_000
    assert default_max_rate("hex:c5") == 9_000_000 and default_max_rate("classgroup-1024") == 1_000_000
    no_log = tmp_path / "no-log.policy"
    no_log.write_text("quorum none\n")
    bad = tmp_path / "bad.policy"
    bad.write_text("quorum nobody\n")
    unreachable = "http://127.0.0.1:9"
    for kwargs, says in [({"witness_policy": str(tmp_path / "missing")}, "--witness-policy"),
                         ({"witness_policy": str(no_log)}, "names no log"),
                         ({"witness_policy": str(bad)}, "policy line 1"),
                         ({"max_rate": "fast"}, "--max-rate"), ({"max_rate": 0}, "--max-rate"),
                         ({"delta_ms": "-1"}, "--delta-ms"), ({"delta_ms": "2e3"}, "--delta-ms")]:
        with pytest.raises(VerifyError, match=says):
            verify("0" * 32, server=unreachable, group="test512", **kwargs)
    policy = tmp_path / "ok.policy"
    policy.write_text(VECTOR["policy"])
    for flags in (["--witness-policy", str(policy), "--max-rate", "9e6", "--delta-ms", "1000"],
                  ["--max-rate", "9000000"]):
        # Flags accepted: the run gets as far as the (unreachable) server, exit 2 with a network error.
        run = subprocess.run([sys.executable, "-m", "vrs_client.cli", "0" * 32, "--server", unreachable, *flags],
                             capture_output=True, text=True)
        assert run.returncode == 2 and "witness-policy" not in run.stderr and "max-rate" not in run.stderr, run.stderr
    run = subprocess.run([sys.executable, "-m", "vrs_client.cli", "0" * 32, "--server", unreachable,
                          "--max-rate", "9.5"], capture_output=True, text=True)
    assert run.returncode == 2 and "--max-rate" in run.stderr


def test_a_quorum_two_disjoint_sets_meet_is_noted() -> None:
    lines = [ln for ln in VECTOR["policy"].splitlines() if ln.startswith(("log ", "witness "))]
    assert policy_notes(FLOOR) == []  # 2 of 3: any two sets share a witness
    anyone = Policy.parse("\n".join(lines + ["group g any W0 W1 W2", "quorum g"]) + "\n")
    assert anyone.disjoint_quorums() == (["W0"], ["W1", "W2"])
    assert policy_notes(WitnessFloor(anyone, S, DELTA)) == [
        "witnessed: the policy's quorum is met by two disjoint sets of witnesses ([W0] and [W1, W2]): two "
        "histories of the log, each cosigned by one set, both pass; a quorum whose every two sets share a "
        "witness (a majority) excludes that (docs/PROTOCOL.md §21)"]
    assert Policy.parse("\n".join(lines + ["quorum none"]) + "\n").disjoint_quorums() is None
