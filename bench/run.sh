#!/usr/bin/env bash
# bench/run.sh: bearer-proxy side by side with nginx configured as the same reverse proxy, on
# loopback, against one nginx upstream (SPEC section 11). One command on a fresh machine:
#
#     bash bench/run.sh
#
# Prints a Markdown report to stdout and writes it to bench/results/latest.md (git-ignored).
# Progress goes to stderr. This script only orchestrates: it starts the servers, runs the load,
# stops them, and writes raw figures (one line per run) to a directory; bench/report.py turns
# them into statistics, verdicts and the report. Knobs (environment):
#   BENCH_SECONDS=10         length of each measured wrk run
#   BENCH_ROUNDS=5           rounds, alternating nginx-proxy, bearer-proxy (and the peers); medians
#   BENCH_WARMUP=2           seconds of wrk warm-up before every measured run (0: none)
#   BENCH_CONNECTIONS=50     wrk connections (-c); BENCH_THREADS=1 wrk threads (-t)
#   BENCH_STARTUP_RUNS=3     restarts timed for "startup to first proxied response"
#   BENCH_COLD=1             1,000-connection burst on the first (cold) start; 0 skips it
#   BENCH_COLD_CONNECTIONS=1000
#   BENCH_BIG=0              1: also stream BENCH_BIG_MB (1024) MiB down and up through bearer-proxy
#   BENCH_BUILD=readme       readme: build as the README says (`swift build -c release`: Package.swift links the
#                            Swift runtime statically, with lld, and packs relative relocations where glibc has
#                            them); image: build with docker/Dockerfile's flags as well
#   BENCH_SKIP_BUILD=0       1: use .build/release/bearer-proxy as it is
#   BENCH_BINARY=path        use this binary (implies no build)
#   BENCH_PROXY_ARGS="--log-level warning --threads 1"
#                            extra arguments for `bearer-proxy serve`; the default matches nginx's
#                            setup: no per-request access log (nginx runs with `access_log off`)
#                            and one event loop (nginx runs one worker). Set it empty
#                            (BENCH_PROXY_ARGS=) for the defaults (info log, one loop per core)
#   BENCH_START_TIMEOUT=30   seconds to wait for a server to answer
#   BENCH_KEEP_TMP=0         1: keep the temporary directory (configs, logs, wrk output)
#   BENCH_STRICT=0           1: exit 1 when a SPEC target is missed
#   BENCH_RESULTS_DIR=bench/results
#   BENCH_PEERS=1            1: also measure HAProxy, Caddy and Go's httputil.ReverseProxy doing
#                            nginx-proxy's job (installed with apt-get if missing, else skipped
#                            with the reason in the report); 0: nginx and bearer-proxy only
#   BENCH_FLOOR=1            1: also measure bench-floor-proxy (bench/floor, built with
#                            `swift build -c release --product bench-floor-proxy`) doing the same job
#                            with one event loop: `--codec nio` (NIOHTTP1's codecs both sides: the floor
#                            of bearer-proxy's design) and `--codec strict` (the strict byte parser: the
#                            prototype of the next one); 0: skip both
#   BENCH_TLS=1              1: also measure both proxies against https upstreams (nginx with the test CA's
#                            certificate, Tests/BearerProxyTests/Fixtures/tls): one that keeps connections alive, and
#                            one that closes after each answer, so that every request costs the proxy a TLS
#                            handshake (nginx-proxy with its default `proxy_ssl_session_reuse on`, and with it off)
#   BENCH_DPOP=1             1: also measure a DPoP route (RFC 9449: a proof signed per request), a second
#                            bearer-proxy whose client-credentials account gets DPoP-bound tokens from
#                            bench/dpop_issuer.py
#   BENCH_H2=1               1: also run bench/h2.sh (HTTP/2 clients by h2load against nginx's http2 listener, and
#                            the HTTP/2 floor when BENCH_FLOOR=1); needs h2load (Debian's nghttp2-client)
#   BENCH_H2_ROUNDS=3 BENCH_H2_REQUESTS=60000   its rounds and requests a run
#   BENCH_NGINX_WORKERS=1    worker_processes of nginx-proxy (the upstream keeps one), for comparing loop counts:
#                            e.g. BENCH_NGINX_WORKERS=2 BENCH_PROXY_ARGS="--log-level warning --threads 2"

# Backticks in the Markdown report and "$1" in `bash -c '...'` are meant literally:
# shellcheck disable=SC2016
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/.." && pwd)

DURATION=${BENCH_SECONDS:-10}
ROUNDS=${BENCH_ROUNDS:-5}
WARMUP=${BENCH_WARMUP:-2}
CONNS=${BENCH_CONNECTIONS:-50}
THREADS=${BENCH_THREADS:-1}
STARTUP_RUNS=${BENCH_STARTUP_RUNS:-3}
COLD=${BENCH_COLD:-1}
COLD_CONNS=${BENCH_COLD_CONNECTIONS:-1000}
BIG=${BENCH_BIG:-0}
BIG_MB=${BENCH_BIG_MB:-1024}
SKIP_BUILD=${BENCH_SKIP_BUILD:-0}
BUILD=${BENCH_BUILD:-readme}
BINARY=${BENCH_BINARY:-}
read -r -a PROXY_ARGS <<<"${BENCH_PROXY_ARGS-"--log-level warning --threads 1"}"
START_TIMEOUT=${BENCH_START_TIMEOUT:-30}
KEEP_TMP=${BENCH_KEEP_TMP:-0}
STRICT=${BENCH_STRICT:-0}
RESULTS_DIR=${BENCH_RESULTS_DIR:-$REPO_ROOT/bench/results}
PEERS=${BENCH_PEERS:-1}
FLOOR=${BENCH_FLOOR:-1}
TLS=${BENCH_TLS:-1}
DPOP=${BENCH_DPOP:-1}
NGINX_WORKERS=${BENCH_NGINX_WORKERS:-1}
H2=${BENCH_H2:-1}
H2_ROUNDS=${BENCH_H2_ROUNDS:-3}
H2_REQUESTS=${BENCH_H2_REQUESTS:-60000}

UP_PORT=18081   # nginx upstream answering {"ok":true}
NGX_PORT=18082  # nginx as the reverse proxy
BP_PORT=18083   # bearer-proxy
SINK_PORT=18084 # upload sink (BENCH_BIG=1 only)
PEER_NAMES=(haproxy caddy go-httputil) # BENCH_PEERS=1: each does nginx-proxy's job
declare -A PEER_PORT=([haproxy]=18085 [caddy]=18086 [go-httputil]=18087)
declare -A PEER_PACKAGE=([haproxy]=haproxy [caddy]=caddy [go-httputil]=golang-go)
FLOOR_NAMES=(floor-nio floor-strict) # BENCH_FLOOR=1: bench-floor-proxy --codec nio / strict
declare -A FLOOR_PORT=([floor-nio]=18088 [floor-strict]=18089)
TLS_UP_PORT=18100       # nginx upstream over TLS, connections kept alive (BENCH_TLS=1)
TLS_CLOSE_PORT=18101    # nginx upstream over TLS, closing after each answer (BENCH_TLS=1)
DPOP_BP_PORT=18102      # bearer-proxy with a DPoP account (BENCH_DPOP=1)
DPOP_ISSUER_PORT=18103  # bench/dpop_issuer.py (BENCH_DPOP=1)
TLS_FIXTURES=$REPO_ROOT/Tests/BearerProxyTests/Fixtures/tls
SCOPE="api://bench/Data.Read"
TOKEN_LEN=800 # length of nginx's static dummy token

declare -A PROCS=() # name -> pid of everything this script started
declare -A LOGS=()  # name -> its log, shown when it dies
TMP=""
RAW="" # raw figures for bench/report.py: facts.tsv, runs.tsv, wrk's output

