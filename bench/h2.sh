#!/usr/bin/env bash
# HTTP/2 clients against bearer-proxy and nginx as the same reverse proxy (`listen … http2`, prior knowledge), both in
# front of one local nginx upstream over HTTP/1.1, and of one over HTTP/2 (cleartext, prior knowledge: bearer-proxy's
# `"upstreamProtocol": "h2"`, nginx's `grpc_pass`), loaded by h2load: for each proxy, rounds of
#   h1       HTTP/1.1, 50 connections, one request at a time on each (h2load --h1: the same load generator)
#   h2       HTTP/2, 50 connections, one stream at a time on each
#   h2x100   HTTP/2, 1 connection, 100 streams at once
#   h2h2     HTTP/2 end to end: 50 connections, one stream at a time on each, to the HTTP/2 upstream
#   h2h2x100 HTTP/2 end to end: 1 connection, 100 streams at once, to the HTTP/2 upstream
# and prints each run's req/s and CPU a request (user + system of the proxy and its workers, from /proc/PID/stat),
# then the medians. One loop for bearer-proxy (--threads 1), one worker for nginx.
#
# With H2_FLOOR=FLOOR_BINARY (bench-floor-proxy, `swift build -c release --product bench-floor-proxy`), the HTTP/2
# floor runs beside them in the loads with an HTTP/1.1 upstream (h2, h2x100): `--http2 channels` (a child channel a
# stream, NIOHTTP2's multiplexer) and `--http2 connection` (every stream on the connection's own handler: the shape
# bearer-proxy has), doing nothing but the job.
#
# Last come the medians of each figure, and the medians of the paired ratios: each proxy's CPU a request over nginx's
# in the same round, bearer-proxy's over the `connection` floor's, and each HTTP/2 figure over bearer-proxy's own HTTP/1.1
# request (`h1`).
#
#   bash bench/h2.sh BINARY
#   H2_ROUNDS=3 H2_REQUESTS=100000
#   H2_MODES="h2 h2h2"          only these loads
#   H2_FLOOR=.build/release/bench-floor-proxy
#
# Needs nginx, h2load (nghttp2-client), curl; listens on 127.0.0.1:18291 to :18297 only.
set -euo pipefail
SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
BINARY=${1:?usage: bench/h2.sh BINARY}
ROUNDS=${H2_ROUNDS:-3}
REQUESTS=${H2_REQUESTS:-100000}
UP_PORT=18291 UP2_PORT=18292 BP_PORT=18293 NG_PORT=18294 NG2_PORT=18295 FC_PORT=18296 FN_PORT=18297
FLOOR=${H2_FLOOR:-}
die() { echo "h2.sh: $*" >&2; exit 1; }
for tool in nginx h2load curl; do command -v "$tool" >/dev/null || die "$tool not found"; done
[[ -x $BINARY ]] || die "no binary at $BINARY"

# shellcheck source=bench/local-servers.sh
source "$SCRIPT_DIR/local-servers.sh"
upstream_nginx_conf "$UP_PORT"
nginx -c "$TMP/nginx.conf" -p "$TMP" &
PIDS+=($!)

# The HTTP/2 upstream: the same answer, on a cleartext HTTP/2 listener (prior knowledge).
mkdir -p "$TMP/up2"
sed -e "s|listen 127.0.0.1:$UP_PORT;|listen 127.0.0.1:$UP2_PORT http2;|" -e "s|$TMP/nginx.pid|$TMP/up2/nginx.pid|" \
    -e "s|$TMP/nginx-error.log|$TMP/up2/error.log|" "$TMP/nginx.conf" >"$TMP/up2/nginx.conf"
grep -q "$UP2_PORT http2" "$TMP/up2/nginx.conf" || die "could not write the HTTP/2 upstream's configuration"
nginx -c "$TMP/up2/nginx.conf" -p "$TMP/up2" &
PIDS+=($!)

