"""The witnessed log's entries (docs/PROTOCOL.md §21, "Entries"), offline: the shared vector
docs/test-vectors/log-entries.json (written by the Rust reference) gives one entry of each kind,
its bytes and its fields; the decoder must give exactly those fields and refuse the bytes with
one byte more or one less."""

from __future__ import annotations

import dataclasses
import json
import pathlib

import pytest

from vrs_client.protocol.encoding import StepFail
from vrs_client.protocol.witnessed import ENTRY_LAYOUTS, KIND_OF, decode_entry

REPO = pathlib.Path(__file__).resolve().parents[3]
VECTOR = json.loads((REPO / "docs/test-vectors/log-entries.json").read_text())


def _fields(entry) -> dict:
    return {k: v.hex() if isinstance(v, bytes) else v for k, v in dataclasses.asdict(entry).items()}


def test_every_kind_is_in_the_vector():
    kinds = {c["kind"] for c in VECTOR["entries"]}
    assert kinds == {tag.removeprefix("vrs/log/") for tag in ENTRY_LAYOUTS}


@pytest.mark.parametrize("case", VECTOR["entries"], ids=lambda c: c["kind"])
def test_each_entry_decodes_to_its_fields_and_nothing_else_does(case):
    raw = bytes.fromhex(case["hex"])
    entry = decode_entry(raw)
    assert KIND_OF[type(entry)] == case["kind"]
    assert _fields(entry) == case["fields"]
    for bad in (raw + b"\0", raw[:-1]):
        with pytest.raises(StepFail, match="not a log entry"):
            decode_entry(bad)
