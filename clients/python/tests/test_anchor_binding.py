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
from vrs_client.protocol.witnessed import Policy, decode_entry, expected_anchor_calldata

REPO = pathlib.Path(__file__).resolve().parents[3]
VECTOR = json.loads((REPO / "docs/test-vectors/anchor-binding.json").read_text())
POLICY = Policy.parse(VECTOR["policy"])


def _verdict(case) -> tuple[bool, str, str | None]:
    policy = POLICY if case["with_policy"] else None
    try:
        calldata, detail = expected_anchor_calldata(case["batch"], bytes.fromhex(case["root"]), case["log"], policy)
        return True, detail, "0x" + calldata.hex()
    except StepFail as e:
        return False, str(e), None


def test_the_shared_vector_passes_exactly_the_cases_marked_passes_in_the_rust_words() -> None:
    cases = VECTOR["cases"]
    assert any(c["passes"] for c in cases) and any(not c["passes"] for c in cases)
    for case in cases:
        assert _verdict(case) == (case["passes"], case["detail"], case["calldata"]), case["name"]


def test_version_2_calldata_has_its_documented_bytes() -> None:
    case = next(c for c in VECTOR["cases"] if c["passes"] and c["log"] is not None)
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
    with pytest.raises(StepFail, match="^anchor.log: "):
        expected_anchor_calldata(case["batch"], bytes.fromhex(case["root"]), log, POLICY)


def test_quorum_none_requires_no_cosignature() -> None:
    none = Policy.parse(VECTOR["policy"].replace("quorum all3", "quorum none"))
    case = next(c for c in VECTOR["cases"] if c["passes"] and c["with_policy"])
    log = dict(case["log"], cosigned=[])
    calldata, detail = expected_anchor_calldata(case["batch"], bytes.fromhex(case["root"]), log, none)
    assert "0x" + calldata.hex() == case["calldata"] and detail.endswith("cosigned by [])")
