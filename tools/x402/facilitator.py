#!/usr/bin/env python3
"""A small x402 facilitator over HTTP, built from the official x402 Python package (PyPI
`x402`, pinned in requirements.txt): its `x402FacilitatorSync` with the EVM `exact` scheme's
facilitator side for x402 v2 and v1 (`ExactEvmFacilitatorScheme`, `ExactEvmSchemeV1`) and its
web3.py signer (`FacilitatorWeb3Signer`), which settles by sending EIP-3009
`transferWithAuthorization` from the given key to the given node. For the notary's
facilitator test (vrs/tests/integration/x402_facilitator.rs) and for trying a test network by
hand; nothing here is specific to vrs.

    facilitator.py --rpc URL --key HEXKEY [--host 127.0.0.1] [--port 0]
                   [--network eip155:8453 ...] [--network-v1 base ...]
                   [--confirmation-timeout 25]

Endpoints (the x402 facilitator wire format, JSON in camelCase):

  POST /verify   {x402Version, paymentPayload, paymentRequirements} -> VerifyResponse
                 {isValid, invalidReason?, invalidMessage?, payer?}
  POST /settle   the same request -> SettleResponse
                 {success, errorReason?, errorMessage?, payer?, transaction, network}
  GET  /supported  {kinds: [{x402Version, scheme, network}], extensions, signers}

The protocol version is the payment payload's `x402Version` (v2: `accepted.network` is a
CAIP-2 id such as eip155:8453; v1: `network` is a legacy name such as "base"); a top-level
`x402Version` that contradicts it is refused. A payment that verifies or settles, or fails to,
is answered 200 (isValid / success says which), as the official HTTP facilitator client
expects; a request that is not one is answered 400, a scheme or network this facilitator does
not serve 400 with isValid / success false, and an unexpected error (the node is down) 500,
each with the reason in the body.

Networks: by default the node's own chain, eip155:<its chain id> for v2 and every v1 name the
package maps to that chain id (8453: "base"). Every network asked for must be the node's chain:
an authorization signed for another chain would otherwise be sent to this node. (The package
routes v2 requests by the "eip155:*" family; this server refuses networks it did not
register before the package sees them.)

Prints ONE JSON line on stdout once listening: {"url": "http://HOST:PORT", "address":
facilitator account, "chainId", "networks": {"v2": [...], "v1": [...]}}; then one line per
request on stderr. --port 0 picks a free port. Runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import ValidationError

from x402 import x402FacilitatorSync
from x402.mechanisms.evm import V1_NETWORK_CHAIN_IDS, FacilitatorWeb3Signer
from x402.mechanisms.evm.exact import ExactEvmFacilitatorScheme, ExactEvmSchemeConfig
from x402.mechanisms.evm.exact.v1.facilitator import ExactEvmSchemeV1, ExactEvmSchemeV1Config
from x402.schemas import SchemeNotFoundError
from x402.schemas.helpers import detect_version, parse_payment_payload, parse_payment_requirements

MAX_BODY = 64 * 1024


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description="An x402 facilitator (official x402 package).")
    p.add_argument("--rpc", required=True, help="JSON-RPC URL of the EVM node to settle on")
    p.add_argument("--key", required=True, help="facilitator private key, hex (0x optional)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0: pick a free port")
    p.add_argument(
        "--network",
        action="append",
        help="x402 v2 network (CAIP-2) to serve; repeatable (default: eip155:<node chain id>)",
    )
    p.add_argument(
        "--network-v1",
        action="append",
        help="x402 v1 network name to serve; repeatable (default: the names of the node's chain)",
    )
    p.add_argument(
        "--confirmation-timeout",
        type=float,
        default=25.0,
        help="seconds /settle waits for the transaction to be mined before answering "
        "settlement_pending (keep it below the resource server's timeout; vrs waits 30 s)",
    )
    return p.parse_args()


class BadRequest(Exception):
    """The request is not a facilitator request (answered 400)."""


class Facilitator:
    """The official facilitator with the networks it was registered for."""

    def __init__(self, a: argparse.Namespace) -> None:
        key = a.key if a.key.startswith("0x") else "0x" + a.key
        self.signer = FacilitatorWeb3Signer(
            private_key=key,
            rpc_url=a.rpc,
            confirmation_timeout_seconds=a.confirmation_timeout,
        )
        self.chain_id = self.signer.get_chain_id()
        self.v2 = a.network or [f"eip155:{self.chain_id}"]
        self.v1 = a.network_v1 or sorted(
            n for n, cid in V1_NETWORK_CHAIN_IDS.items() if cid == self.chain_id
        )
        for n in self.v2:
            if n != f"eip155:{self.chain_id}":
                raise SystemExit(
                    f"facilitator.py: --network {n} is not the node's chain "
                    f"(eip155:{self.chain_id})"
                )
        for n in self.v1:
            if V1_NETWORK_CHAIN_IDS.get(n) != self.chain_id:
                raise SystemExit(
                    f"facilitator.py: --network-v1 {n} is chain {V1_NETWORK_CHAIN_IDS.get(n)}, "
                    f"not the node's chain {self.chain_id}"
                )
        # The package's defaults but for simulate_in_settle: /settle simulates the transfer
        # again before sending it, so that a payment that would revert (no funds, a used
        # authorization) costs no gas even when /settle is called without /verify.
        self.inner = x402FacilitatorSync()
        if self.v2:
            config = ExactEvmSchemeConfig(simulate_in_settle=True)
            self.inner.register(self.v2, ExactEvmFacilitatorScheme(self.signer, config))
        if self.v1:
            config_v1 = ExactEvmSchemeV1Config(simulate_in_settle=True)
            self.inner.register_v1(self.v1, ExactEvmSchemeV1(self.signer, config_v1))

    def parse(self, body: bytes) -> tuple[int, Any, Any]:
        """The request's version, payment payload and requirements (models of that version)."""
        try:
            req = json.loads(body)
        except ValueError as e:
            raise BadRequest(f"the body is not JSON: {e}") from e
        if not isinstance(req, dict):
            raise BadRequest("the body is not a JSON object")
        payload, requirements = req.get("paymentPayload"), req.get("paymentRequirements")
        if not isinstance(payload, dict) or not isinstance(requirements, dict):
            raise BadRequest("paymentPayload and paymentRequirements must be JSON objects")
        try:
            version = detect_version(payload)
        except ValueError as e:
            raise BadRequest(f"paymentPayload: {e}") from e
        top = req.get("x402Version")
        if top is not None and top != version:
            raise BadRequest(
                f"x402Version {top} contradicts paymentPayload.x402Version {version}"
            )
        try:
            p = parse_payment_payload(payload)
            r = parse_payment_requirements(version, requirements)
        except (ValidationError, ValueError) as e:
            raise BadRequest(f"not an x402 v{version} payment: {e}") from e
        served = self.v1 if version == 1 else self.v2
        if p.get_network() not in served:
            raise SchemeNotFoundError(p.get_scheme(), p.get_network())
        return version, p, r

    def supported(self) -> dict[str, Any]:
        return self.inner.get_supported().model_dump(by_alias=True, exclude_none=True)


