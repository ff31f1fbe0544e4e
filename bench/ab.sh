#!/usr/bin/env bash
# Compares two builds of bearer-proxy in paired rounds: A, then B, then A again…, each under the same wrk load to the
# same local nginx, and prints each run's req/s, p99 and CPU a request (user and system, from /proc/PID/stat), then
# the medians and the paired ratios B ÷ A. On a shared 2-core machine a run's CPU a request moves by 20 % with
# whatever else the host does (session 21 saw 16 µs and 20 µs rounds of one binary minutes apart); two builds run
# minutes apart cannot be compared, two runs seconds apart can — so the ratio of each pair is the measure, not the
# difference of two medians.
#
#   bash bench/ab.sh OLD_BINARY NEW_BINARY
#   AB_ROUNDS=6 AB_SECONDS=4           pairs, and seconds of each measured run (after a 2 s warm-up)
#   AB_CONNECTIONS=50                  wrk connections (-c), one wrk thread
#   AB_PIN=1                           bearer-proxy on CPU 0, nginx and wrk on CPU 1 (taskset): steadier pairs
#   AB_WAKEUPS=1                       also count the wakeups each proxy makes a request (perf, sched:sched_wakeup)
#   AB_ROUTES_A=FILE AB_ROUTES_B=FILE  routes.json for A and B instead of the dev account's /bench route, with
#                                      @LISTEN@ and @UPSTREAM@ for the ports (bench/dpop-ab.sh: one binary, a bearer
#                                      route against a DPoP route)
#   AB_THREADS_A=1 AB_THREADS_B=1      event loops of A and B (`serve --threads N`); `default`: no --threads, so
#                                      `serve`'s own default (one loop per core the process may use). One binary
#                                      twice with AB_THREADS_B=2 compares loop counts
#
# Needs nginx, wrk, curl and python3 (perf for AB_WAKEUPS); listens on 127.0.0.1:18191, :18193 and :18194 only.
set -euo pipefail
SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
A=${1:?usage: bench/ab.sh OLD_BINARY NEW_BINARY}
B=${2:?usage: bench/ab.sh OLD_BINARY NEW_BINARY}
ROUNDS=${AB_ROUNDS:-6}
SECONDS_EACH=${AB_SECONDS:-4}
CONNECTIONS=${AB_CONNECTIONS:-50}
UP_PORT=18191
die() { echo "ab.sh: $*" >&2; exit 1; }
for tool in nginx wrk curl python3; do command -v "$tool" >/dev/null || die "$tool not found"; done
[[ ${AB_WAKEUPS:-0} == 1 ]] && { command -v perf >/dev/null || die "perf not found (AB_WAKEUPS=1)"; }
for binary in "$A" "$B"; do [[ -x $binary ]] || die "no binary at $binary"; done
pin_proxy=() pin_load=()
if [[ ${AB_PIN:-0} == 1 ]]; then pin_proxy=(taskset -c 0) pin_load=(taskset -c 1); fi

# shellcheck source=bench/local-servers.sh
source "$SCRIPT_DIR/local-servers.sh"
upstream_nginx_conf "$UP_PORT"
"${pin_load[@]}" nginx -c "$TMP/nginx.conf" -p "$TMP" &
PIDS+=($!)

start() { # BINARY PORT THREADS [ROUTES_TEMPLATE] -> the proxy's PID
    local threads=()
    [[ $3 == default ]] || threads=(--threads "$3")
    set -- "$1" "$2" "${4:-}"
    mkdir -m 0700 -p "$TMP/state$2"
    if [[ -n ${3:-} ]]; then
        sed -e "s/@LISTEN@/$2/g" -e "s/@UPSTREAM@/$UP_PORT/g" "$3" >"$TMP/routes$2.json"
    else
        bench_routes "$TMP/routes$2.json" "$2" "$UP_PORT"
    fi
    XDG_STATE_HOME="$TMP/state$2" "${pin_proxy[@]}" "$1" serve --config "$TMP/routes$2.json" --log-level warning \
        "${threads[@]}" </dev/null >"$TMP/proxy$2.log" 2>&1 &
    echo $!
}
for threads in "${AB_THREADS_A:=1}" "${AB_THREADS_B:=1}"; do
    [[ $threads == default || $threads =~ ^[1-9][0-9]*$ ]] || die "AB_THREADS_A/B: a count or 'default', got '$threads'"
