#!/usr/bin/env bash
# 100 MiB each way through bearer-proxy as a gRPC stream, with grpcio on both sides (Tests/python/grpc_bulk.py
# against Tests/python/grpc_echo_server.py, 1 MiB messages, an h2 route): the digests both ways, the time each way,
# and the proxy's peak resident memory (VmHWM from /proc/PID/status) once it has served one small call and again
# after the two streams. `serve` runs as its own process, so the number is the proxy's alone.
#
#   bash bench/grpc-bulk.sh BINARY [MIB]
#
# Needs the test tools' python3 with grpcio (.ci/run's venv) on PATH; listens on 127.0.0.1 only (ports from the OS
# for the gRPC server, 18296 for the proxy).
set -euo pipefail
SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd -- "$SCRIPT_DIR/.." && pwd)
BINARY=${1:?usage: bench/grpc-bulk.sh BINARY [MIB]}
MIB=${2:-100}
BP_PORT=18296
die() { echo "grpc-bulk.sh: $*" >&2; exit 1; }
[[ -x $BINARY ]] || die "no binary at $BINARY"
python3 -c 'import grpc' 2>/dev/null || die "python3 has no grpcio (put .ci/run's venv on PATH)"

# shellcheck source=bench/local-servers.sh
source "$SCRIPT_DIR/local-servers.sh"

python3 "$ROOT/Tests/python/grpc_echo_server.py" 2>"$TMP/grpc.log" &
PIDS+=($!)
for _ in $(seq 100); do grep -q "listening on" "$TMP/grpc.log" && break; sleep 0.1; done
UP_PORT=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/grpc.log")
[[ -n $UP_PORT ]] || die "the gRPC server did not start: $(cat "$TMP/grpc.log")"

mkdir -m 0700 -p "$TMP/state"
cat >"$TMP/routes.json" <<JSON
{ "listen": "127.0.0.1:$BP_PORT", "account": { "flow": "dev" },
  "routes": [ { "prefix": "/pkg.Echo", "upstream": "http://127.0.0.1:$UP_PORT", "scopes": ["api://echo/.default"],
                "upstreamProtocol": "h2" } ] }
JSON
XDG_STATE_HOME="$TMP/state" "$BINARY" serve --config "$TMP/routes.json" --log-level warning \
    </dev/null >"$TMP/proxy.log" 2>&1 &
BP_PID=$!
PIDS+=("$BP_PID")
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$BP_PORT/-/health" && break; sleep 0.1; done

hwm() { awk '/^VmHWM/ { print $2 }' "/proc/$BP_PID/status"; }
python3 "$ROOT/Tests/python/grpc_bulk.py" "$BP_PORT" pkg.Echo 1 >/dev/null || die "a 1 MiB call failed: $(cat "$TMP/proxy.log")"
before=$(hwm)
result=$(python3 "$ROOT/Tests/python/grpc_bulk.py" "$BP_PORT" pkg.Echo "$MIB")
after=$(hwm)
echo "$result"
echo "proxy VmHWM after a 1 MiB call each way: $((before / 1024)) MiB; after $MIB MiB each way: $((after / 1024)) MiB"
python3 - "$result" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
ok = r["up"]["server"] == r["expected"] and r["down"]["client"] == r["expected"] == r["down"]["server"]
print("digests", "match" if ok else "DIFFER")
sys.exit(0 if ok else 1)
PY
