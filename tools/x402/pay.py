#!/usr/bin/env python3
"""Pays one request with the official x402 Python client (PyPI `x402`, pinned in
requirements.txt), for the notary API's x402 tests.

    pay.py --url URL --key HEXKEY --body JSON [--idempotency-key K] [--asset 0x..]
           [--max-amount 20000] [--version 2|1] [--timeout SECONDS]

POSTs BODY (Content-Type: application/json) through `x402.http.clients.x402_httpx_transport`,
which on a 402 builds and signs the payment (exact scheme, EIP-3009 TransferWithAuthorization
signed with HEXKEY via eth_account) and retries once with the payment header.

Prints ONE JSON line on stdout: {"status": int, "headers": {lowercased name: value},
"body": parsed JSON or text, "payment_sent": {header name: value}} for the final response;
payment_sent is the payment header the client sent (empty if it paid nothing), so that a test
can present the very same signed payment again.

--version 2 (default): the client exactly as shipped: v2 `exact` registered for eip155:*, v1
  `exact` for its legacy networks ("base", ...); a 402 carrying a PAYMENT-REQUIRED header is
  always answered in v2 (PAYMENT-SIGNATURE), a v1 JSON body only when that header is absent.
--version 1: emulates a legacy v1-only client: the PAYMENT-REQUIRED header is removed from 402
  responses before the official client sees them, so it pays from the v1 JSON body (X-PAYMENT).
  (The client has no switch for this: with both present it always takes the header.)

Spend controls (the client by default pays only its table of known assets, e.g. Base USDC
0x8335..2913, up to $1): with --asset, that token is allowed on eip155:8453 and "base" with a
per-payment cap of --max-amount atomic units; without --asset any asset is allowed. Either way
requirements above --max-amount are filtered out.

Exit status: 0 when an HTTP response came back (whatever its status, 402 included);
3 when the server answered 402 but the client did not pay (no acceptable requirement, spend
controls, malformed requirements): the unpaid 402 is still printed on stdout, the reason on
stderr; 1 when no HTTP response came back (connection error, timeout); 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

NETWORK_V2 = "eip155:8453"
NETWORK_V1 = "base"


def fail(code: int, msg: str) -> None:
    print(f"pay.py: {msg}", file=sys.stderr)
    sys.exit(code)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Pay one request with the official x402 client.")
    p.add_argument("--url", required=True)
    p.add_argument("--key", required=True, help="payer private key, hex (0x optional)")
    p.add_argument("--body", required=True, help="JSON request body")
    p.add_argument("--idempotency-key", help="sent as the Idempotency-Key header")
    p.add_argument("--asset", help="token address to allow (spend controls)")
    p.add_argument("--max-amount", type=int, default=20000, help="atomic cap per payment")
    p.add_argument("--version", type=int, choices=(1, 2), default=2)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per HTTP request")
    a = p.parse_args()
    try:
        json.loads(a.body)
    except ValueError as e:
        p.error(f"--body is not JSON: {e}")
    if a.asset is not None and not (
        a.asset.startswith("0x") and len(a.asset) == 42 and _is_hex(a.asset[2:])
    ):
        p.error("--asset must be a 0x-prefixed 20-byte hex address")
    return a


def _is_hex(s: str) -> bool:
    try:
        int(s, 16)
        return True
    except ValueError:
        return False


def render(status: int, headers, content: bytes, sent: dict | None = None) -> str:
    hdrs: dict[str, str] = {}
    for name, value in headers.multi_items():
        k = name.lower()
        hdrs[k] = f"{hdrs[k]}, {value}" if k in hdrs else value
    text = content.decode("utf-8", errors="replace")
    try:
        body = json.loads(text) if text.strip() else text
    except ValueError:
        body = text
    out = {"status": status, "headers": hdrs, "body": body}
    # The payment header the client sent (name: value), so a test can replay the very same
    # signed payment.
    out["payment_sent"] = sent or {}
    return json.dumps(out, separators=(",", ":"))


async def run(a: argparse.Namespace) -> int:
    import httpx
    from eth_account import Account
    from x402 import max_amount, x402Client
    from x402.http.clients import x402_httpx_transport
    from x402.mechanisms.evm.exact import register_exact_evm_client

    key = a.key if a.key.startswith("0x") else "0x" + a.key
    try:
        account = Account.from_key(key)
    except Exception as e:  # noqa: BLE001
        fail(2, f"bad --key: {e}")

    client = x402Client()
    # V2 exact for eip155:* and V1 exact for every legacy network name, signing with the key.
    register_exact_evm_client(client, account)
    if a.asset:
        client.set_spend_controls(
            {
                "allowed_assets": [
                    {
                        "network": net,
                        "asset": a.asset,
                        "max_amount_per_payment": str(a.max_amount),
                    }
                    for net in (NETWORK_V2, NETWORK_V1)
                ]
            }
        )
    else:
        # Any asset; non-default assets are then uncapped by spend controls, so the policy
        # below is the cap.
        client.set_spend_controls({"allowed_assets": True})
    client.register_policy(max_amount(a.max_amount))

    last: dict[str, object] = {}
    sent: dict[str, str] = {}

    class Inner(httpx.AsyncBaseTransport):
        """The wire transport under the official x402 transport: records the latest response
        (to report an unpaid 402) and, for --version 1, hides the v2 PAYMENT-REQUIRED header."""

        def __init__(self) -> None:
            self._t = httpx.AsyncHTTPTransport()

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            for name in ("payment-signature", "x-payment"):
                if name in request.headers:
                    sent[name] = request.headers[name]
            resp = await self._t.handle_async_request(request)
            content = await resp.aread()
            headers = resp.headers
            if a.version == 1 and resp.status_code == 402:
                headers = httpx.Headers(
                    [(k, v) for k, v in resp.headers.multi_items()
                     if k.lower() != "payment-required"]
                )
            last["status"], last["headers"], last["content"] = resp.status_code, headers, content
            return httpx.Response(
                resp.status_code,
                headers=headers,
                content=content,
                request=request,
                extensions=resp.extensions,
            )

        async def aclose(self) -> None:
            await self._t.aclose()

    headers = {"Content-Type": "application/json"}
    if a.idempotency_key is not None:
        headers["Idempotency-Key"] = a.idempotency_key

    from x402.http.clients.httpx import PaymentError

    async with httpx.AsyncClient(
        transport=x402_httpx_transport(client, transport=Inner()), timeout=a.timeout
    ) as http:
        try:
            resp = await http.post(a.url, content=a.body.encode("utf-8"), headers=headers)
        except PaymentError as e:
            if last.get("status") == 402:
                print(render(last["status"], last["headers"], last["content"], sent))  # type: ignore[arg-type]
                sys.stdout.flush()
                fail(3, f"the server asked for payment but the client did not pay: {e}")
            fail(1, f"payment handling failed: {e}")
        except httpx.HTTPError as e:
            fail(1, f"no HTTP response: {type(e).__name__}: {e}")
        print(render(resp.status_code, resp.headers, resp.content, sent))
    return 0


def main() -> None:
    a = parse_args()
    sys.exit(asyncio.run(run(a)))


if __name__ == "__main__":
    main()