done
PID_A=$(start "$A" 18193 "$AB_THREADS_A" "${AB_ROUTES_A:-}")
PIDS+=("$PID_A")
PID_B=$(start "$B" 18194 "$AB_THREADS_B" "${AB_ROUTES_B:-}")
PIDS+=("$PID_B")
for port in 18193 18194; do
    for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/bench/x" && break; sleep 0.1; done
    curl -sf -o /dev/null "http://127.0.0.1:$port/bench/x" || die "the proxy on $port does not answer: $(cat "$TMP/proxy$port.log")"
done

measure() { # LABEL PID PORT -> one line: LABEL rps p99 user sys cpu [wakeups]
    local url="http://127.0.0.1:$3/bench/x" u0 s0 u1 s1 out requests wakeups=""
    "${pin_load[@]}" wrk -t1 -c"$CONNECTIONS" -d2s "$url" >/dev/null
    read -r u0 s0 < <(awk '{ print $14, $15 }' "/proc/$2/stat")
    out=$("${pin_load[@]}" wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_EACH}s" --latency "$url")
    read -r u1 s1 < <(awk '{ print $14, $15 }' "/proc/$2/stat")
    requests=$(awk '/requests in/ { print $1 }' <<<"$out")
    if [[ ${AB_WAKEUPS:-0} == 1 ]]; then
        perf stat -x, -e sched:sched_wakeup -p "$2" -o "$TMP/wakeups.txt" -- \
            "${pin_load[@]}" wrk -t1 -c"$CONNECTIONS" -d2s "$url" >"$TMP/wrk-wakeups.txt"
        wakeups=$(awk -F, -v n="$(awk '/requests in/ { print $1 }' "$TMP/wrk-wakeups.txt")" \
            '/sched_wakeup/ { printf "%.4f", $1 / n }' "$TMP/wakeups.txt")
    fi
    python3 - "$1" "$out" "$requests" "$u0" "$s0" "$u1" "$s1" "$(getconf CLK_TCK)" "$wakeups" <<'EOF'
import re, sys
label, out, n, u0, s0, u1, s1, hz, wakeups = sys.argv[1:]
n, hz = int(n), int(hz)
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
p99ms = float(p99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
user = (int(u1) - int(u0)) / hz * 1e6 / n
system = (int(s1) - int(s0)) / hz * 1e6 / n
line = f"{label} rps {rps:.0f} p99_ms {p99ms:.3f} user_us {user:.2f} sys_us {system:.2f} cpu_us {user + system:.2f}"
print(line + (f" wakeups {wakeups}" if wakeups else ""))
EOF
}

echo "A: $A (threads: $AB_THREADS_A)"
echo "B: $B (threads: $AB_THREADS_B)"
echo "$ROUNDS pairs, wrk -t1 -c$CONNECTIONS -d${SECONDS_EACH}s${pin_load:+, pinned}"
for _ in $(seq "$ROUNDS"); do
    measure A "$PID_A" 18193 | tee -a "$TMP/runs.txt"
    measure B "$PID_B" 18194 | tee -a "$TMP/runs.txt"
done
python3 - "$TMP/runs.txt" <<'EOF'
import math, statistics, sys
runs = [line.split() for line in open(sys.argv[1])]
def field(run, name): return float(run[run.index(name) + 1])
a = [r for r in runs if r[0] == "A"]
b = [r for r in runs if r[0] == "B"]
names = ["rps", "p99_ms", "user_us", "sys_us", "cpu_us"] + (["wakeups"] if "wakeups" in a[0] else [])
for label, group in (("A", a), ("B", b)):
    print(f"{label} medians: " + ", ".join(f"{n} {statistics.median(field(r, n) for r in group):.3f}" for n in names))
for name in ("cpu_us", "rps", "p99_ms"):
    ratios = [field(y, name) / field(x, name) for x, y in zip(a, b)]
    mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"B / A {name}: geometric mean {mean:.3f}, median {statistics.median(ratios):.3f}, "
          f"B lower in {sum(r < 1 for r in ratios)} of {len(ratios)} pairs")
EOF