def log(msg: str) -> None:
    print(f"facilitator.py: {msg}", file=sys.stderr, flush=True)


def make_handler(f: Facilitator) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "x402-facilitator"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # one line per request is logged below instead

        def reply(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/supported":
                self.reply(200, f.supported())
            elif self.path == "/health":
                self.reply(200, {"status": "ok"})
            else:
                self.reply(404, {"error": f"no such endpoint: GET {self.path}"})

        def do_POST(self) -> None:  # noqa: N802
            op = self.path.rstrip("/")
            if op not in ("/verify", "/settle"):
                self.reply(404, {"error": f"no such endpoint: POST {self.path}"})
                return
            try:
                length = int(self.headers.get("Content-Length") or "0")
            except ValueError:
                length = -1
            if not 0 < length <= MAX_BODY:
                self.close_connection = True
                self.reply(400, {"error": "a JSON body with a Content-Length is required"})
                return
            body = self.rfile.read(length)
            verify = op == "/verify"
            try:
                version, payload, requirements = f.parse(body)
                if verify:
                    result = f.inner.verify(payload, requirements)
                    ok, why = result.is_valid, result.invalid_reason
                else:
                    result = f.inner.settle(payload, requirements)
                    ok, why = result.success, result.error_reason
                out = result.model_dump(by_alias=True, exclude_none=True)
                tx = out.get("transaction")
                log(
                    f"{op} v{version} {payload.get_network()} payer={out.get('payer')}: "
                    + ("ok" if ok else f"refused ({why})")
                    + (f" tx={tx}" if tx else "")
                )
                self.reply(200, out)
            except BadRequest as e:
                log(f"{op}: bad request: {e}")
                self.reply(400, {"error": str(e)})
            except SchemeNotFoundError as e:
                log(f"{op}: {e}")
                reason = "unsupported_scheme"
                message = f"{e}; this facilitator serves {f.supported()['kinds']}"
                if verify:
                    self.reply(
                        400, {"isValid": False, "invalidReason": reason, "invalidMessage": message}
                    )
                else:
                    self.reply(
                        400,
                        {
                            "success": False,
                            "errorReason": reason,
                            "errorMessage": message,
                            "transaction": "",
                            "network": e.network,
                        },
                    )
            except Exception as e:  # noqa: BLE001 (the node is down, ...)
                log(f"{op}: error: {type(e).__name__}: {e}")
                self.reply(500, {"error": f"{type(e).__name__}: {e}"})

    return Handler


def main() -> None:
    a = parse_args()
    f = Facilitator(a)
    server = ThreadingHTTPServer((a.host, a.port), make_handler(f))
    server.daemon_threads = True
    host, port = server.server_address[:2]
    print(
        json.dumps(
            {
                "url": f"http://{host}:{port}",
                "address": f.signer.address,
                "chainId": f.chain_id,
                "networks": {"v2": f.v2, "v1": f.v1},
            },
            separators=(",", ":"),
        ),
        flush=True,
    )

    def stop(_sig: int, _frame: Any) -> None:
        # shutdown() waits for serve_forever to return, so it runs on another thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve_forever()
    server.server_close()


if __name__ == "__main__":
    main()