mkdir -m 0700 -p "$TMP/state"
cat >"$TMP/routes.json" <<JSON
{ "listen": "127.0.0.1:$BP_PORT", "account": { "flow": "dev" },
  "routes": [
    { "prefix": "/bench", "upstream": "http://127.0.0.1:$UP_PORT", "scopes": ["api://bench/.default"] },
    { "prefix": "/bench2", "upstream": "http://127.0.0.1:$UP2_PORT", "upstreamProtocol": "h2",
      "scopes": ["api://bench/.default"] } ] }
JSON
XDG_STATE_HOME="$TMP/state" "$BINARY" serve --config "$TMP/routes.json" --log-level warning --threads 1 \
    </dev/null >"$TMP/proxy.log" 2>&1 &
BP_PID=$!
PIDS+=("$BP_PID")

# nginx as the same reverse proxy, a bearer header added, upstream keep-alive: HTTP/1.1 on one port, HTTP/2 (prior
# knowledge) on another (before 1.25.1 a cleartext `http2` listener speaks nothing else).
mkdir -p "$TMP/ng"
cat >"$TMP/ng/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $TMP/ng/nginx.pid;
error_log $TMP/ng/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    http2_max_concurrent_streams 128;
    upstream up { server 127.0.0.1:$UP_PORT; keepalive 64; }
    upstream up2 { server 127.0.0.1:$UP2_PORT; keepalive 64; }
    server {
        listen 127.0.0.1:$NG_PORT;
        listen 127.0.0.1:$NG2_PORT http2;
        location /bench/ {
            proxy_pass http://up/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Authorization "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJl";
        }
        location /bench2/ {
            grpc_pass grpc://up2;
            grpc_set_header Authorization "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJl";
        }
    }
}
CONF
nginx -c "$TMP/ng/nginx.conf" -p "$TMP/ng" &
NG_PID=$!
PIDS+=("$NG_PID")

if [[ -n $FLOOR ]]; then
    [[ -x $FLOOR ]] || die "no floor binary at $FLOOR"
    for shape in channels:$FC_PORT connection:$FN_PORT; do
        BENCH_TOKEN=eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJl "$FLOOR" --http2 "${shape%%:*}" \
            --listen "127.0.0.1:${shape##*:}" --upstream "127.0.0.1:$UP_PORT" --threads 1 >"$TMP/floor-${shape%%:*}.log" 2>&1 &
        PIDS+=($!)
        eval "FLOOR_${shape%%:*}_PID=$!"
    done
    for port in $FC_PORT $FN_PORT; do
        for _ in $(seq 100); do curl -sf --http2-prior-knowledge -o /dev/null "http://127.0.0.1:$port/bench/x" && break; sleep 0.1; done
        curl -sf --http2-prior-knowledge -o /dev/null "http://127.0.0.1:$port/bench/x" || die "the floor on $port does not answer"
    done
fi
for port in $BP_PORT $NG_PORT; do
    for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/bench/x" && break; sleep 0.1; done
done
for port in $BP_PORT $NG2_PORT; do
    for path in /bench/x /bench2/x; do
        curl -sf --http2-prior-knowledge -o /dev/null "http://127.0.0.1:$port$path" ||
            die "the proxy on $port does not answer $path over HTTP/2: $(cat "$TMP/proxy.log" "$TMP/ng/error.log" 2>/dev/null)"
    done
done

ticks() { # PID -> utime+stime of PID and its direct children (nginx's worker)
    local total=0 pid fields
    for pid in "$1" $(pgrep -P "$1" || true); do
        read -ra fields <"/proc/$pid/stat"
        total=$((total + fields[13] + fields[14]))
    done
    echo "$total"
}
HZ=$(getconf CLK_TCK)

