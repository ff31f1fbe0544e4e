#!/usr/bin/env bash
# The CPU a request of a DPoP route against a bearer route (RFC 9449 §7: a proof signed per request), with
# bench/ab.sh's paired rounds: one binary twice, A with an account that gets bearer tokens, B with one that gets
# DPoP-bound tokens, both from bench/dpop_issuer.py (a client-credentials account), both to the same local nginx.
#
#   bash bench/dpop-ab.sh [BINARY]      default .build/release/bearer-proxy; AB_* knobs as for bench/ab.sh
#
# Listens on 127.0.0.1:18195 (the issuer) besides bench/ab.sh's ports.
set -euo pipefail
SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
BINARY=${1:-$SCRIPT_DIR/../.build/release/bearer-proxy}
ISSUER_PORT=18195
WORK=$(mktemp -d)
python3 "$SCRIPT_DIR/dpop_issuer.py" "$ISSUER_PORT" &
ISSUER=$!
trap 'kill "$ISSUER" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$ISSUER_PORT/.well-known/openid-configuration" && break; sleep 0.1; done
for kind in bearer dpop; do
    cat >"$WORK/$kind.json" <<JSON
{ "listen": "127.0.0.1:@LISTEN@",
  "account": { "flow": "client-credentials", "issuer": "http://127.0.0.1:$ISSUER_PORT", "clientId": "bench",
               "clientSecretEnv": "BENCH_DPOP_SECRET", "tokenType": "$kind" },
  "routes": [ { "prefix": "/bench", "upstream": "http://127.0.0.1:@UPSTREAM@", "scopes": ["api://bench/.default"] } ] }
JSON
done
BENCH_DPOP_SECRET=bench AB_ROUTES_A="$WORK/bearer.json" AB_ROUTES_B="$WORK/dpop.json" \
    bash "$SCRIPT_DIR/ab.sh" "$BINARY" "$BINARY"
