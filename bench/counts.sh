#!/usr/bin/env bash
# Counts what one proxied request costs in calls that do not depend on how busy the machine is: swift_retain,
# swift_release, swift_allocObject and malloc, per request, over COUNTS_REQUESTS sequential keep-alive requests
# through a release build of bearer-proxy (one event loop) to a local nginx. Unlike req/s and CPU time, these
# counts are exact and repeatable on a shared machine, so each change of the hot path can be measured on its own.
#
#   bash bench/counts.sh                       build (release) and count
#   COUNTS_BINARY=/path/to/bearer-proxy bash bench/counts.sh   count another build (e.g. an older commit's)
#   COUNTS_REQUESTS=2000                       how many requests are counted (after a warm-up)
#   COUNTS_PROTOCOL=h2                         the client speaks HTTP/2 (prior knowledge, one stream at a time on one
#                                              connection; needs Python's h2) instead of HTTP/1.1
#   COUNTS_CALLERS=swift_allocObject           also list who makes that call, per request (the nearest frame of
#                                              ours or NIO's, from a perf call graph): which allocation to remove next
#   COUNTS_DEPTH=3                             how many of those frames name a caller
#   COUNTS_LINES=1                             also list the call sites by source line (llvm-symbolizer, inlined
#                                              frames included): which line of ours makes the call
#   COUNTS_SAMPLES=FILE                        also keep the samples (perf script) in FILE, to compare two builds'
#                                              callers with bench/callers-diff.py
#
# Needs perf with uprobes (root), nginx, curl and python3; listens on 127.0.0.1:18091 (nginx) and :18093 only.
set -euo pipefail
SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/.." && pwd)
REQUESTS=${COUNTS_REQUESTS:-2000}
UP_PORT=18091
BP_PORT=18093

die() { echo "counts.sh: $*" >&2; exit 1; }
for tool in perf nginx curl python3; do command -v "$tool" >/dev/null || die "$tool not found"; done

if [[ -n ${COUNTS_BINARY:-} ]]; then
    BIN=$COUNTS_BINARY
else
    (cd "$REPO_ROOT" && swift build -c release --product bearer-proxy) >&2 || die "swift build failed"
    BIN="$(cd "$REPO_ROOT" && swift build -c release --show-bin-path)/bearer-proxy"
fi
[[ -x $BIN ]] || die "no binary at $BIN"

# shellcheck source=bench/local-servers.sh
source "$SCRIPT_DIR/local-servers.sh"
# The probes: libc's malloc and the Swift runtime's entry points, wherever this machine has them. A release build
# links the runtime statically (Package.swift), so they are in the binary itself; perf places a probe by symbol only
# through the DWARF it finds, which has no entry for the runtime's functions, so a copy without debug sections runs.
LIBC=$(ldconfig -p | awk '/libc\.so\.6 .*x86-64|libc\.so\.6 .*aarch64/{print $NF; exit}')
SWIFT_CORE=$(ldd "$BIN" | awk '/libswiftCore\.so/{print $3}')
if [[ -z $SWIFT_CORE ]]; then
    command -v objcopy >/dev/null || die "objcopy not found (binutils): needed to count a static build"
    objcopy --strip-debug "$BIN" "$TMP/bearer-proxy" || die "objcopy --strip-debug $BIN failed"
    BIN=$TMP/bearer-proxy
    SWIFT_CORE=$BIN
fi
EVENTS=()
add_probe() { # library symbol
    # An event's name is one in the whole system: drop one left by a count of the other kind of build.
    perf probe -q -d "*:$2" 2>/dev/null || true
    perf probe -q -x "$1" "$2" 2>/dev/null || true
    local event # perf names the group after the file, as it sees fit
    event=$(perf probe -l 2>/dev/null | awk -v sym="$2" -v file="$(readlink -f "$1")" \
        '$1 ~ ":" sym "$" && index($0, " in " file ")") { print $1; exit }')
    [[ -n $event ]] && EVENTS+=("$event") || die "could not probe $2 in $1"
}
add_probe "$SWIFT_CORE" swift_retain
add_probe "$SWIFT_CORE" swift_release
add_probe "$SWIFT_CORE" swift_allocObject
add_probe "$SWIFT_CORE" swift_beginAccess
add_probe "$LIBC" malloc