log() { printf '[bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() {
    log "ERROR: $*"
    exit 1
}

# --- processes ---------------------------------------------------------------------------------

alive() { # PID: running and not a zombie
    local line
    { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
    line=${line##*) }
    [[ ${line:0:1} != Z ]]
}

children_of() { # PID -> direct child PIDs, one a line
    local f line ppid
    for f in /proc/[0-9]*/stat; do
        { read -r line <"$f"; } 2>/dev/null || continue
        read -r _ ppid _ <<<"${line##*) }"
        if [[ $ppid == "$1" ]]; then
            f=${f#/proc/}
            echo "${f%/stat}"
        fi
    done
}

STOP_RC=0
stop_pid() { # PID NAME: SIGTERM, up to 5 s, then SIGKILL; reaps it if it is our child
    local pid=$1 name=$2 i
    STOP_RC=0
    if alive "$pid"; then
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 100; i++)); do
            alive "$pid" || break
            sleep 0.05
        done
        if alive "$pid"; then
            log "$name (pid $pid) still running 5 s after SIGTERM; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    wait "$pid" 2>/dev/null || STOP_RC=$?
}

start_time() { # PID -> its start time (field 22 of /proc/PID/stat), to tell a reused PID apart
    local line
    local -a f
    { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 0
    read -r -a f <<<"${line##*) }"
    echo "${f[19]}"
}

declare -A CHILD_START=() # "NAME/PID" -> start time of a child recorded by track_children
track_children() { # NAME: remember the current children (nginx workers) of a tracked process, so
    # that they are stopped even if their parent dies first and they are re-parented
    local name=$1 k
    for k in $(children_of "${PROCS[$name]}"); do CHILD_START[$name/$k]=$(start_time "$k"); done
}

stop_proc() { # NAME: stop a tracked process, then its children (current and recorded)
    local name=$1 pid key k rc
    local -a kids=()
    pid=${PROCS[$name]:-}
    [[ -n $pid ]] || return 0
    mapfile -t kids < <(children_of "$pid")
    for key in "${!CHILD_START[@]}"; do
        if [[ ${key%/*} == "$name" ]]; then
            k=${key##*/}
            # only if it is still the same process (PIDs can be reused)
            if [[ $(start_time "$k") == "${CHILD_START[$key]}" ]]; then kids+=("$k"); fi
            unset "CHILD_START[$key]"
        fi
    done
    stop_pid "$pid" "$name"
    rc=$STOP_RC
    for k in "${kids[@]}"; do
        if alive "$k"; then stop_pid "$k" "$name child"; fi
    done
    STOP_RC=$rc
    unset "PROCS[$name]"
}

cleanup() {
    local rc=$? name
    trap - EXIT INT TERM
    for name in "${!PROCS[@]}"; do stop_proc "$name"; done
    if [[ -n $TMP && -d $TMP ]]; then
        if [[ $KEEP_TMP == 1 ]]; then
            log "kept $TMP"
        else
            rm -rf -- "$TMP"
        fi
    fi
    if ((rc != 0)); then log "exit status $rc (set BENCH_KEEP_TMP=1 to keep configs and logs)"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

run_child() { # NAME OUT ERR CMD...: run in the background with stdout to OUT and stderr to ERR
    # (empty: to OUT), tracked, and wait for it, so that a signal stops it at once. The redirections
    # are here, not on the call, so that a trap running meanwhile still logs to the real stderr.
    local name=$1 out=$2 err=$3 pid rc=0
    shift 3
    if [[ -n $err ]]; then "$@" >"$out" 2>"$err" & else "$@" >"$out" 2>&1 & fi
    pid=$!
    PROCS[$name]=$pid
    wait "$pid" || rc=$?
    unset "PROCS[$name]"
    return "$rc"
}

now_us() { # sets REPLY to microseconds since the epoch, without forking
    if [[ -n ${EPOCHREALTIME:-} ]]; then
        REPLY=${EPOCHREALTIME//[!0-9]/}
    else
        REPLY=$(($(date +%s%N) / 1000))
    fi
}

cpu_ticks() { # PID -> utime+stime (clock ticks) of PID and its direct children
    local total=0 p line kids
    local -a f
    mapfile -t kids < <(children_of "$1")
    for p in "$1" "${kids[@]}"; do
        { read -r line <"/proc/$p/stat"; } 2>/dev/null || continue
        read -r -a f <<<"${line##*) }"
        total=$((total + f[11] + f[12])) # fields 14 and 15 of /proc/PID/stat
    done
    echo "$total"
}

vm_kib() { # PID FIELD (VmRSS, VmHWM) -> KiB
    awk -v k="$2:" '$1 == k { print $2; found = 1 } END { if (!found) print "" }' "/proc/$1/status" 2>/dev/null || true
}

fact() { # KEY VALUE...: one raw figure for bench/report.py (a key may repeat)
    local key=$1 value
    shift
    value="$*"
    printf '%s\t%s\n' "$key" "${value//[$'\t\n']/ }" >>"$RAW/facts.tsv"
}

log_tail() { # FILE LABEL
    if [[ -s $1 ]]; then
        log "last lines of $2 ($1):"
        tail -n 30 -- "$1" | sed 's/^/    | /' >&2
    else
        log "$2 is empty ($1)"
    fi
}

port_free() { # PORT: nothing answers on 127.0.0.1:PORT (curl exit 7 = connection refused)
    local rc=0
    curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$1/" 2>/dev/null || rc=$?
    ((rc == 7))
}

WHY="" # why the last http_ready / probe_* failed
http_ready() { # URL NAME PID LOGFILE: bounded readiness poll; 1 (WHY, the log tail) on failure
    local url=$1 name=$2 pid=$3 logfile=$4 deadline rc
    now_us
    deadline=$((REPLY + START_TIMEOUT * 1000000))
    until curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null; do
        if ! alive "$pid"; then
            rc=0
            wait "$pid" 2>/dev/null || rc=$?
            log_tail "$logfile" "$name log"
            WHY="$name exited (status $rc) before $url answered"
            return 1
        fi
        now_us
        if ((REPLY > deadline)); then
            log_tail "$logfile" "$name log"
            WHY="$name did not answer $url within ${START_TIMEOUT}s"
            return 1
        fi
        sleep 0.05
    done
}
wait_http() { http_ready "$@" || die "$WHY"; } # URL NAME PID LOGFILE: dies on failure

# --- checks and tools --------------------------------------------------------------------------

for knob in DURATION ROUNDS CONNS THREADS STARTUP_RUNS COLD_CONNS BIG_MB START_TIMEOUT NGINX_WORKERS; do
    [[ ${!knob} =~ ^[1-9][0-9]*$ ]] || die "$knob must be a positive integer (got '${!knob}')"
done
[[ $WARMUP =~ ^[0-9]+$ ]] || die "BENCH_WARMUP must be a non-negative integer (got '$WARMUP')"
[[ $PEERS =~ ^[01]$ ]] || die "BENCH_PEERS must be 0 or 1 (got '$PEERS')"
[[ $FLOOR =~ ^[01]$ ]] || die "BENCH_FLOOR must be 0 or 1 (got '$FLOOR')"
[[ $TLS =~ ^[01]$ ]] || die "BENCH_TLS must be 0 or 1 (got '$TLS')"
[[ $DPOP =~ ^[01]$ ]] || die "BENCH_DPOP must be 0 or 1 (got '$DPOP')"
[[ $H2 =~ ^[01]$ ]] || die "BENCH_H2 must be 0 or 1 (got '$H2')"
[[ $(uname -s) == Linux ]] || die "this benchmark reads /proc; it runs on Linux only"

find_tool() { # NAME [DIR...] -> its path (PATH first, then the DIRs), or nothing
    local dir
    if command -v "$1"; then return 0; fi
    for dir in "${@:2}"; do
        if [[ -x $dir/$1 ]]; then
            echo "$dir/$1"
            return 0
        fi
    done
    return 0
}
find_nginx() { NGINX=$(find_tool nginx /usr/sbin); }
find_nginx
missing=()
[[ -n $NGINX ]] || missing+=(nginx)
command -v wrk >/dev/null || missing+=(wrk)
command -v curl >/dev/null || missing+=(curl)
command -v python3 >/dev/null || missing+=(python3) # bench/report.py; the upload sink (BENCH_BIG=1)

SUDO=()
APT_UPDATED=0
apt_install() { # PKG...: apt-get install them (apt-get update first, once per run)
    if ((APT_UPDATED == 0)); then
        "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || return 1
        APT_UPDATED=1
    fi
    log "installing $* with apt-get"
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}
can_apt=0
if command -v apt-get >/dev/null; then
    if ((EUID == 0)); then
        can_apt=1
    elif command -v sudo >/dev/null; then
        can_apt=1
        SUDO=(sudo)
    fi
fi

if ((${#missing[@]})); then
    command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get here: install them"
    ((can_apt)) || die "missing ${missing[*]}: run as root or install them"
    apt_install "${missing[@]}" || die "apt-get install ${missing[*]} failed"
    find_nginx
    [[ -n $NGINX ]] || die "nginx still not found after apt-get install"
    for tool in wrk curl python3; do command -v "$tool" >/dev/null || die "$tool still not found after apt-get install"; done
fi

declare -A PEER_TOOL=()    # peer -> path of its program (haproxy, caddy, go)
declare -A PEER_SKIPPED=() # peer -> why it is not measured (the report says so)
find_peer_tools() {
    PEER_TOOL[haproxy]=$(find_tool haproxy /usr/sbin)
    PEER_TOOL[caddy]=$(find_tool caddy)
    PEER_TOOL[go-httputil]=$(find_tool go /usr/lib/go/bin)
}
peer_skip() { # PEER REASON
    PEER_SKIPPED[$1]=$2
    log "$1 will not be measured: $2"
}
if [[ $PEERS == 1 ]]; then
    find_peer_tools
    # One package at a time: a distribution without one of them still gets the others.
    for peer in "${PEER_NAMES[@]}"; do
        [[ -z ${PEER_TOOL[$peer]} ]] || continue
        pkg=${PEER_PACKAGE[$peer]}
        if ((can_apt)) && apt_install "$pkg"; then find_peer_tools; fi
        if [[ -n ${PEER_TOOL[$peer]} ]]; then continue; fi
        if ((can_apt)); then
            peer_skip "$peer" "not installed, and apt-get install $pkg failed (not a package here?)"
        else
            peer_skip "$peer" "not installed, and no apt-get (as root or with sudo) to install $pkg"
        fi
    done
fi
CLK_TCK=$(getconf CLK_TCK)

# More file descriptors for the 1,000-connection burst (soft limit up to the hard one).
hard_nofile=$(ulimit -Hn)
if [[ $hard_nofile == unlimited ]] || ((hard_nofile > 65536)); then hard_nofile=65536; fi
if (($(ulimit -Sn) < hard_nofile)); then ulimit -Sn "$hard_nofile" || true; fi

# --- bearer-proxy binary -----------------------------------------------------------------------

# The image's build flags (docker/Dockerfile's build stage; Tests/docker/lint.py checks that they agree). The floor is
# built with the same flags as bearer-proxy: one configuration, so NIO is compiled once and both are linked alike.
RELEASE_FLAGS=(--static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)

case $BUILD in
readme) BUILD_FLAGS=() BUILD_NAME="the README's build" ;;
image) BUILD_FLAGS=("${RELEASE_FLAGS[@]}") BUILD_NAME="the image's build" ;;
*) die "BENCH_BUILD: expected readme or image, got $BUILD" ;;
esac

if [[ -n $BINARY ]]; then
    BIN=$BINARY
elif [[ $SKIP_BUILD == 1 ]]; then
    BIN=$REPO_ROOT/.build/release/bearer-proxy
else
    command -v swift >/dev/null ||
        die "swift not found: install Swift 6, or set BENCH_SKIP_BUILD=1 / BENCH_BINARY=path"
    log "building bearer-proxy, $BUILD_NAME (swift build -c release --product bearer-proxy ${BUILD_FLAGS[*]})"
    (cd "$REPO_ROOT" && swift build -c release --product bearer-proxy "${BUILD_FLAGS[@]}") >&2 ||
        die "swift build failed"
    BIN="$(cd "$REPO_ROOT" && swift build -c release "${BUILD_FLAGS[@]}" --show-bin-path)/bearer-proxy"
fi
FLOOR_SKIPPED="" # why bench-floor-proxy is not measured (the report says so)
FLOOR_BIN=$(dirname -- "$BIN")/bench-floor-proxy
if [[ $FLOOR == 1 ]]; then
    if [[ -z $BINARY && $SKIP_BUILD != 1 ]]; then
        # Same scratch path and configuration as bearer-proxy's build, so NIO is compiled once.
        log "building bench-floor-proxy (swift build -c release --product bench-floor-proxy ${BUILD_FLAGS[*]})"
        if ! (cd "$REPO_ROOT" && swift build -c release --product bench-floor-proxy "${BUILD_FLAGS[@]}") >&2; then
            FLOOR_SKIPPED="swift build -c release --product bench-floor-proxy ${BUILD_FLAGS[*]} failed"
        fi
    fi
    if [[ -z $FLOOR_SKIPPED && ! -x $FLOOR_BIN ]]; then
        FLOOR_SKIPPED="no bench-floor-proxy beside the bearer-proxy binary ($FLOOR_BIN)"
    fi
    if [[ -n $FLOOR_SKIPPED ]]; then log "the floor will not be measured: $FLOOR_SKIPPED"; fi
fi
[[ -x $BIN ]] || die "bearer-proxy binary not found or not executable: $BIN (build it with
    swift build -c release --product bearer-proxy, or drop BENCH_SKIP_BUILD / BENCH_BINARY)"

ports=("$UP_PORT" "$NGX_PORT" "$BP_PORT")
if [[ $BIG == 1 ]]; then ports+=("$SINK_PORT"); fi
if [[ $TLS == 1 ]]; then ports+=("$TLS_UP_PORT" "$TLS_CLOSE_PORT"); fi
if [[ $DPOP == 1 ]]; then ports+=("$DPOP_BP_PORT" "$DPOP_ISSUER_PORT"); fi
if [[ $PEERS == 1 ]]; then
    for peer in "${PEER_NAMES[@]}"; do
        if [[ -z ${PEER_SKIPPED[$peer]:-} ]]; then ports+=("${PEER_PORT[$peer]}"); fi
    done
fi
if [[ $FLOOR == 1 && -z $FLOOR_SKIPPED ]]; then
    for name in "${FLOOR_NAMES[@]}"; do ports+=("${FLOOR_PORT[$name]}"); done
fi
for port in "${ports[@]}"; do
    port_free "$port" || die "127.0.0.1:$port is already in use; stop whatever listens there"
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/bearer-proxy-bench.XXXXXX")
log "working directory $TMP"
RAW=$TMP/raw
mkdir "$RAW"
: >"$RAW/facts.tsv"
fact loadavg "$(cut -d' ' -f1-3 /proc/loadavg)"
fact seconds "$DURATION"
fact rounds "$ROUNDS"
fact warmup "$WARMUP"
fact connections "$CONNS"
fact threads "$THREADS"
fact startup_runs "$STARTUP_RUNS"
fact cold "$COLD"
fact cold_connections "$COLD_CONNS"
fact big "$BIG"
fact big_mb "$BIG_MB"
fact strict "$STRICT"
fact peers "$PEERS"
fact floor "$FLOOR"
fact tls "$TLS"
fact dpop "$DPOP"
fact nginx_workers "$NGINX_WORKERS"

# --- nginx upstream and nginx reverse proxy ----------------------------------------------------

NGINX_HAS_E=0
if "$NGINX" -h 2>&1 | grep -- '-e filename' >/dev/null; then NGINX_HAS_E=1; fi
NGINX_USER=""
if ((EUID == 0)); then NGINX_USER="user $(id -un) $(id -gn);"; fi # workers can read $TMP

nginx_main() { # DIR [WORKERS]: the part shared by both nginx configs
    cat <<EOF
$NGINX_USER
worker_processes ${2:-1};
daemon off;
master_process on;
pid "$1/nginx.pid";
error_log "$1/error.log" warn;
worker_rlimit_nofile 20000;
events { worker_connections 8192; }
EOF
}

nginx_http_common() { # DIR
    cat <<EOF
    access_log off;
    client_body_temp_path "$1/client_body";
    proxy_temp_path "$1/proxy";
    fastcgi_temp_path "$1/fastcgi";
    uwsgi_temp_path "$1/uwsgi";
    scgi_temp_path "$1/scgi";
    sendfile on;
    tcp_nopush on;
    # nginx closes a keep-alive connection after 1,000 requests by default; lift that so neither
    # proxy is forced to reconnect (to the client or to the upstream) during a run.
    keepalive_requests 1000000;
    keepalive_timeout 75s;
EOF
}

start_nginx() { # NAME DIR
    local name=$1 dir=$2
    local -a args=(-p "$dir/" -c "$dir/nginx.conf")
    if ((NGINX_HAS_E)); then args+=(-e "$dir/error.log"); fi
    "$NGINX" "${args[@]}" </dev/null >>"$dir/stdout.log" 2>&1 &
    PROCS[$name]=$!
}

b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
make_dummy_token() { # a JWT-shaped static token, exactly TOKEN_LEN characters
    local header payload sig i
    header=$(printf '%s' '{"alg":"RS256","typ":"JWT","kid":"bench-static-key"}' | b64url)
    payload=$(printf '%s' '{"aud":"api://bench","iss":"https://login.microsoftonline.com/00000000-0000-0000-0000-000000000000/v2.0","iat":1700000000,"nbf":1700000000,"exp":1700003600,"azp":"11111111-1111-1111-1111-111111111111","azpacr":"0","name":"Bench User","oid":"22222222-2222-2222-2222-222222222222","preferred_username":"bench@example.com","scp":"Data.Read","sub":"bench-subject","tid":"00000000-0000-0000-0000-000000000000","ver":"2.0"}' | b64url)
    sig=$(for i in 1 2 3 4 5 6 7 8; do printf 'bench-%s' "$i" | sha256sum | cut -c1-64; done | tr -d '\n')
    sig=${sig:0:$((TOKEN_LEN - ${#header} - ${#payload} - 2))}
    printf '%s.%s.%s' "$header" "$payload" "$sig"
}
DUMMY_TOKEN=$(make_dummy_token)

UP_DIR=$TMP/nginx-upstream
NGX_DIR=$TMP/nginx-proxy
TLS_DIR=$TMP/tls
mkdir -p "$UP_DIR" "$NGX_DIR" "$TMP/www/files"
chmod 0755 "$TMP" "$TMP/www" "$TMP/www/files"
if [[ $TLS == 1 ]]; then
    # Copies the workers (another user when this runs as root) can read.
    mkdir -m 0755 "$TLS_DIR"
    cp "$TLS_FIXTURES/ca.pem" "$TLS_FIXTURES/server.pem" "$TLS_FIXTURES/server-key.pem" "$TLS_DIR/"
    chmod 0644 "$TLS_DIR"/*.pem
fi

{
    nginx_main "$UP_DIR"
    echo "http {"
    nginx_http_common "$UP_DIR"
    cat <<EOF
    server {
        listen 127.0.0.1:$UP_PORT;
        location / {
            default_type application/json;
            return 200 '{"ok":true}';
        }
        # Diagnostic: echoes the Authorization header the upstream received.
        location = /auth-echo {
            default_type text/plain;
            return 200 "\$http_authorization";
        }
        # BENCH_BIG=1: the large download.
        location /files/ {
            root "$TMP/www";
        }
    }
EOF
    if [[ $TLS == 1 ]]; then
        # The same answers over TLS: one server keeps its connections, the other closes after each answer, so
        # each request through it costs its proxy a TCP connection and a TLS handshake. Session tickets (TLS 1.3)
        # and the session cache (TLS 1.2) let a client that offers a session resume it.
        for tls_server in "$TLS_UP_PORT 75s" "$TLS_CLOSE_PORT 0"; do
            read -r port timeout <<<"$tls_server"
            cat <<EOF
    server {
        listen 127.0.0.1:$port ssl;
        ssl_certificate "$TLS_DIR/server.pem";
        ssl_certificate_key "$TLS_DIR/server-key.pem";
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:bench_tls_$port:1m;
        ssl_session_tickets on;
        keepalive_timeout $timeout;
        location / {
            default_type application/json;
            return 200 '{"ok":true}';
        }
        location = /auth-echo {
            default_type text/plain;
            return 200 "\$http_authorization";
        }
    }
EOF
        done
    fi
    echo "}"
} >"$UP_DIR/nginx.conf"

{
    nginx_main "$NGX_DIR" "$NGINX_WORKERS"
    echo "http {"
    nginx_http_common "$NGX_DIR"
    cat <<EOF
    upstream bench_upstream {
        server 127.0.0.1:$UP_PORT;
        keepalive 64;
        keepalive_requests 1000000;
        keepalive_timeout 75s;
    }
    server {
        listen 127.0.0.1:$NGX_PORT;
        location /bench/ {
            proxy_pass http://bench_upstream/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Authorization "Bearer $DUMMY_TOKEN";
        }
EOF
    if [[ $TLS == 1 ]]; then
        # The upstream's certificate checked as bearer-proxy checks it (the test CA, the name in it). Sessions
        # are resumed by default (`proxy_ssl_session_reuse on`); /tlsclose-noreuse/ turns that off.
        for tls_location in "tls bench_tls on" "tlsclose bench_tls_close on" "tlsclose-noreuse bench_tls_close off"; do
            read -r path upstream reuse <<<"$tls_location"
            cat <<EOF
        location /$path/ {
            proxy_pass https://$upstream/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Authorization "Bearer $DUMMY_TOKEN";
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate "$TLS_DIR/ca.pem";
            proxy_ssl_name localhost;
            proxy_ssl_protocols TLSv1.2 TLSv1.3;
            proxy_ssl_session_reuse $reuse;
        }
EOF
        done
    fi
    echo "    }"
    if [[ $TLS == 1 ]]; then
        cat <<EOF
    upstream bench_tls {
        server 127.0.0.1:$TLS_UP_PORT;
        keepalive 64;
        keepalive_requests 1000000;
        keepalive_timeout 75s;
    }
    upstream bench_tls_close {
        server 127.0.0.1:$TLS_CLOSE_PORT;
    }
EOF
    fi
    echo "}"
} >"$NGX_DIR/nginx.conf"

log "starting nginx upstream on 127.0.0.1:$UP_PORT and nginx reverse proxy on 127.0.0.1:$NGX_PORT"
start_nginx nginx-upstream "$UP_DIR"
start_nginx nginx-proxy "$NGX_DIR"
wait_http "http://127.0.0.1:$UP_PORT/" "nginx upstream" "${PROCS[nginx-upstream]}" "$UP_DIR/error.log"
wait_http "http://127.0.0.1:$NGX_PORT/bench/x" "nginx proxy" "${PROCS[nginx-proxy]}" "$NGX_DIR/error.log"
track_children nginx-upstream
track_children nginx-proxy
LOGS[nginx-direct]=$UP_DIR/error.log
LOGS[nginx-proxy]=$NGX_DIR/error.log

# --- peers: HAProxy, Caddy and Go's httputil.ReverseProxy doing nginx-proxy's job --------------

start_peer() { # PEER: start it in the background (no wait), tracked, its output to LOGS[PEER]
    local peer=$1 dir=$TMP/$1
    LOGS[$peer]=$dir/out.log
    case $peer in
    haproxy)
        "${PEER_TOOL[haproxy]}" -db -f "$dir/haproxy.cfg" </dev/null >"$dir/out.log" 2>&1 &
        ;;
    caddy)
        GOMAXPROCS=1 XDG_CONFIG_HOME=$dir XDG_DATA_HOME=$dir \
            "${PEER_TOOL[caddy]}" run --config "$dir/Caddyfile" --adapter caddyfile </dev/null >"$dir/out.log" 2>&1 &
        ;;
    go-httputil)
        BENCH_TOKEN=$DUMMY_TOKEN GOMAXPROCS=1 \
            "$dir/go_httputil_proxy" "127.0.0.1:${PEER_PORT[$peer]}" "127.0.0.1:$UP_PORT" </dev/null >"$dir/out.log" 2>&1 &
        ;;
    esac
    PROCS[$peer]=$!
}

peer_version() { # PEER -> the version its program prints
    case $1 in
    haproxy) "${PEER_TOOL[haproxy]}" -v | sed -n '1s/^HAProxy version \([^ ]*\).*/\1/p' ;;
    caddy) "${PEER_TOOL[caddy]}" version | sed -n '1{s/ .*//;p;}' ;;
    go-httputil) "${PEER_TOOL[go-httputil]}" env GOVERSION ;;
    esac
}

declare -A PEER_AUTH_LEN=()
peer_works() { # PEER: 1 (WHY) unless it answers {"ok":true} and the upstream gets nginx-proxy's
    # Authorization header, byte for byte
    local url="http://127.0.0.1:${PEER_PORT[$1]}/bench" body
    body=$(curl -fsS --max-time 10 "$url/x" 2>&1) || { WHY="GET $url/x failed: $body"; return 1; }
    [[ $body == '{"ok":true}' ]] || { WHY="GET $url/x answered '${body:0:200}', expected {\"ok\":true}"; return 1; }
    body=$(curl -fsS --max-time 10 "$url/auth-echo" 2>&1) || { WHY="GET $url/auth-echo failed: $body"; return 1; }
    if [[ $body != "Bearer $DUMMY_TOKEN" ]]; then
        WHY="the upstream did not get nginx-proxy's Authorization header via $url/auth-echo (got ${#body} chars: '${body:0:40}')"
        return 1
    fi
    PEER_AUTH_LEN[$1]=${#body}
}

ACTIVE_PEERS=() # the peers measured, in PEER_NAMES order
if [[ $PEERS == 1 ]]; then
    for peer in "${PEER_NAMES[@]}"; do mkdir -p "$TMP/$peer"; done
    # Each as nginx-proxy: 127.0.0.1 only, one worker, no access log, /bench/x -> the upstream's /x,
    # the same static Authorization header, idle upstream connections kept for reuse (nginx:
    # keepalive 64, 75 s). HAProxy logs nothing without a `log` line; Caddy has no access log
    # without a `log` directive; the Go proxy logs only errors.

    # HAProxy refuses to start when maxconn needs more file descriptors (2 a connection) than it
    # may open.
    hap_maxconn=8192
    if [[ $(ulimit -Sn) =~ ^[0-9]+$ ]] && (((hap_nofile = ($(ulimit -Sn) - 100) / 2) < hap_maxconn)); then hap_maxconn=$hap_nofile; fi
    cat >"$TMP/haproxy/haproxy.cfg" <<EOF
global
    nbthread 1
    maxconn $hap_maxconn

defaults
    mode http
    timeout connect 5s
    timeout client 75s
    timeout server 75s
    timeout http-keep-alive 75s

frontend bench
    bind 127.0.0.1:${PEER_PORT[haproxy]}
    http-request replace-path ^/bench(/.*) \1
    http-request set-header Authorization "Bearer $DUMMY_TOKEN"
    default_backend upstream

backend upstream
    # Idle upstream connections serve any client connection, as nginx's keepalive pool does.
    http-reuse always
    server upstream 127.0.0.1:$UP_PORT
EOF
    # Tabs, as `caddy fmt` writes them (Caddy warns about anything else). HTTP/1.1 only, as the rest.
    cat >"$TMP/caddy/Caddyfile" <<EOF
{
	admin off
	auto_https off
	servers {
		protocols h1
	}
}

http://127.0.0.1:${PEER_PORT[caddy]} {
	bind 127.0.0.1
	handle_path /bench/* {
		reverse_proxy 127.0.0.1:$UP_PORT {
			header_up Authorization "Bearer $DUMMY_TOKEN"
			# nginx-proxy sends none of these
			header_up -X-Forwarded-For
			header_up -X-Forwarded-Proto
			header_up -X-Forwarded-Host
			transport http {
				keepalive 75s
				keepalive_idle_conns_per_host 64
			}
		}
	}
}
EOF
    if [[ -z ${PEER_SKIPPED[go-httputil]:-} ]]; then
        # Standard library only: no module download. Built outside any module (env -C), with its
        # build cache in the temporary directory.
        log "building bench/go_httputil_proxy.go with ${PEER_TOOL[go-httputil]}"
        gdir=$TMP/go-httputil
        if ! run_child go-build "$gdir/build.log" "" env -C "$gdir" GOCACHE="$gdir/cache" GOPATH="$gdir/gopath" \
            GOFLAGS= GOTOOLCHAIN=local CGO_ENABLED=0 "${PEER_TOOL[go-httputil]}" build \
            -o "$gdir/go_httputil_proxy" "$SCRIPT_DIR/go_httputil_proxy.go"; then
            log_tail "$gdir/build.log" "go build log"
            peer_skip go-httputil "go build of bench/go_httputil_proxy.go failed"
        fi
    fi
    for peer in "${PEER_NAMES[@]}"; do
        [[ -z ${PEER_SKIPPED[$peer]:-} ]] || continue
        log "starting $peer on 127.0.0.1:${PEER_PORT[$peer]}"
        start_peer "$peer"
        if ! http_ready "http://127.0.0.1:${PEER_PORT[$peer]}/bench/x" "$peer" "${PROCS[$peer]}" "${LOGS[$peer]}" ||
            ! peer_works "$peer"; then
            stop_proc "$peer"
            peer_skip "$peer" "$WHY"
            continue
        fi
        track_children "$peer"
        ACTIVE_PEERS+=("$peer")
        log "$peer answers; the upstream gets nginx-proxy's Authorization header (${PEER_AUTH_LEN[$peer]} chars)"
    done
    for peer in "${PEER_NAMES[@]}"; do
        if [[ -n ${PEER_SKIPPED[$peer]:-} ]]; then
            fact peer_skipped "$peer: ${PEER_SKIPPED[$peer]}"
        else
            fact peer "$peer"
            fact "auth_len:$peer" "${PEER_AUTH_LEN[$peer]}"
            fact "version:$peer" "$(peer_version "$peer")"
        fi
    done
fi

# --- the floor and the prototype: bench-floor-proxy doing the same job ------------------------

ACTIVE_FLOOR=() # the variants measured, in FLOOR_NAMES order
if [[ $FLOOR == 1 ]]; then
    if [[ -n $FLOOR_SKIPPED ]]; then
        fact floor_skipped "$FLOOR_SKIPPED"
    else
        for name in "${FLOOR_NAMES[@]}"; do
            port=${FLOOR_PORT[$name]}
            mkdir -p "$TMP/$name"
            LOGS[$name]=$TMP/$name/out.log
            log "starting $name on 127.0.0.1:$port"
            # The token in the environment, not on the command line; /bench stripped as bearer-proxy's route does.
            BENCH_TOKEN=$DUMMY_TOKEN "$FLOOR_BIN" --codec "${name#floor-}" --listen "127.0.0.1:$port" \
                --upstream "127.0.0.1:$UP_PORT" --threads 1 --strip-prefix /bench </dev/null >"${LOGS[$name]}" 2>&1 &
            PROCS[$name]=$!
            PEER_PORT[$name]=$port # peer_works checks it as it checks a peer
            if ! http_ready "http://127.0.0.1:$port/bench/x" "$name" "${PROCS[$name]}" "${LOGS[$name]}" ||
                ! peer_works "$name"; then
                stop_proc "$name"
                die "$name does not do nginx-proxy's job: $WHY"
            fi
            ACTIVE_FLOOR+=("$name")
            fact floor_target "$name"
            fact "auth_len:$name" "${PEER_AUTH_LEN[$name]}"
            log "$name answers; the upstream gets nginx-proxy's Authorization header (${PEER_AUTH_LEN[$name]} chars)"
        done
    fi
fi

# --- bearer-proxy ------------------------------------------------------------------------------

STATE_DIR=$TMP/state
BP_CONF=$TMP/bearer-proxy.json
BP_LOG=$TMP/bearer-proxy.log
LOGS[bearer-proxy]=$BP_LOG
mkdir -m 0700 "$STATE_DIR"
sink_route=""
if [[ $BIG == 1 ]]; then
    sink_route=",
    { \"prefix\": \"/sink\", \"upstream\": \"http://127.0.0.1:$SINK_PORT\", \"scopes\": [\"$SCOPE\"] }"
fi
tls_routes=""
if [[ $TLS == 1 ]]; then
    tls_routes=",
    { \"prefix\": \"/tls\", \"upstream\": \"https://127.0.0.1:$TLS_UP_PORT\", \"scopes\": [\"$SCOPE\"],
      \"tls\": { \"caFile\": \"$TLS_DIR/ca.pem\" } },
    { \"prefix\": \"/tlsclose\", \"upstream\": \"https://127.0.0.1:$TLS_CLOSE_PORT\", \"scopes\": [\"$SCOPE\"],
      \"tls\": { \"caFile\": \"$TLS_DIR/ca.pem\" } }"
fi
cat >"$BP_CONF" <<EOF
{
  "listen": "127.0.0.1:$BP_PORT",
  "account": { "flow": "dev" },
  "routes": [
    { "prefix": "/bench", "upstream": "http://127.0.0.1:$UP_PORT", "scopes": ["$SCOPE"] }$sink_route$tls_routes
  ]
}
EOF

BP_PID=""
start_bp() { # start bearer-proxy in the background (no wait)
    printf -- '--- bench: starting %s serve --config %s %s\n' "$BIN" "$BP_CONF" "${PROXY_ARGS[*]}" >>"$BP_LOG"
    XDG_STATE_HOME=$STATE_DIR "$BIN" serve --config "$BP_CONF" "${PROXY_ARGS[@]}" </dev/null >>"$BP_LOG" 2>&1 &
    BP_PID=$!
    PROCS[bearer-proxy]=$BP_PID
}
stop_bp() {
    stop_proc bearer-proxy
    fact exit_on_term "$STOP_RC"
    BP_PID=""
}
bp_ready() { # wait for /-/health
    wait_http "http://127.0.0.1:$BP_PORT/-/health" bearer-proxy "$BP_PID" "$BP_LOG"
    track_children bearer-proxy
}
bp_check_alive() { # CONTEXT
    if ! alive "$BP_PID"; then
        log_tail "$BP_LOG" "bearer-proxy log"
        die "bearer-proxy died $1"
    fi
}

log "starting bearer-proxy on 127.0.0.1:$BP_PORT ($BIN)"
start_bp
bp_ready

# --- BENCH_DPOP=1: a second bearer-proxy whose route sends DPoP-bound tokens -------------------

DPOP_PID=""
if [[ $DPOP == 1 ]]; then
    DPOP_DIR=$TMP/dpop
    mkdir -m 0700 "$DPOP_DIR" "$DPOP_DIR/state"
    LOGS[dpop-issuer]=$DPOP_DIR/issuer.log
    LOGS[bearer-proxy-dpop]=$DPOP_DIR/bearer-proxy.log
    python=$(python3 -c 'import sys; print(sys.executable)')
    "$python" "$SCRIPT_DIR/dpop_issuer.py" "$DPOP_ISSUER_PORT" </dev/null >"${LOGS[dpop-issuer]}" 2>&1 &
    PROCS[dpop-issuer]=$!
    wait_http "http://127.0.0.1:$DPOP_ISSUER_PORT/.well-known/openid-configuration" "DPoP issuer" \
        "${PROCS[dpop-issuer]}" "${LOGS[dpop-issuer]}"
    cat >"$DPOP_DIR/routes.json" <<EOF
{
  "listen": "127.0.0.1:$DPOP_BP_PORT",
  "account": { "flow": "client-credentials", "issuer": "http://127.0.0.1:$DPOP_ISSUER_PORT", "clientId": "bench",
               "clientSecretEnv": "BENCH_DPOP_SECRET", "tokenType": "dpop" },
  "routes": [
    { "prefix": "/bench", "upstream": "http://127.0.0.1:$UP_PORT", "scopes": ["api://bench/.default"] }
  ]
}
EOF
    log "starting bearer-proxy with a DPoP account on 127.0.0.1:$DPOP_BP_PORT"
    BENCH_DPOP_SECRET=bench XDG_STATE_HOME=$DPOP_DIR/state "$BIN" serve --config "$DPOP_DIR/routes.json" \
        "${PROXY_ARGS[@]}" </dev/null >>"${LOGS[bearer-proxy-dpop]}" 2>&1 &
    DPOP_PID=$!
    PROCS[bearer-proxy-dpop]=$DPOP_PID
    wait_http "http://127.0.0.1:$DPOP_BP_PORT/-/health" "bearer-proxy (DPoP)" "$DPOP_PID" "${LOGS[bearer-proxy-dpop]}"
    track_children bearer-proxy-dpop
fi

# --- correctness checks before measuring -------------------------------------------------------

check_body() { # NAME URL
    local body
    body=$(curl -fsS --max-time 10 "$2") || die "$1: GET $2 failed"
    [[ $body == '{"ok":true}' ]] || die "$1: GET $2 answered '$body', expected {\"ok\":true}"
}
auth_len() { # URL -> length of the Authorization header the upstream saw; dies if it is no Bearer
    local auth
    auth=$(curl -fsS --max-time 10 "$1") || die "GET $1 failed"
    [[ $auth == "Bearer "?* ]] || die "the upstream received no 'Authorization: Bearer ...' via $1"
    echo "${#auth}"
}

if [[ $COLD == 1 ]]; then
    # The first requests after the very first start, all at once: SPEC wants exactly one token
    # request per scope set. The count comes from /-/metrics (printed as found).
    log "cold-cache burst: $COLD_CONNS connections at once against bearer-proxy"
    cold_rc=0
    run_child wrk "$RAW/wrk-cold.txt" "" \
        timeout 60 wrk -t1 -c"$COLD_CONNS" -d1s "http://127.0.0.1:$BP_PORT/bench/x" || cold_rc=$?
    bp_check_alive "during the cold-cache burst"
    fact cold_rc "$cold_rc"
    # bench/report.py reads the token request count (and the token metrics it prints) from here.
    curl -fsS --max-time 10 "http://127.0.0.1:$BP_PORT/-/metrics" >"$RAW/cold-metrics.txt" 2>/dev/null || true
fi

log "warming the token and checking every path"
check_body "bearer-proxy" "http://127.0.0.1:$BP_PORT/bench/x"
check_body "nginx proxy" "http://127.0.0.1:$NGX_PORT/bench/x"
check_body "nginx upstream" "http://127.0.0.1:$UP_PORT/x"
NGX_AUTH_LEN=$(auth_len "http://127.0.0.1:$NGX_PORT/bench/auth-echo")
BP_AUTH_LEN=$(auth_len "http://127.0.0.1:$BP_PORT/bench/auth-echo")
log "upstream sees Authorization of $NGX_AUTH_LEN chars via nginx, $BP_AUTH_LEN via bearer-proxy"
if [[ $TLS == 1 ]]; then
    for path in tls tlsclose tlsclose-noreuse; do
        check_body "nginx proxy, https upstream" "http://127.0.0.1:$NGX_PORT/$path/x"
        [[ $(auth_len "http://127.0.0.1:$NGX_PORT/$path/auth-echo") == "$NGX_AUTH_LEN" ]] ||
            die "nginx proxy sent another Authorization header to the https upstream via /$path"
    done
    for path in tls tlsclose; do
        check_body "bearer-proxy, https upstream" "http://127.0.0.1:$BP_PORT/$path/x"
        [[ $(auth_len "http://127.0.0.1:$BP_PORT/$path/auth-echo") == "$BP_AUTH_LEN" ]] ||
            die "bearer-proxy sent another Authorization header to the https upstream via /$path"
    done
fi
if [[ $DPOP == 1 ]]; then
    check_body "bearer-proxy (DPoP)" "http://127.0.0.1:$DPOP_BP_PORT/bench/x"
    dpop_auth=$(curl -fsS --max-time 10 "http://127.0.0.1:$DPOP_BP_PORT/bench/auth-echo") ||
        die "GET /bench/auth-echo through the DPoP bearer-proxy failed"
    [[ $dpop_auth == "DPoP "?* ]] || die "the upstream received no 'Authorization: DPoP ...' from the DPoP route"
    fact dpop_auth_len "${#dpop_auth}"
fi
fact ngx_auth_len "$NGX_AUTH_LEN"
fact bp_auth_len "$BP_AUTH_LEN"
fact rss_idle_start "$(vm_kib "$BP_PID" VmRSS)"

# --- throughput and latency --------------------------------------------------------------------

RUNS=$RAW/runs.tsv # one line per measured run; bench/report.py names the columns (RUN_COLUMNS)
: >"$RUNS"

snapshot() { # TARGET_PID UPSTREAM_PID -> "machine target upstream ours": CPU clock ticks used so
    # far by the whole machine (user+nice+system), the target, the upstream, and this script's
    # reaped children (wrk). What the machine used beyond the last three is someone else's load.
    local line t u
    local -a f m
    read -r -a m </proc/stat
    { read -r line <"/proc/$$/stat"; } 2>/dev/null
    read -r -a f <<<"${line##*) }"
    t=$(cpu_ticks "$1")
    if [[ $2 == "$1" ]]; then u=0; else u=$(cpu_ticks "$2"); fi
    echo "$((m[1] + m[2] + m[3])) $t $u $((f[13] + f[14]))" # cutime + cstime: fields 16, 17
}

measure() { # TARGET ROUND URL PID UPSTREAM_PID
    local target=$1 round=$2 url=$3 pid=$4 upstream=$5 out line
    local -a before after fields
    out=wrk-$target-$round.txt
    if ((WARMUP > 0)); then
        run_child wrk "$TMP/wrk-warmup.txt" "" \
            timeout $((WARMUP + 30)) wrk -t"$THREADS" -c"$CONNS" -d"${WARMUP}s" "$url" || die "wrk warm-up against $target failed: $(cat "$TMP/wrk-warmup.txt")"
    fi
    read -r -a before <<<"$(snapshot "$pid" "$upstream")"
    run_child wrk "$RAW/$out" "" \
        timeout $((DURATION + 30)) wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" --latency "$url" || die "wrk against $target failed: $(cat "$RAW/$out")"
    read -r -a after <<<"$(snapshot "$pid" "$upstream")"
    if ! alive "$pid"; then
        if [[ -n ${LOGS[$target]:-} ]]; then log_tail "${LOGS[$target]}" "$target log"; fi
        die "$target died during the run"
    fi
    fields=("$target" "$round" "$out" "$DURATION" "$CLK_TCK" "${before[@]}" "${after[@]}")
    (IFS=$'\t' && echo "${fields[*]}") >>"$RUNS"
    line=$(python3 "$SCRIPT_DIR/report.py" line "$RAW") || die "could not parse wrk output for $target: $(cat "$RAW/$out")"
    log "$line"
}

TLS_TARGETS=() # name -> its path on its proxy, below
declare -A TLS_URL=()
if [[ $TLS == 1 ]]; then
    TLS_TARGETS=(nginx-proxy-tls bearer-proxy-tls nginx-proxy-tlsclose nginx-proxy-tlsclose-noreuse bearer-proxy-tlsclose)
    TLS_URL=([nginx-proxy-tls]="http://127.0.0.1:$NGX_PORT/tls/x" [bearer-proxy-tls]="http://127.0.0.1:$BP_PORT/tls/x"
        [nginx-proxy-tlsclose]="http://127.0.0.1:$NGX_PORT/tlsclose/x"
        [nginx-proxy-tlsclose-noreuse]="http://127.0.0.1:$NGX_PORT/tlsclose-noreuse/x"
        [bearer-proxy-tlsclose]="http://127.0.0.1:$BP_PORT/tlsclose/x")
fi
DPOP_TARGETS=()
if [[ $DPOP == 1 ]]; then DPOP_TARGETS=(bearer-proxy-dpop); fi
ROUND_TARGETS=(nginx-proxy bearer-proxy "${ACTIVE_FLOOR[@]}" "${ACTIVE_PEERS[@]}" "${TLS_TARGETS[@]}" "${DPOP_TARGETS[@]}")
fact round_targets "${ROUND_TARGETS[@]}"
log "measuring: wrk -t$THREADS -c$CONNS -d${DURATION}s --latency, ${WARMUP}s warm-up each, $ROUNDS rounds"
UP_PID=${PROCS[nginx-upstream]}
measure nginx-direct 1 "http://127.0.0.1:$UP_PORT/x" "$UP_PID" "$UP_PID"
for ((r = 1; r <= ROUNDS; r++)); do
    measure nginx-proxy "$r" "http://127.0.0.1:$NGX_PORT/bench/x" "${PROCS[nginx-proxy]}" "$UP_PID"
    measure bearer-proxy "$r" "http://127.0.0.1:$BP_PORT/bench/x" "$BP_PID" "$UP_PID"
    for name in "${ACTIVE_FLOOR[@]}"; do
        measure "$name" "$r" "http://127.0.0.1:${FLOOR_PORT[$name]}/bench/x" "${PROCS[$name]}" "$UP_PID"
    done
    for peer in "${ACTIVE_PEERS[@]}"; do
        measure "$peer" "$r" "http://127.0.0.1:${PEER_PORT[$peer]}/bench/x" "${PROCS[$peer]}" "$UP_PID"
    done
    for name in "${TLS_TARGETS[@]}"; do
        if [[ $name == nginx-* ]]; then pid=${PROCS[nginx-proxy]}; else pid=$BP_PID; fi
        measure "$name" "$r" "${TLS_URL[$name]}" "$pid" "$UP_PID"
    done
    if [[ $DPOP == 1 ]]; then
        measure bearer-proxy-dpop "$r" "http://127.0.0.1:$DPOP_BP_PORT/bench/x" "$DPOP_PID" "$UP_PID"
    fi
done
for peer in "${ACTIVE_PEERS[@]}" "${ACTIVE_FLOOR[@]}"; do stop_proc "$peer"; done
if [[ $DPOP == 1 ]]; then
    stop_proc bearer-proxy-dpop
    stop_proc dpop-issuer
fi
fact rss_after_load "$(vm_kib "$BP_PID" VmRSS)"
fact hwm_after_load "$(vm_kib "$BP_PID" VmHWM)"

# --- startup to first proxied response (token cached in the state directory) -------------------

for ((i = 1; i <= STARTUP_RUNS; i++)); do
    stop_bp
    now_us
    t0=$REPLY
    start_bp
    until curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$BP_PORT/bench/x" 2>/dev/null; do
        bp_check_alive "while starting (startup run $i)"
        now_us
        if ((REPLY - t0 > START_TIMEOUT * 1000000)); then
            log_tail "$BP_LOG" "bearer-proxy log"
            die "bearer-proxy gave no proxied response within ${START_TIMEOUT}s of start"
        fi
    done
    now_us
    track_children bearer-proxy
    fact startup_us $((REPLY - t0))
    printf -v ms '%d.%d' $(((REPLY - t0 + 50) / 1000)) $(((REPLY - t0 + 50) % 1000 / 100))
    log "startup run $i: first proxied response after $ms ms"
done
fact rss_idle_restarted "$(vm_kib "$BP_PID" VmRSS)"

# --- optional: 1 GiB streamed down and up ------------------------------------------------------

if [[ $BIG == 1 ]]; then
    big_file=$TMP/www/files/big.bin
    log "BENCH_BIG: writing $BIG_MB MiB of random data"
    head -c "${BIG_MB}M" /dev/urandom >"$big_file"
    chmod 0644 "$big_file"
    fact big_sha "$(sha256sum "$big_file" | cut -d' ' -f1)"

    log "BENCH_BIG: starting the upload sink on 127.0.0.1:$SINK_PORT"
    # The interpreter itself, not a wrapper (pyenv shims), so that its PID is the server's.
    python=$(python3 -c 'import sys; print(sys.executable)')
    "$python" "$SCRIPT_DIR/upload_sink.py" 127.0.0.1 "$SINK_PORT" </dev/null >"$TMP/sink.log" 2>&1 &
    PROCS[sink]=$!
    wait_http "http://127.0.0.1:$SINK_PORT/" "upload sink" "${PROCS[sink]}" "$TMP/sink.log"
    track_children sink

    # Each direction on a fresh bearer-proxy process so VmHWM is that transfer's peak.
    stop_bp
    start_bp
    bp_ready
    log "BENCH_BIG: download $BIG_MB MiB through bearer-proxy"
    now_us
    t0=$REPLY
    run_child download "$RAW/download.sha" "$TMP/download.err" \
        bash -c 'set -o pipefail; curl -fsS --max-time 1800 "$1" | sha256sum' _ \
        "http://127.0.0.1:$BP_PORT/bench/files/big.bin" ||
        { cat "$TMP/download.err" >&2; log_tail "$BP_LOG" "bearer-proxy log"; die "download through bearer-proxy failed"; }
    now_us
    fact dl_us $((REPLY - t0))
    bp_check_alive "during the download"
    fact dl_hwm "$(vm_kib "$BP_PID" VmHWM)"

    stop_bp
    start_bp
    bp_ready
    log "BENCH_BIG: upload $BIG_MB MiB through bearer-proxy"
    now_us
    t0=$REPLY
    run_child upload "$RAW/upload.json" "$TMP/upload.err" \
        curl -fsS --max-time 1800 -T "$big_file" "http://127.0.0.1:$BP_PORT/sink/upload" ||
        { cat "$TMP/upload.err" >&2; log_tail "$BP_LOG" "bearer-proxy log"; die "upload through bearer-proxy failed"; }
    now_us
    fact ul_us $((REPLY - t0))
    bp_check_alive "during the upload"
    fact ul_hwm "$(vm_kib "$BP_PID" VmHWM)"
fi

stop_bp # the last exit status shows whether SIGTERM drains and exits 0

# --- report: bench/report.py makes it from the raw figures --------------------------------------

cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
if [[ -z $cpu_model ]] && command -v lscpu >/dev/null; then
    cpu_model=$(lscpu | awk -F': *' '/^Model name/ { print $2; exit }')
fi
fact nproc "$(nproc)"
fact cpu_model "$cpu_model"
fact mem_total "$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
fact kernel "$(uname -srm)"
fact nginx_version "$("$NGINX" -v 2>&1 | sed -n 1p)"
fact wrk_version "$({ wrk -v 2>&1 || true; } | sed -n '1s/ Copyright.*//p')"
fact curl_version "$(curl --version | sed -n '1s/ (.*//p')"
fact swift_version "$({ swift --version 2>/dev/null || true; } | sed -n 1p)"
git_rev=$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo "(none yet)")
if [[ -n $(git -C "$REPO_ROOT" status --porcelain 2>/dev/null | sed -n 1p) ]]; then git_rev+=" (uncommitted changes)"; fi
fact git_rev "$git_rev"
fact bp_command "$BIN serve --config <generated>${PROXY_ARGS[*]:+ ${PROXY_ARGS[*]}}"
# How the measured binary was built and linked: the idle RSS depends on it by about a MiB.
if [[ -n $BINARY || $SKIP_BUILD == 1 ]]; then
    fact bp_build "as given (not built by this script)"
else
    fact bp_build "swift build -c release${BUILD_FLAGS[*]:+ ${BUILD_FLAGS[*]}} ($BUILD_NAME)"
fi
if ldd "$BIN" 2>/dev/null | grep -q libswiftCore; then
    fact bp_linkage "the Swift runtime linked dynamically"
else
    fact bp_linkage "the Swift runtime linked statically"
fi
fact proxy_args "${PROXY_ARGS[*]}"
fact bp_log_lines "$(wc -l <"$BP_LOG")"
fact bp_log_bytes "$(wc -c <"$BP_LOG")"

# --- HTTP/2: bench/h2.sh, its own servers on its own ports ---------------------------------------
fact h2 "$H2"
if [[ $H2 == 1 ]]; then
    fact h2_rounds "$H2_ROUNDS"
    fact h2_requests "$H2_REQUESTS"
    if ! command -v h2load >/dev/null; then
        fact h2_skipped "no h2load (apt-get install nghttp2-client)"
    else
        h2_floor=""
        if [[ $FLOOR == 1 && -z $FLOOR_SKIPPED ]]; then h2_floor=$FLOOR_BIN; fi
        log "HTTP/2: bench/h2.sh ($H2_ROUNDS rounds of $H2_REQUESTS requests)"
        H2_ROUNDS=$H2_ROUNDS H2_REQUESTS=$H2_REQUESTS H2_FLOOR=$h2_floor bash "$SCRIPT_DIR/h2.sh" "$BIN" \
            >"$RAW/h2.txt" 2>"$RAW/h2.err" || fact h2_skipped "bench/h2.sh failed: $(tail -n 3 "$RAW/h2.err" | tr '\n' ' ')"
    fi
fi

REPORT=$TMP/report.md
# It prints why this run must fail (invalid measurements; a missed target with BENCH_STRICT=1), if so.
verdict=$(python3 "$SCRIPT_DIR/report.py" report "$RAW" "$REPORT") ||
    die "bench/report.py could not write the report (BENCH_KEEP_TMP=1 keeps its input, $RAW)"

mkdir -p "$RESULTS_DIR"
cp "$REPORT" "$RESULTS_DIR/latest.md"
cp "$REPORT" "$RESULTS_DIR/$(date +%Y%m%d-%H%M%S).md"
cat "$REPORT"
log "report written to $RESULTS_DIR/latest.md"

if [[ -n $verdict ]]; then die "$verdict"; fi
