#!/usr/bin/env bash
# Property-based tests of a running vrs server with schemathesis: requests generated from its
# OpenAPI documents, honest and hostile, every check enabled (no 5xx; status, content type,
# headers and body as documented; 405 with an exact Allow header for a method the path does
# not accept; authentication enforced). Configuration: schemathesis.toml beside this script.
#
#   tools/schemathesis/run.sh BASE_URL [MAX_EXAMPLES] [DOCUMENT...]
#
# MAX_EXAMPLES: test cases per operation in the fuzzing phase (default 100, as in CI).
# DOCUMENT: the documents to test (default both: /api/v1/openapi.json /v1/openapi.json).
# VRS_API_KEY: a notary API key, sent as `Authorization: Bearer` on every request; schemathesis
#   then also checks that a notarization without it, or with a wrong one, is refused (401).
#   Use it against a server that takes API keys only: where x402 is configured, the refusal is
#   402, which that check does not know. Without it, notarizations are unauthenticated: 402
#   (x402 configured) or 401.
# VRS_ST_SEED: the seed (default 1, as in CI); the same seed and version repeat the same run.
# Exits non-zero when schemathesis finds a failure, with its report on stdout.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 BASE_URL [MAX_EXAMPLES] [DOCUMENT...]" >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
st="$here/.venv/bin/st"
if [ ! -x "$st" ]; then
  echo "schemathesis is not installed at $st: run scripts/install-deps" >&2
  exit 2
fi
base="${1%/}"
examples="${2:-100}"
shift $(($# < 2 ? $# : 2))
documents=("$@")
[ ${#documents[@]} -gt 0 ] || documents=(/api/v1/openapi.json /v1/openapi.json)

auth=()
if [ -n "${VRS_API_KEY:-}" ]; then
  auth=(-H "Authorization: Bearer $VRS_API_KEY")
fi

status=0
for doc in "${documents[@]}"; do
  echo "== schemathesis: $base$doc (max examples $examples, seed ${VRS_ST_SEED:-1})"
  # Each document's paths are absolute from the server's root (--url).
  "$st" --config-file "$here/schemathesis.toml" --no-color run "$base$doc" \
    --url "$base" \
    --checks all \
    --seed "${VRS_ST_SEED:-1}" \
    --max-examples "$examples" \
    "${auth[@]}" || status=1
done
exit $status