upstream_nginx_conf "$UP_PORT"
bench_routes "$TMP/routes.json" "$BP_PORT" "$UP_PORT"
mkdir -m 0700 "$TMP/state"
nginx -c "$TMP/nginx.conf" -p "$TMP" &
PIDS+=($!)
XDG_STATE_HOME=$TMP/state "$BIN" serve --config "$TMP/routes.json" --log-level warning --threads 1 \
    </dev/null >"$TMP/bearer-proxy.log" 2>&1 &
BP=$!
PIDS+=("$BP")
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$BP_PORT/bench/x" && break; sleep 0.1; done
curl -sf -o /dev/null "http://127.0.0.1:$BP_PORT/bench/x" || die "bearer-proxy did not answer: $(cat "$TMP/bearer-proxy.log")"

# One client, one keep-alive connection, one request at a time: the counts are per request, not per batch.
cat >"$TMP/client.py" <<'EOF'
import socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port))
request = b"GET /bench/x HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: counts\r\nAccept: */*\r\n\r\n"
buffer = b""
for _ in range(n):
    s.sendall(request)
    while True:
        end = buffer.find(b"\r\n\r\n")
        if end >= 0:
            lines = buffer[:end].decode().split("\r\n")
            length = int(next(l.split(":")[1] for l in lines if l.lower().startswith("content-length")))
            if len(buffer) >= end + 4 + length:
                buffer = buffer[end + 4 + length:]
                break
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("connection closed")
        buffer += chunk
EOF
# The same over HTTP/2: one connection, one stream at a time (RFC 9113 §3.3, prior knowledge).
if [[ ${COUNTS_PROTOCOL:-http/1.1} == h2 ]]; then
    cat >"$TMP/client.py" <<'H2EOF'
import socket, sys
import h2.config, h2.connection, h2.events
port, n = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port))
c = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
c.initiate_connection()
s.sendall(c.data_to_send())
request = [(":method", "GET"), (":scheme", "http"), (":authority", "127.0.0.1"), (":path", "/bench/x"),
           ("user-agent", "counts"), ("accept", "*/*")]
for _ in range(n):
    stream = c.get_next_available_stream_id()
    c.send_headers(stream, request, end_stream=True)
    s.sendall(c.data_to_send())
    done = False
    while not done:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("connection closed")
        for event in c.receive_data(chunk):
            if isinstance(event, h2.events.DataReceived):
                c.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                done = True
            elif isinstance(event, h2.events.StreamReset):
                sys.exit("stream reset")
        pending = c.data_to_send()
        if pending:
            s.sendall(pending)
H2EOF
fi
python3 "$TMP/client.py" "$BP_PORT" 200 # warm-up: pools, caches, lazily built tables
EVENT_LIST=$(IFS=,; echo "${EVENTS[*]}")
perf stat -e "$EVENT_LIST" -p "$BP" -x, -o "$TMP/stat.txt" &
STAT=$!
sleep 0.5
python3 "$TMP/client.py" "$BP_PORT" "$REQUESTS"
sleep 0.3
kill -INT "$STAT"
wait "$STAT" || true

echo "| call | per request |"
echo "|---|---|"
awk -F, -v n="$REQUESTS" '/probe_/{split($3, e, ":"); printf "| %s | %.1f |\n", e[2], $1 / n}' "$TMP/stat.txt"
echo
echo "binary: $BIN; $REQUESTS sequential keep-alive GETs (${COUNTS_PROTOCOL:-http/1.1}), one event loop, counted with perf uprobes"

