"""A live `vrs serve` for the tests: the binary at $VRS_BIN (the Rust test that runs this suite
sets it; by hand: cargo build -p vrs, then VRS_BIN=$CARGO_TARGET_DIR/debug/vrs pytest), on the
embedded store in a temporary directory, with the fast test settings (test512, 300 ms epochs,
a small pool so that instant bets are served), and a notary API key made with `vrs keys`."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

FAST = [
    "--modulus", "test512", "--epoch-ms", "300", "--rate-limit", "0",
    "--pool-iterations", "64", "--pool-batch", "8", "--pool-depth", "16", "--pool-low-water", "8",
]


@dataclass
class Live:
    url: str
    api_key: str
    data_dir: str


def _binary() -> str:
    path = os.environ.get("VRS_BIN")
    if not path or not os.path.exists(path):
        pytest.exit("set VRS_BIN to a built vrs binary (cargo build -p vrs)", returncode=2)
    return path


@pytest.fixture(scope="session")
def live() -> Iterator[Live]:
    yield from _serve(FAST)


@pytest.fixture(scope="session")
def anchored() -> Iterator[tuple[Live, str]]:
    """A server that anchors every 2 epochs on the EVM node at $GANACHE_URL (with the key in
    $VRS_ANCHOR_PRIVATE_KEY), and that node's URL. The Rust test that runs this suite starts a
    ganache; run by hand without one, the anchoring tests are skipped."""
    node = os.environ.get("GANACHE_URL")
    if not node or not os.environ.get("VRS_ANCHOR_PRIVATE_KEY"):
        pytest.skip("no EVM node: set GANACHE_URL and VRS_ANCHOR_PRIVATE_KEY (the Rust test does)")
    for live in _serve([*FAST, "--anchor-rpc-url", node, "--anchor-every", "2"]):
        yield live, node


def _serve(flags: list[str]) -> Iterator[Live]:
    vrs = _binary()
    with tempfile.TemporaryDirectory() as data_dir:
        proc = subprocess.Popen(
            [vrs, "serve", "--data-dir", data_dir, "--addr", "127.0.0.1:0", *flags],
            stdout=subprocess.PIPE,
            text=True,
            env={**{k: v for k, v in os.environ.items() if k != "DATABASE_URL"}, "RUST_LOG": "warn"},
        )
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:
            if line.startswith("vrs listening on "):
                url = line.removeprefix("vrs listening on ").strip()
                break
        if url is None:
            proc.kill()
            pytest.exit("vrs serve exited before printing its URL", returncode=2)
        # Keep draining stdout so that the server never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
        made = subprocess.run(
            [vrs, "keys", "create", "--name", "pytest", "--json", "--data-dir", data_dir],
            capture_output=True, text=True, check=True,
        )
        try:
            yield Live(url=url, api_key=json.loads(made.stdout)["key"], data_dir=data_dir)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def wait_until(what: str, cond, timeout: float = 30.0):
    """Polls `cond` until it returns something truthy (with a deadline, not a sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: still not true after {timeout} s")
        time.sleep(0.05)
