#!/usr/bin/env bash
# Regenerates docs/test-vectors/rsa2048.json with the vrs binary. The vectors are committed;
# a test (engine/tests/integration/vectors.rs) and the independent Python verifier
# (tests/independent/verify_vectors.py) check them on every CI run.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -q -p vrs
out=docs/test-vectors/rsa2048.json
{
  echo '{'
  echo '  "description": "vrs VDF test vectors: RSA-2048 group Z_N^*/{±1}, x = hash_to_group(seed), y = x^(2^T), Wesolowski proof (l, pi). Hex is big-endian, fixed width. See docs/PROTOCOL.md.",'
  echo '  "vectors": ['
  sep=""
  i=0
  for t in 1 2 1000 100000; do
    seed=$(printf '%02x' "$i"; printf 'a5%.0s' $(seq 1 31))
    doc=$(./target/release/vrs vdf prove --seed "$seed" --iterations "$t" --json \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); [d.pop(k) for k in ("backend","timings")]; print(json.dumps(d))')
    printf '%s    %s' "$sep" "$doc"
    sep=$',\n'
    i=$((i + 1))
  done
  printf '\n  ]\n}\n'
} > "$out"
echo "wrote $out"