if [[ -n ${COUNTS_CALLERS:-} ]]; then
    CALLER_EVENT=$(printf '%s\n' "${EVENTS[@]}" | grep ":$COUNTS_CALLERS\$" || true)
    [[ -n $CALLER_EVENT ]] || die "COUNTS_CALLERS names no probed call: $COUNTS_CALLERS"
    # Started disabled and enabled through a control FIFO: "ack" says the probes are live, so no request goes
    # uncounted while perf maps its buffer (a fixed sleep lost most samples). The stacks are walked by frame pointer
    # (Swift keeps them in release builds on Linux): a few words a sample, where the DWARF unwinder's 8 KiB copies
    # made perf drop samples — the callers summed to 20-85 % of the count with them, and to all of it now.
    mkfifo "$TMP/perf.ctl" "$TMP/perf.ack"
    perf record -D -1 --control "fifo:$TMP/perf.ctl,$TMP/perf.ack" -m 128M -e "$CALLER_EVENT" \
        --call-graph fp -p "$BP" -o "$TMP/callers.data" 2>"$TMP/perf-record.err" &
    RECORD=$!
    exec {CTL}>"$TMP/perf.ctl" {ACK}<"$TMP/perf.ack"
    echo enable >&"$CTL"
    read -r -t 120 -u "$ACK" _ || die "perf record did not start: $(cat "$TMP/perf-record.err" 2>/dev/null)"
    python3 "$TMP/client.py" "$BP_PORT" "$REQUESTS"
    sleep 0.3
    kill -INT "$RECORD"
    wait "$RECORD" || true
    [[ -z ${COUNTS_SAMPLES:-} ]] || perf script -i "$TMP/callers.data" -F ip,sym >"$COUNTS_SAMPLES" 2>/dev/null
    # The first frame that is not the runtime's or libc's says who asked; demangled so it reads as Swift.
    perf script -i "$TMP/callers.data" -F ip,sym 2>/dev/null | python3 -c '
import collections, subprocess, sys
n, depth = int(sys.argv[1]), int(sys.argv[3])
counts, stack = collections.Counter(), []
def flush():
    ours = [f for f in stack[1:] if not f.startswith(("swift_", "_swift", "malloc", "operator new", "[unknown]"))]
    if stack:
        counts[" <- ".join(ours[:depth]) or "(runtime only)"] += 1
for line in sys.stdin:
    line = line.strip()
    if not line:
        flush(); stack.clear(); continue
    parts = line.split(None, 1)
    stack.append(parts[1].rsplit("+0x", 1)[0] if len(parts) > 1 else "[unknown]")
flush()
names = list(counts)
def demangle(chain):
    frames = chain.split(" <- ")
    out = subprocess.run(["swift-demangle", "--simplified", "--compact"], input="\n".join(frames), capture_output=True, text=True).stdout.splitlines()
    return " <- ".join(f.replace(" (inlined)", "").split("(")[0] for f in out) if len(out) == len(frames) else chain
demangled = [demangle(name) for name in names]
print()
print("| caller of " + sys.argv[2] + " | per request |")
print("|---|---|")
for (name, count), pretty in sorted(zip(counts.items(), demangled or names), key=lambda item: -item[0][1]):
    if count / n >= 0.05:
        print("| `%s` | %.2f |" % (pretty[:1000].replace("|", "\\|"), count / n))
print()
print("(every call, with its stack: callers under 0.05 a request are left out)")
' "$REQUESTS" "$COUNTS_CALLERS" "${COUNTS_DEPTH:-3}"
    if [[ ${COUNTS_LINES:-0} == 1 ]]; then
        perf script -i "$TMP/callers.data" -F ip,sym 2>/dev/null \
            | python3 "$SCRIPT_DIR/callsites.py" "$BIN" "$REQUESTS" "$COUNTS_CALLERS"
    fi
fi