run() { # NAME PID PORT MODE -> one line: NAME MODE rps cpu_us
    local args=() path=/bench/x
    case $4 in
        h1) args=(--h1 -c 50 -m 1) ;;
        h2) args=(-c 50 -m 1) ;;
        h2x100) args=(-c 1 -m 100) ;;
        h2h2) args=(-c 50 -m 1) path=/bench2/x ;;
        h2h2x100) args=(-c 1 -m 100) path=/bench2/x ;;
    esac
    h2load -n 2000 "${args[@]}" "http://127.0.0.1:$3$path" >/dev/null # warm-up
    local before after out rps
    before=$(ticks "$2")
    out=$(h2load -n "$REQUESTS" "${args[@]}" "http://127.0.0.1:$3$path")
    after=$(ticks "$2")
    grep -q "$REQUESTS succeeded, 0 failed, 0 errored" <<<"$out" || die "$1 $4: not every request succeeded: $out"
    rps=$(awk '/^finished in/ { print $4 }' <<<"$out")
    awk -v n="$1" -v m="$4" -v r="$rps" -v t=$((after - before)) -v hz="$HZ" -v q="$REQUESTS" \
        'BEGIN { printf "%-12s %-7s %10.0f req/s %8.1f µs CPU a request\n", n, m, r, t / hz / q * 1e6 }'
}

results=() # "ROUND NAME MODE rps cpu_us", one a run
record() { # ROUND LINE
    results+=("$1 $2")
    echo "$2"
}
for round in $(seq "$ROUNDS"); do
    for mode in ${H2_MODES:-h1 h2 h2x100 h2h2 h2h2x100}; do
        record "$round" "$(run bearer-proxy "$BP_PID" "$BP_PORT" "$mode")"
        ng_port=$NG2_PORT
        [[ $mode == h1 ]] && ng_port=$NG_PORT
        record "$round" "$(run nginx "$NG_PID" "$ng_port" "$mode")"
        if [[ -n $FLOOR && ($mode == h2 || $mode == h2x100) ]]; then
            # shellcheck disable=SC2154 # set by eval above
            record "$round" "$(run floor-channels "$FLOOR_channels_PID" "$FC_PORT" "$mode")"
            # shellcheck disable=SC2154
            record "$round" "$(run floor-connection "$FLOOR_connection_PID" "$FN_PORT" "$mode")"
        fi
    done
done
# The machine's speed drifts from minute to minute on a shared VM (nginx's own figure has moved 1.8 × between runs):
# each proxy's CPU is also divided by nginx's (and bearer-proxy's by the floor's) in the same round, minutes apart at
# most, and the median of those paired ratios is the figure that compares across runs.
printf '%s\n' "${results[@]}" | awk '
    function median(list,   a, n, i, j, t) {
        n = split(list, a, " ")
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    {
        key = $2 " " $3; rps[key] = rps[key] " " $4; cpu[key] = cpu[key] " " $6
        run[$1 " " $2 " " $3] = $6; rounds[$1] = 1; modes[$3] = 1; names[$2] = 1
    }
    END {
        print "medians:"
        for (key in rps) printf "%-28s %10.0f req/s %8.1f µs CPU a request\n", key, median(rps[key]), median(cpu[key]) | "sort"
        close("sort")
        print "medians of the paired ratios (CPU a request, each round against the same round):"
        for (m in modes) for (n in names) {
            if (n == "nginx") continue
            vs_nginx = ""; vs_floor = ""; vs_h1 = ""
            for (r in rounds) {
                if (!((r " " n " " m) in run)) continue
                if ((r " nginx " m) in run) vs_nginx = vs_nginx " " run[r " " n " " m] / run[r " nginx " m]
                if (n == "bearer-proxy" && (r " floor-connection " m) in run)
                    vs_floor = vs_floor " " run[r " " n " " m] / run[r " floor-connection " m]
                if (m != "h1" && (r " bearer-proxy h1") in run)
                    vs_h1 = vs_h1 " " run[r " " n " " m] / run[r " bearer-proxy h1"]
            }
            if (vs_nginx == "") continue
            line = sprintf("%-28s %5.2f × nginx", n " " m, median(vs_nginx))
            if (vs_floor != "") line = line sprintf("   %5.2f × floor-connection", median(vs_floor))
            if (vs_h1 != "") line = line sprintf("   %5.2f × bearer-proxy h1", median(vs_h1))
            print line | "sort"
        }
        close("sort")
    }'
