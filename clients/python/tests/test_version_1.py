"""Version-1 epochs (docs/PROTOCOL.md §10, "Version 1") make no timing commitment: `timing` refuses
them unless the verifier allows them (--allow-version-1), in the Rust verifier's words. No server."""

from __future__ import annotations

from argparse import Namespace

import pytest

from vrs_client.cli import _parser
from vrs_client.protocol.encoding import StepFail
from vrs_client.protocol.steps import VERSION_1_REFUSED, step_timing


class _Src:
    def epoch(self, n):
        return {"version": 1}


class _Ctx:
    def __init__(self, **args):
        self.proof = {"vdfEpoch": 5, "timing": {"version": 1}}
        self.src = _Src()
        self.args = Namespace(min_margin=None, min_rate=None, **args)


def test_a_version_1_epoch_fails_timing_unless_allowed() -> None:
    with pytest.raises(StepFail) as e:
        step_timing(_Ctx())
    assert str(e.value) == VERSION_1_REFUSED
    assert step_timing(_Ctx(allow_version_1=True)) == "version 1: no timing commitment"


def test_the_cli_flag() -> None:
    assert _parser().parse_args(["0" * 32, "--server", "http://x"]).allow_version_1 is False
    assert _parser().parse_args(["0" * 32, "--server", "http://x", "--allow-version-1"]).allow_version_1 is True
