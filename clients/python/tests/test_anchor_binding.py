"""An anchor batch's binding to the witnessed log (docs/PROTOCOL.md §16, "Binding"), offline: the
shared vector docs/test-vectors/anchor-binding.json (written by the Rust reference) gives each
case's batch, root and `anchor.log`; the verifier must pass exactly the cases marked passes, with
the same calldata and the same words. No server needed."""

from __future__ import annotations

import copy
import json
import pathlib

import pytest

from vrs_client.protocol.encoding import StepFail
from vrs_client.protocol.witnessed import AnchorEntry, Policy, decode_entry, expected_anchor_calldata

REPO = pathlib.Path(__file__).resolve().parents[3]
VECTOR = json.loads((REPO / "docs/test-vectors/anchor-binding.json").read_text())
POLICY = Policy.parse(VECTOR["policy"])


def _claim(case) -> AnchorEntry:
    """The anchor batch the case's proof claims, from its anchor members."""
    e, p, n = case["epochs"], case["pool_batches"], case["notary_batches"]
    return AnchorEntry(case["batch"], e["first"], e["last"], p["from"], p["to"], n["from"], n["to"],
                       bytes.fromhex(case["root"]))


def _verdict(case, log=None, policy=None) -> tuple[bool, str, str | None]:
    policy = policy if policy is not None else POLICY if case["with_policy"] else None
    log = case["log"] if log is None else log
    try:
        calldata, detail = expected_anchor_calldata(_claim(case), case["shown_version"] == 1, log, policy)
        return True, detail, "0x" + calldata.hex()
    except StepFail as e:
        return False, str(e), None


def test_the_shared_vector_passes_exactly_the_cases_marked_passes_in_the_rust_words() -> None:
    cases = VECTOR["cases"]
    assert any(c["passes"] for c in cases) and any(not c["passes"] for c in cases)
    for case in cases:
        assert _verdict(case) == (case["passes"], case["detail"], case["calldata"]), case["name"]


def test_version_2_calldata_has_its_documented_bytes() -> None:
    case = next(c for c in VECTOR["cases"] if c["passes"] and c["shown_version"] == 2)
    data = bytes.fromhex(case["calldata"][2:])
    entry = decode_entry(bytes.fromhex(case["log"]["bound"]["entry"]))
    assert len(data) == 94 and data[:14] == b"vrs-anchor-v2:"
    assert int.from_bytes(data[14:22], "big") == case["batch"] == entry.batch
    assert int.from_bytes(data[22:30], "big") == case["log"]["bound"]["index"] + 1
    assert data[62:] == bytes.fromhex(case["root"]) == entry.root


@pytest.mark.parametrize("where", ["entry", "proof", "checkpoint"])
def test_a_tampered_bound_entry_fails_under_the_policy(where: str) -> None:
    case = next(c for c in VECTOR["cases"] if c["passes"] and c["with_policy"])
    log = copy.deepcopy(case["log"])
    b = log["bound"]
    if where == "entry":
        b["entry"] = b["entry"][:-2] + ("00" if b["entry"][-2:] != "00" else "01")
    elif where == "proof":
        b["proof"] = b["proof"][1:]
    else:
        b["checkpoint"] = b["checkpoint"].replace("\n\n", "\nextra\n\n", 1)
    ok, detail, _ = _verdict(case, log=log)
    assert not ok and detail.startswith("anchor.log: "), detail


def test_quorum_none_requires_no_cosignature() -> None:
    none = Policy.parse(VECTOR["policy"].replace("quorum all3", "quorum none"))
    case = next(c for c in VECTOR["cases"] if c["passes"] and c["with_policy"])
    ok, detail, calldata = _verdict(case, log=dict(case["log"], cosigned=[]), policy=none)
    assert ok and calldata == case["calldata"] and detail.endswith("cosigned by [])"), detail


def test_an_entry_with_white_space_in_its_hex_is_not_hex() -> None:
    # bytes.fromhex would take "ab cd"; the Rust and TypeScript verifiers refuse it, and so does
    # this one, without a policy too.
    case = next(c for c in VECTOR["cases"] if c["passes"] and not c["with_policy"])
    log = copy.deepcopy(case["log"])
    log["bound"]["entry"] = log["bound"]["entry"][:2] + " " + log["bound"]["entry"][2:]
    ok, detail, _ = _verdict(case, log=log)
    assert not ok and "the anchor entry is not hex" in detail, detail
