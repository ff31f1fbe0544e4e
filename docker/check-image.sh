#!/usr/bin/env bash
# Proves the container image for real, without Docker or a registry, with Debian packages only (SPEC §10).
#
#     bash docker/check-image.sh           # warm: reuses .build-image/ and podman's images and layer cache
#     bash docker/check-image.sh --cold    # from nothing: deletes .build-image/, the base and the built image
#
# Run it as root on Debian bookworm (it apt-get installs podman, runc, debootstrap, openssl, curl, binutils,
# iproute2 when missing) before a release, and whenever docker/Dockerfile, Package.swift or the runtime changes.
#
#  1. Tests/docker/lint.sh: the static checks of docker/ (needs PyYAML and jsonschema, as .ci/run installs them).
#  2. The build stage's work: copies exactly what docker/Dockerfile's build stage COPYs into .build-image/context
#     (Tests/docker/lint.py --stage-build-context, honouring the .dockerignore), runs the stage's
#     `swift build -c release --product bearer-proxy --static-swift-stdlib` (linked by lld with packed relative
#     relocations, the same flags) there with this machine's toolchain (--scratch-path .build-image), then
#     `strip --strip-debug`. The swift:6.3-bookworm stage itself cannot run
#     here: its `swift package resolve` needs github.com.
#  3. The base image: debian:bookworm-slim made from `debootstrap --variant=minbase bookworm`, slimmed the way
#     the official image is (no docs, man pages or locales; apt's docker-clean), imported into podman under the
#     name the Dockerfile's runtime stage uses. Cached in .build-image/; nothing is ever pulled (--pull=never).
#  4. The runtime stage of docker/Dockerfile, unchanged, built by podman with the binary of step 2 supplied as
#     the `build` stage (--build-context build=...): buildah then never starts the swift stage.
#  5. The image run as docker/compose.yaml runs it: read-only root, uid 10001, every capability dropped,
#     no-new-privileges, routes.json mounted read-only, a named volume for the state, BEARER_PROXY_KEY set and
#     the image's own CMD (0.0.0.0:8080); then as docker/kubernetes/deployment.yaml runs it: loopback listener,
#     the ConfigMap's directory mounted read-only, a memory emptyDir (tmpfs) as XDG_STATE_HOME and the
#     manifest's own exec probes. Checked: HEALTHCHECK, /-/health, /-/ready, the client key, proxied requests with
#     a dev-account token, TLS to a loopback upstream whose certificate a generated CA signed (trusted through
#     "tls": {"caFile"}, refused with a 502 without it, trusted through the image's CA bundle once the CA is added
#     the Debian way), SIGHUP reload (also of an invalid file, refused), SIGTERM with a request in flight (exit 0),
#     the token cache file's owner and mode; then as docker/kubernetes/socket-sidecar.yaml runs it: a Unix socket
#     on an emptyDir shared with an app container that has no network (its uid gets 200; another uid cannot
#     connect), 0700/0600 modes, the socket removed at SIGTERM. It prints the image size and the proxy's idle RSS.
#
# Every container runs in a network namespace of its own that has only a loopback interface; the upstreams run
# there too. No traffic leaves loopback except apt's (debootstrap, the runtime stage's apt-get).
# This sandbox's particulars, harmless elsewhere: crun 1.8 refuses hybrid cgroup v1/v2 hosts, so podman runs
# runc; root lacks CAP_SYS_RESOURCE, so podman's default rlimits (raised to the kernel's maximum) are replaced by
# --ulimit values this shell may set.
#
# Prints PASS or FAIL per check, closes with "N passed, M failed" and the timings; exits 1 when a check failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

WORK=$ROOT/.build-image                             # git-ignored (.build-*/), docker-ignored (.build-*)
IMAGE=localhost/bearer-proxy:check
CA_IMAGE=localhost/bearer-proxy:check-system-ca     # IMAGE plus the test CA, deleted at exit
BASE=docker.io/library/debian:bookworm-slim         # the runtime stage's FROM
SWIFT_IMAGE=docker.io/library/swift:6.3-bookworm    # the build stage's FROM: must never be needed
ROOTFS_TAR=$WORK/debian-bookworm-minbase.tar
MIRROR=http://deb.debian.org/debian
HTTP_PORT=9001 HTTPS_PORT=9443 SLOW_PORT=9002 SLOW_SECONDS=3
STOP_TIMEOUT=30                                     # podman stop's SIGKILL deadline; the proxy's own bound is 10 s
# The shared libraries the binary may need: those the Dockerfile names, all in the slim image.
RUNTIME_LIBS='^(libc|libm|libstdc\+\+|libgcc_s|libz|ld-linux-x86-64|libdl|libpthread|librt)\.so'

cold=false
for arg in "$@"; do
    case $arg in
        --cold) cold=true ;;
        -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "usage: bash docker/check-image.sh [--cold]" >&2; exit 2 ;;
    esac
done
if [ "$(id -u)" -ne 0 ]; then
    echo "docker/check-image.sh: run it as root (debootstrap, podman, network namespaces)" >&2
    exit 2
fi

# ---------------------------------------------------------------------------------------------------------------
# Results, timings, clean-up
# ---------------------------------------------------------------------------------------------------------------

passed=0 failed=0
pass() { printf 'PASS  %s%s\n' "$1" "${2:+ — $2}"; passed=$((passed + 1)); }
fail() { printf 'FAIL  %s%s\n' "$1" "${2:+ — $2}"; failed=$((failed + 1)); }
info() { printf '      %s\n' "$*"; }
die() { fail "$1" "$2"; summary; exit 1; }
expect() { # expect NAME ACTUAL WANTED DETAIL_IF_PASSED [DETAIL_IF_FAILED]
    if [ "$2" = "$3" ]; then pass "$1" "$4"; else fail "$1" "${5:-got $2, wanted $3}"; fi
}

started=$EPOCHREALTIME phase_name="" phase_start="" timings=()
phase() {
    local now=$EPOCHREALTIME
    [ -n "$phase_name" ] && timings+=("$(printf '%-52s %7.1f s' "$phase_name" "$(echo "$now - $phase_start" | bc)")")
    phase_name=$1 phase_start=$now
    [ -n "$phase_name" ] && printf '==> %s\n' "$phase_name"
    return 0
}
summary() {
    phase ""
    echo
    echo "timings:"
    printf '  %s\n' "${timings[@]}"
    printf '  %-52s %7.1f s\n' "total" "$(echo "$EPOCHREALTIME - $started" | bc)"
    echo "$passed passed, $failed failed"
}

TMP=$(mktemp -d /tmp/bearer-proxy-check.XXXXXX)
NETNS=bearer-proxy-check-$$
containers=() volumes=() netns_made=false ca_image_made=false upstream_pid="" curl_pid="" build_pid=""
cleanup() {
    set +e
    for pid in "$build_pid" "$curl_pid" "$upstream_pid"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    done
    for container in "${containers[@]}"; do podman rm -f -v -t 0 "$container" >/dev/null 2>&1; done
    for volume in "${volumes[@]}"; do podman volume rm -f "$volume" >/dev/null 2>&1; done
    $ca_image_made && podman rmi -f "$CA_IMAGE" >/dev/null 2>&1
    $netns_made && ip netns delete "$NETNS"
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------------------------

phase "tools"
need=()
for pkg in podman runc debootstrap openssl curl binutils iproute2 bc python3; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
    echo "apt-get install ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! python3 -c 'import yaml, jsonschema' 2>/dev/null; then
    python3 -m pip install --quiet --disable-pip-version-check 'jsonschema>=4.18' 'PyYAML>=6'
fi
hard_nofile=$(ulimit -Hn)
[ "$hard_nofile" = unlimited ] || [ "$hard_nofile" -gt 65536 ] && hard_nofile=65536
PODMAN=(podman --runtime runc)
LIMITS=(--ulimit "nofile=$hard_nofile:$hard_nofile" --ulimit "nproc=4096:4096")

if $cold; then
    phase "--cold: delete .build-image/, $IMAGE, $BASE"
    podman rmi -f "$IMAGE" "$BASE" >/dev/null 2>&1 || true
    rm -rf "$WORK"
fi
mkdir -p "$WORK"

# ---------------------------------------------------------------------------------------------------------------
# 1. Static checks
# ---------------------------------------------------------------------------------------------------------------

phase "lint (Tests/docker/lint.sh)"
if bash Tests/docker/lint.sh >"$TMP/lint.log" 2>&1; then
    pass "lint" "$(tail -1 "$TMP/lint.log")"
else
    fail "lint" "$(tail -1 "$TMP/lint.log")"
    grep -v '^ok ' "$TMP/lint.log" | sed 's/^/      /'
fi

# ---------------------------------------------------------------------------------------------------------------
# 2. The build stage's work: the binary, from exactly the files the build stage copies
# ---------------------------------------------------------------------------------------------------------------

phase "stage the build stage's context"
python3 Tests/docker/lint.py --stage-build-context "$WORK/context"

phase "swift build -c release (the build stage's command)"
build=(swift build -c release --product bearer-proxy --static-swift-stdlib
       -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs --package-path "$WORK/context"
       --scratch-path "$WORK")
echo "${build[*]}  (log: .build-image/swift-build.log)"
"${build[@]}" >"$WORK/swift-build.log" 2>&1 &
build_pid=$! # waited for, not run in the foreground, so that SIGTERM or SIGINT stops the script at once
if ! wait "$build_pid"; then
    grep -E 'error:' "$WORK/swift-build.log" | head -20 | sed 's/^/      /'
    die "swift build" "the release build failed (.build-image/swift-build.log)"
fi
build_pid=""
built="$("${build[@]}" --show-bin-path)/bearer-proxy"
BINARY=$WORK/build-stage/staging/bearer-proxy        # what the build stage leaves at /staging/bearer-proxy
install -D -m 0755 "$built" "$BINARY"
strip --strip-debug "$BINARY"
size_mib() { echo "scale=1; $(stat -c %s "$1") / 1048576" | bc; }
pass "swift build" "$(size_mib "$built") MiB, $(size_mib "$BINARY") MiB after strip --strip-debug"

needed=$(readelf -d "$BINARY" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
symbols=$(nm "$BINARY" | wc -l)
foreign=$(echo "$needed" | tr ' ' '\n' | grep -Ev "$RUNTIME_LIBS" || true)
icu=$(nm "$BINARY" | grep -cE ' (u_|ucol_|ubrk_|udat_|ucal_)[A-Za-z_]+(_[0-9]+)?$|curl_easy_|_CFURL|URLSession' || true)
if [ -z "$foreign" ] && [ "$icu" -eq 0 ] && [ "$symbols" -gt 1000 ] &&
    ! readelf -S "$BINARY" | grep -q '\.debug_info'; then
    pass "binary" "dynamic: ${needed% }; no ICU, libcurl or URLSession; no DWARF; $symbols symbols kept for backtraces"
else
    fail "binary" "NEEDED: $needed; ICU/libcurl/URLSession symbols: $icu; symbols: $symbols"
fi

# ---------------------------------------------------------------------------------------------------------------
# 3. debian:bookworm-slim from debootstrap
# ---------------------------------------------------------------------------------------------------------------

phase "base image (debootstrap, cached)"
make_rootfs() {
    local rootfs=$WORK/rootfs
    rm -rf "$rootfs"
    echo "debootstrap --variant=minbase bookworm $MIRROR  (log: .build-image/debootstrap.log)"
    if ! debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
        tail -5 "$WORK/debootstrap.log" | sed 's/^/      /'
        die "base image" "debootstrap failed"
    fi
    # The official image's apt sources (deb822, with updates and security) and its minimising configuration.
    rm -f "$rootfs/etc/apt/sources.list"
    cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
    echo 'Acquire::Languages "none";' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
    echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$rootfs/etc/apt/apt.conf.d/docker-autoremove-suggests"
    printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d" && chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
    cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
EOF
    find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$rootfs"/usr/share/{groff,info,linda,locale,man}/* "$rootfs"/usr/share/lintian/overrides/*
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/*
    rm -rf "$rootfs"/var/log/{apt,dpkg.log,bootstrap.log,alternatives.log} "$rootfs"/tmp/* "$rootfs"/root/.bash_history
    : >"$rootfs/etc/machine-id"
    tar --numeric-owner -C "$rootfs" -cf "$ROOTFS_TAR.part" . && mv "$ROOTFS_TAR.part" "$ROOTFS_TAR"
    rm -rf "$rootfs"
}
if podman image exists "$BASE"; then
    echo "$BASE is in podman's storage already ($(podman image inspect -f '{{.Created}}' "$BASE"))"
else
    [ -s "$ROOTFS_TAR" ] || make_rootfs
    podman import --quiet --change 'CMD ["bash"]' \
        --message "debootstrap --variant=minbase bookworm, slimmed by docker/check-image.sh" \
        "$ROOTFS_TAR" "$BASE" >/dev/null
fi
base_size=$(podman image inspect -f '{{.Size}}' "$BASE")
pass "base image" "$BASE, $(echo "scale=1; $base_size / 1000000" | bc) MB, never pulled"

# ---------------------------------------------------------------------------------------------------------------
# 4. The runtime stage
# ---------------------------------------------------------------------------------------------------------------

phase "runtime stage (podman build)"
cache=()
$cold && cache=(--no-cache)
previous=$(podman image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)
# --format docker: the OCI image format has no HEALTHCHECK. --network host: the RUN's apt-get reaches the mirror.
if ! "${PODMAN[@]}" build "${cache[@]}" --format docker --pull=never --network host "${LIMITS[@]}" \
    --build-context build="$WORK/build-stage" -f docker/Dockerfile -t "$IMAGE" "$ROOT" \
    >"$TMP/podman-build.log" 2>&1; then
    tail -20 "$TMP/podman-build.log" | sed 's/^/      /'
    die "runtime stage" "podman build failed"
fi
if [ -n "$previous" ] && [ "$previous" != "$(podman image inspect -f '{{.Id}}' "$IMAGE")" ]; then
    podman rmi "$previous" >/dev/null 2>&1 || true # the last run's image, now untagged
fi
steps=$(grep -cE '^\[[0-9]+/[0-9]+\] STEP' "$TMP/podman-build.log" || true)
if grep -qE '^\[1/[0-9]+\] STEP|swift:6\.3' "$TMP/podman-build.log" || podman image exists "$SWIFT_IMAGE"; then
    fail "runtime stage" "the swift build stage was started or its image is present"
    grep -E '^\[1/' "$TMP/podman-build.log" | head -3 | sed 's/^/      /'
else
    pass "runtime stage" "$steps steps, all of the last stage; the binary stood in for stage 'build', $SWIFT_IMAGE unused"
fi
format='user={{.Config.User}} entrypoint={{json .Config.Entrypoint}} cmd={{json .Config.Cmd}}'
format+=' healthcheck={{json .Config.Healthcheck.Test}} volumes={{json .Config.Volumes}} stop={{.Config.StopSignal}}'
config=$(podman image inspect -f "$format" "$IMAGE")
info "$config"
image_size=$(podman image inspect -f '{{.Size}}' "$IMAGE")

# ---------------------------------------------------------------------------------------------------------------
# Loopback-only network namespace, test CA, upstreams
# ---------------------------------------------------------------------------------------------------------------

phase "network namespace, CA, upstreams"
ip netns add "$NETNS" && netns_made=true
ip netns exec "$NETNS" ip link set lo up
inns() { ip netns exec "$NETNS" "$@"; }

mkdir -p "$TMP/tls"
(
    cd "$TMP/tls"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj "/CN=bearer-proxy check-image CA" -keyout ca.key -out ca.crt \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=localhost" \
        -keyout server.key -out server.csr 2>/dev/null
    printf '%s\n' 'subjectAltName=DNS:localhost,IP:127.0.0.1' 'basicConstraints=critical,CA:FALSE' \
        'keyUsage=critical,digitalSignature' 'extendedKeyUsage=serverAuth' >server.ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext \
        -out server.crt 2>/dev/null
    chmod 0644 ca.crt
)
# Not through inns: $! must be the PID of the python3 that `ip netns exec` becomes, not of a subshell.
ip netns exec "$NETNS" python3 docker/check-image-upstream.py "$TMP/tls" "$HTTP_PORT" "$HTTPS_PORT" "$SLOW_PORT" \
    "$SLOW_SECONDS" >"$TMP/upstream.log" 2>&1 &
upstream_pid=$!
for _ in $(seq 50); do [ -e "$TMP/tls/upstream.ready" ] && break; sleep 0.1; done
[ -e "$TMP/tls/upstream.ready" ] || die "upstreams" "did not start: $(tail -3 "$TMP/upstream.log")"
info "network namespace $NETNS (lo only); upstreams on 127.0.0.1:$HTTP_PORT, :$HTTPS_PORT (TLS), :$SLOW_PORT (slow)"

# ---------------------------------------------------------------------------------------------------------------
# Helpers for the running proxy
# ---------------------------------------------------------------------------------------------------------------

KEY=$(openssl rand -hex 32)
printf 'X-Bearer-Proxy-Key: %s\n' "$KEY" >"$TMP/key-header"
# http GET PATH [curl options...]: prints the body to $TMP/body and returns the status code on stdout.
http() {
    local path=$1
    shift
    inns curl -sS --max-time 15 -o "$TMP/body" -w '%{http_code}' "$@" "http://127.0.0.1:8080$path" 2>"$TMP/curl.err" ||
        echo "curl failed: $(cat "$TMP/curl.err")"
}
# field EXPRESSION: evaluates a Python expression over the JSON body `b`.
field() {
    python3 -c "import json, sys; b = json.load(open(sys.argv[1])); print($1)" "$TMP/body" 2>/dev/null || echo "?"
}
pid_of() { podman inspect -f '{{.State.Pid}}' "$1"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
mib() { echo "scale=1; $1 / 1024" | bc; }
last_health=""
wait_healthy() { # wait_healthy CONTAINER: /-/health answers 200 within 10 s ($last_health: the last answer)
    for _ in $(seq 100); do
        [ "$(podman inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" = true ] || return 1
        last_health=$(http /-/health)
        [ "$last_health" = 200 ] && return 0
        sleep 0.1
    done
    return 1
}
container_log() { podman logs "$1" 2>&1 | tail -"${2:-15}" | sed 's/^/      log: /'; }
proxied() { # proxied NAME PATH AUDIENCE [curl options]: a route answers 200 with a token for AUDIENCE
    local name=$1 path=$2 audience=$3 code
    shift 3
    code=$(http "$path" "$@")
    local aud key
    aud=$(field 'b["claims"]["aud"] if b.get("claims") else None')
    key=$(field 'b["clientKeyForwarded"]')
    if [ "$code" = 200 ] && [ "$aud" = "$audience" ] && [ "$key" = False ]; then
        pass "$name" "GET $path → 200; the upstream got $(field 'b["path"]') with a token for $aud, no client key"
    else
        fail "$name" "GET $path → $code, aud $aud, client key forwarded: $key; body: $(head -c 300 "$TMP/body")"
    fi
}

# ---------------------------------------------------------------------------------------------------------------
# 5a. As docker/compose.yaml runs it
# ---------------------------------------------------------------------------------------------------------------

phase "container as compose.yaml runs it"
mkdir -p "$TMP/compose"
cp "$TMP/tls/ca.crt" "$TMP/compose/test-ca.pem"
# "allowUsers": [0]: the checks' curl runs as root in the containers' network namespace, sharing their loopback as
# a second container of the Pod would; every other local user is refused (#26, checked below with uid 65534). The
# app of deployment.yaml runs as the Pod's user, the proxy's own, and needs no entry.
write_routes() { # write_routes FILE [EXTRA_ROUTE_JSON]: in place, so that a single-file bind mount sees it
    cat >"$1" <<EOF
{
  "listen": "0.0.0.0:8080",
  "requireKey": true,
  "allowUsers": [0],
  "account": { "flow": "dev" },
  "routes": [
    { "prefix": "/api1", "upstream": "http://127.0.0.1:$HTTP_PORT/api1", "scopes": ["api://api1/Data.Read"] },
    { "prefix": "/tls", "upstream": "https://localhost:$HTTPS_PORT/tls", "scopes": ["api://tls/Data.Read"],
      "tls": { "caFile": "test-ca.pem" } },
    { "prefix": "/untrusted", "upstream": "https://localhost:$HTTPS_PORT/untrusted",
      "scopes": ["api://tls/Data.Read"] },
    { "prefix": "/slow", "upstream": "http://127.0.0.1:$SLOW_PORT", "scopes": ["api://api1/Data.Read"] }${2:+,
    $2}
  ]
}
EOF
}
write_routes "$TMP/compose/routes.json"
chmod 0644 "$TMP/compose/routes.json" "$TMP/compose/test-ca.pem"
# The image refuses to serve what nobody chose: no routes.json mounted; 0.0.0.0 (its CMD) without a client key.
refuses() { # refuses NAME EXPECTED_LOG_REGEX [podman run options and image arguments]
    local name=$1 expected=$2 container=bearer-proxy-check-refuse-$$-${#containers[@]} state=""
    shift 2
    containers+=("$container")
    "${PODMAN[@]}" run -d --name "$container" --network "ns:/run/netns/$NETNS" "${LIMITS[@]}" \
        --read-only --read-only-tmpfs=false --user 10001:10001 --cap-drop=all --security-opt no-new-privileges \
        "$@" >/dev/null 2>"$TMP/run.err" || { fail "$name" "podman run: $(grep -v systemd "$TMP/run.err")"; return; }
    for _ in $(seq 100); do
        state=$(podman inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$container")
        [ "${state%% *}" = exited ] && break
        sleep 0.1
    done
    local log
    log=$(podman logs "$container" 2>&1 | grep -E "$expected" | head -1)
    if [ "${state%% *}" = exited ] && [ "${state##* }" != 0 ] && [ -n "$log" ]; then
        pass "$name" "exit ${state##* }: ${log:0:220}"
    else
        fail "$name" "state: $state; log: $(podman logs "$container" 2>&1 | tail -3 | tr '\n' ' ')"
    fi
    podman rm -f -v -t 0 "$container" >/dev/null 2>&1
}
refuses "no routes.json" "routes\.json" -e BEARER_PROXY_KEY="$KEY" "$IMAGE"
printf '{ "account": { "flow": "dev" }, "routes": [ %s ] }\n' \
    "{ \"prefix\": \"/api1\", \"upstream\": \"http://127.0.0.1:$HTTP_PORT/api1\", \"scopes\": [\"api://api1/Data.Read\"] }" \
    >"$TMP/compose/keyless.json"
chmod 0644 "$TMP/compose/keyless.json"
refuses "0.0.0.0 without a key" "BEARER_PROXY_KEY|allowRemote" \
    -v "$TMP/compose/keyless.json:/etc/bearer-proxy/routes.json:ro" "$IMAGE"

STATE_VOLUME=bearer-proxy-check-state-$$
podman volume create "$STATE_VOLUME" >/dev/null && volumes+=("$STATE_VOLUME")
COMPOSE=bearer-proxy-check-compose-$$
containers+=("$COMPOSE")
# compose.yaml: read_only, cap_drop ALL, no-new-privileges, the image's user and CMD, routes.json :ro, the named
# volume `state`, BEARER_PROXY_KEY. --read-only-tmpfs=false: Docker's read_only adds no writable /tmp, /run.
"${PODMAN[@]}" run -d --name "$COMPOSE" --network "ns:/run/netns/$NETNS" "${LIMITS[@]}" \
    --read-only --read-only-tmpfs=false --user 10001:10001 --cap-drop=all --security-opt no-new-privileges \
    -e BEARER_PROXY_KEY="$KEY" \
    -v "$TMP/compose/routes.json:/etc/bearer-proxy/routes.json:ro" \
    -v "$TMP/compose/test-ca.pem:/etc/bearer-proxy/test-ca.pem:ro" \
    -v "$STATE_VOLUME:/var/lib/bearer-proxy" \
    "$IMAGE" >/dev/null 2>"$TMP/run.err" || die "start" "podman run failed: $(grep -v systemd "$TMP/run.err" | tail -3)"
start=$EPOCHREALTIME
if wait_healthy "$COMPOSE"; then
    milliseconds=$(echo "($EPOCHREALTIME - $start) * 1000 / 1" | bc)
    pass "start" "the image's CMD (serve --listen 0.0.0.0:8080) answered /-/health $milliseconds ms after podman run"
else
    container_log "$COMPOSE" 30
    die "start" "no /-/health within 10 s ($(podman inspect -f '{{.State.Status}}, exit {{.State.ExitCode}}' \
        "$COMPOSE")); the last try: $last_health"
fi
pid=$(pid_of "$COMPOSE")
rss_start=$(rss_kib "$pid")

status=$(cat "/proc/$pid/status")
uids=$(awk '/^Uid:/ {print $2, $3, $4, $5}' <<<"$status")
gids=$(awk '/^Gid:/ {print $2, $3, $4, $5}' <<<"$status")
caps=$(awk '/^Cap(Prm|Eff|Bnd|Amb):/ {printf "%s%s", sep, $2; sep=","}' <<<"$status")
nnp=$(awk '/^NoNewPrivs:/ {print $2}' <<<"$status")
if [ "$uids" = "10001 10001 10001 10001" ] && [ "$gids" = "10001 10001 10001 10001" ] &&
    [ "$caps" = "0000000000000000,0000000000000000,0000000000000000,0000000000000000" ] && [ "$nnp" = 1 ]; then
    pass "privileges" "$(tr '\0' ' ' <"/proc/$pid/cmdline")runs as uid/gid 10001, with no capability \
(permitted, effective, bounding, ambient) and no_new_privs"
else
    fail "privileges" "uid $uids gid $gids caps $caps no_new_privs $nnp"
fi
if out=$(podman exec "$COMPOSE" touch /tmp/probe 2>&1); then
    fail "read-only root" "writing /tmp worked"
else
    pass "read-only root" "touch /tmp/probe: ${out##*: }"
fi

# podman runs HEALTHCHECK on a systemd timer; without systemd (here) `podman healthcheck run` runs it once.
if podman healthcheck run "$COMPOSE" >"$TMP/hc.out" 2>"$TMP/hc.err" &&
    [ "$(podman inspect -f '{{.State.Health.Status}}' "$COMPOSE")" = healthy ]; then
    pass "HEALTHCHECK" "podman healthcheck run → healthy: $(podman image inspect \
        -f '{{join .Config.Healthcheck.Test " "}}' "$IMAGE")"
else
    fail "HEALTHCHECK" "podman healthcheck run: $(cat "$TMP/hc.out") $(grep -v systemd "$TMP/hc.err")"
fi

code=$(http /-/health)
expect "/-/health" "$code" 200 "200 without the client key"
# Another local user (uid 65534, not in allowUsers) on the same loopback: closed before anything is read, even
# with no capability in the container (the kernel's socket diagnostics need none).
code=$(inns setpriv --reuid=65534 --regid=65534 --clear-groups curl -s --max-time 5 -o /dev/null -w '%{http_code}' \
    "http://127.0.0.1:8080/-/health" 2>/dev/null || true)
refusal=$(podman logs "$COMPOSE" 2>&1 | grep -E 'closed a connection from uid 65534' | tail -1)
if [ "$code" = 000 ] && [ -n "$refusal" ]; then
    pass "another local user" "uid 65534's /-/health: no answer; log: ${refusal:0:160}"
else
    fail "another local user" "uid 65534's /-/health → $code; log: ${refusal:-nothing}"
fi
code=$(http /-/ready -H "@$TMP/key-header")
expect "/-/ready" "$code" 200 "200 with the client key: signed in, tokens obtainable" \
    "$code $(head -c 300 "$TMP/body")"
code=$(http /api1/hello)
expect "client key required" "$code" 401 "GET /api1/hello without X-Bearer-Proxy-Key → 401" \
    "GET /api1/hello without the key → $code"

proxied "proxied request" "/api1/hello?x=1" "api://api1" -H "@$TMP/key-header"
proxied "TLS upstream, tls.caFile" "/tls/secure" "api://tls" -H "@$TMP/key-header"
code=$(http /untrusted/secure -H "@$TMP/key-header")
if [ "$code" = 502 ] && grep -qiE 'not trusted|untrusted|verify|unknown ca|issuer' "$TMP/body"; then
    pass "TLS upstream, untrusted" "502: $(field 'b.get("detail") or b.get("title") or b')"
else
    fail "TLS upstream, untrusted" "$code: $(head -c 400 "$TMP/body")"
    podman logs "$COMPOSE" 2>&1 | grep -F '/untrusted' | tail -2 | sed 's/^/      log: /'
fi

# SIGHUP: a new route, then an invalid file that must be refused while the last good one keeps serving.
API3='{ "prefix": "/api3", "upstream": "http://127.0.0.1:'$HTTP_PORT'/api3", "scopes": ["api://api3/Data.Read"] }'
before=$(podman logs "$COMPOSE" 2>&1 | wc -l)
write_routes "$TMP/compose/routes.json" "$API3"
podman kill --signal HUP "$COMPOSE" >/dev/null
for _ in $(seq 50); do [ "$(http /api3/new -H "@$TMP/key-header")" = 200 ] && break; sleep 0.1; done
proxied "SIGHUP reload" "/api3/new" "api://api3" -H "@$TMP/key-header"
printf '{ "account": { "flow": "dev" }, "routes": [ { "prefix": "/api1" ' >"$TMP/compose/routes.json"
podman kill --signal HUP "$COMPOSE" >/dev/null
sleep 1
code=$(http /api3/new -H "@$TMP/key-header")
refused=$(podman logs "$COMPOSE" 2>&1 | tail -n +"$((before + 1))" | grep -iE 'reload|routes\.json' | tail -1)
if [ "$code" = 200 ] && [ "$(podman inspect -f '{{.State.Running}}' "$COMPOSE")" = true ] && [ -n "$refused" ]; then
    pass "SIGHUP, invalid file" "refused, the previous routes still serve (/api3 → 200); log: ${refused:0:200}"
else
    fail "SIGHUP, invalid file" "/api3 → $code; log: $refused"
fi
write_routes "$TMP/compose/routes.json" "$API3"

sleep 2 # idle
rss_idle=$(rss_kib "$pid")
info "idle RSS: $(mib "$rss_start") MiB after start, $(mib "$rss_idle") MiB idle after the requests above"

# SIGTERM while a request waits on the slow upstream: it completes, the proxy exits 0 on its own.
ip netns exec "$NETNS" curl -sS --max-time 30 -H "@$TMP/key-header" -o "$TMP/slow.body" -w '%{http_code}' \
    "http://127.0.0.1:8080/slow/wait" >"$TMP/slow.code" 2>"$TMP/slow.err" &
curl_pid=$!
sleep 1
stop_start=$EPOCHREALTIME
podman stop -t "$STOP_TIMEOUT" "$COMPOSE" >/dev/null 2>&1
stop_seconds=$(echo "$EPOCHREALTIME - $stop_start" | bc)
wait "$curl_pid" || true
curl_pid=""
exit_code=$(podman inspect -f '{{.State.ExitCode}}' "$COMPOSE")
if [ "$exit_code" = 0 ] && [ "$(cat "$TMP/slow.code")" = 200 ] && grep -q 'slow done' "$TMP/slow.body" &&
    [ "$(echo "$stop_seconds < 10" | bc)" = 1 ]; then
    pass "SIGTERM, request in flight" "the request finished (200); exit code 0 $(printf '%.1f' "$stop_seconds") s after \
podman stop -t $STOP_TIMEOUT (the proxy's own bound is 10 s)"
else
    fail "SIGTERM, request in flight" "exit code $exit_code after ${stop_seconds} s; the request in flight: \
$(cat "$TMP/slow.code") $(cat "$TMP/slow.err")"
    container_log "$COMPOSE" 10
fi

mountpoint=$(podman volume inspect -f '{{.Mountpoint}}' "$STATE_VOLUME")
state=$(stat -c '%a %u:%g' "$mountpoint")
files=$(find "$mountpoint" -type f -printf '%P %m %U:%G\n' | sort)
token_files=$(grep -c '^tokens-[^/]*\.json ' <<<"$files" || true)
if [ "$state" = "700 10001:10001" ] && [ "$token_files" -ge 1 ] && ! grep -qv ' 600 10001:10001$' <<<"$files"; then
    pass "state volume" "/var/lib/bearer-proxy $state; $(tr '\n' ';' <<<"$files" | sed 's/;$//; s/;/; /g')"
else
    fail "state volume" "/var/lib/bearer-proxy $state; files: $(tr '\n' ';' <<<"$files")"
fi

# ---------------------------------------------------------------------------------------------------------------
# 5b. As docker/kubernetes/deployment.yaml runs it, on the image plus the test CA in its system bundle
# ---------------------------------------------------------------------------------------------------------------

phase "container as deployment.yaml runs it"
mkdir -p "$TMP/ca-image" "$TMP/configmap"
cp "$TMP/tls/ca.crt" "$TMP/ca-image/bearer-proxy-check-ca.crt"
# An internal CA added the Debian way: update-ca-certificates rebuilds /etc/ssl/certs/ca-certificates.crt.
cat >"$TMP/ca-image/Containerfile" <<EOF
FROM $IMAGE
USER 0
COPY bearer-proxy-check-ca.crt /usr/local/share/ca-certificates/
RUN update-ca-certificates
USER 10001:10001
EOF
if "${PODMAN[@]}" build --format docker --pull=never --network none "${LIMITS[@]}" -t "$CA_IMAGE" \
    "$TMP/ca-image" >"$TMP/ca-build.log" 2>&1; then
    ca_image_made=true
else
    tail -5 "$TMP/ca-build.log" | sed 's/^/      /'
    die "system CA" "could not add the test CA to the image"
fi
cat >"$TMP/configmap/routes.json" <<EOF
{
  "listen": "127.0.0.1:8080",
  "allowUsers": [0],
  "account": { "flow": "dev" },
  "routes": [
    { "prefix": "/tls", "upstream": "https://localhost:$HTTPS_PORT/system-ca", "scopes": ["api://tls/Data.Read"] }
  ]
}
EOF
chmod 0755 "$TMP/configmap" && chmod 0444 "$TMP/configmap/routes.json"
K8S=bearer-proxy-check-k8s-$$
containers+=("$K8S")
# deployment.yaml: args serve --listen 127.0.0.1:8080, XDG_STATE_HOME=/var/lib/bearer-proxy on an emptyDir, the
# ConfigMap's directory read-only at /etc/bearer-proxy, uid 10001, read-only root, no privilege escalation, every
# capability dropped. The emptyDir is what the kubelet makes: a root-owned 0777 directory, bind-mounted. (Not
# podman's --tmpfs: over the image's VOLUME it comes up root-owned 0700, which no emptyDir is.)
mkdir -m 0777 "$TMP/emptydir"
"${PODMAN[@]}" run -d --name "$K8S" --network "ns:/run/netns/$NETNS" "${LIMITS[@]}" \
    --read-only --read-only-tmpfs=false --user 10001:10001 --cap-drop=all --security-opt no-new-privileges \
    -e XDG_STATE_HOME=/var/lib/bearer-proxy \
    -v "$TMP/emptydir:/var/lib/bearer-proxy" \
    -v "$TMP/configmap:/etc/bearer-proxy:ro" \
    "$CA_IMAGE" serve --listen 127.0.0.1:8080 >/dev/null 2>"$TMP/run.err" ||
    die "k8s start" "podman run failed: $(grep -v systemd "$TMP/run.err" | tail -3)"
if wait_healthy "$K8S"; then
    pid=$(pid_of "$K8S")
    rss_k8s_start=$(rss_kib "$pid")
    pass "k8s start" "serve --listen 127.0.0.1:8080, XDG_STATE_HOME on a root-owned 0777 emptyDir"
else
    container_log "$K8S" 30
    die "k8s start" "no /-/health within 10 s; the last try: $last_health"
fi
# The manifest's own probe commands, run in the container as the kubelet would.
probes=$(python3 - <<'EOF'
import json, yaml
deployment = yaml.safe_load(open("docker/kubernetes/deployment.yaml"))
spec = deployment["spec"]["template"]["spec"]
proxy = next(c for c in spec.get("initContainers", []) + spec["containers"] if c["name"] == "bearer-proxy")
for name in ("startupProbe", "livenessProbe", "readinessProbe"):
    print(name, json.dumps(proxy[name]["exec"]["command"]))
EOF
)
while read -r probe command; do
    mapfile -t argv < <(python3 -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])))' "$command")
    if out=$(podman exec "$K8S" "${argv[@]}" 2>&1); then
        pass "k8s $probe" "${argv[*]}"
    else
        fail "k8s $probe" "${argv[*]}: $out"
    fi
done <<<"$probes"
proxied "TLS upstream, image CA bundle" "/tls/system" "api://tls"
state=$(podman exec "$K8S" find /var/lib/bearer-proxy/bearer-proxy -printf '%P %m %U:%G\n' 2>&1 | sed 's/^ /. /' | sort)
if grep -q '^\. 700 10001:10001$' <<<"$state" && grep -qE '^tokens-[^ /]+\.json 600 10001:10001$' <<<"$state" &&
    ! grep -qvE '^(\. 700|[^/ ]+ 600) 10001:10001$' <<<"$state"; then
    pass "k8s state (emptyDir)" "/var/lib/bearer-proxy/bearer-proxy: $(tr '\n' ';' <<<"$state" |
        sed 's/;$//; s/;/; /g')"
else
    fail "k8s state (emptyDir)" "$(tr '\n' ';' <<<"$state")"
fi
# configmap.yaml's reload: the kubelet swaps the file in the mounted directory, then kill -HUP 1 in the container.
cat >"$TMP/configmap/routes.json.new" <<EOF
{
  "listen": "127.0.0.1:8080",
  "allowUsers": [0],
  "account": { "flow": "dev" },
  "routes": [
    { "prefix": "/tls", "upstream": "https://localhost:$HTTPS_PORT/system-ca", "scopes": ["api://tls/Data.Read"] },
    { "prefix": "/api4", "upstream": "http://127.0.0.1:$HTTP_PORT/api4", "scopes": ["api://api4/Data.Read"] }
  ]
}
EOF
chmod 0444 "$TMP/configmap/routes.json.new" && mv "$TMP/configmap/routes.json.new" "$TMP/configmap/routes.json"
podman exec "$K8S" sh -c 'kill -HUP 1'
for _ in $(seq 50); do [ "$(http /api4/x)" = 200 ] && break; sleep 0.1; done
proxied "k8s reload (kill -HUP 1)" "/api4/x" "api://api4"
podman stop -t "$STOP_TIMEOUT" "$K8S" >/dev/null 2>&1
exit_code=$(podman inspect -f '{{.State.ExitCode}}' "$K8S")
expect "k8s stop" "$exit_code" 0 "exit code 0" "exit code $exit_code"

# ---------------------------------------------------------------------------------------------------------------
# 5c. As docker/kubernetes/socket-sidecar.yaml runs it: the socket shared through a volume (#26 item 2)
# ---------------------------------------------------------------------------------------------------------------

phase "socket shared through a volume (socket-sidecar.yaml)"
SOCK=bearer-proxy-check-sock-$$
containers+=("$SOCK")
# Two emptyDirs as the kubelet makes them: root-owned 0777 directories. The proxy makes bearer-proxy/ (0700) in the
# sockets one and its socket (0600) in that.
mkdir -m 0777 "$TMP/emptydir-sock-state" "$TMP/emptydir-sockets"
"${PODMAN[@]}" run -d --name "$SOCK" --network "ns:/run/netns/$NETNS" "${LIMITS[@]}" \
    --read-only --read-only-tmpfs=false --user 10001:10001 --cap-drop=all --security-opt no-new-privileges \
    -e XDG_STATE_HOME=/var/lib/bearer-proxy \
    -v "$TMP/emptydir-sock-state:/var/lib/bearer-proxy" -v "$TMP/emptydir-sockets:/sockets" \
    -v "$TMP/configmap:/etc/bearer-proxy:ro" \
    "$CA_IMAGE" serve --listen 127.0.0.1:8080 --listen unix:/sockets/bearer-proxy/proxy.sock \
    >/dev/null 2>"$TMP/run.err" ||
    die "socket start" "podman run failed: $(grep -v systemd "$TMP/run.err" | tail -3)"
if wait_healthy "$SOCK"; then
    pass "socket start" "serve --listen 127.0.0.1:8080 --listen unix:/sockets/bearer-proxy/proxy.sock"
else
    container_log "$SOCK" 30
    die "socket start" "no /-/health within 10 s; the last try: $last_health"
fi
modes=$(stat -c '%a %u' "$TMP/emptydir-sockets/bearer-proxy" "$TMP/emptydir-sockets/bearer-proxy/proxy.sock" |
    tr '\n' ' ')
expect "socket modes" "$modes" "700 10001 600 10001 " "directory 0700 and socket 0600, both uid 10001's" \
    "got: $modes"
# The app container: no network at all, only the volume; as the Pod's user (the proxy's own), then as another.
app_call() { # app_call UID: the status code of /api4/x through the socket, from a container with no network
    "${PODMAN[@]}" run --rm --network none "${LIMITS[@]}" --read-only --user "$1:$1" --cap-drop=all \
        --security-opt no-new-privileges -v "$TMP/emptydir-sockets:/sockets" --entrypoint curl "$CA_IMAGE" \
        -s --max-time 10 -o /dev/null -w '%{http_code}' --unix-socket /sockets/bearer-proxy/proxy.sock \
        http://localhost/api4/x 2>/dev/null || true
}
code=$(app_call 10001)
expect "socket: the app (uid 10001, no network)" "$code" 200 "GET /api4/x through the socket → 200" "→ $code"
code=$(app_call 10002)
expect "socket: another uid (10002)" "$code" 000 "cannot connect: the directory is 0700" "→ $code"
podman stop -t "$STOP_TIMEOUT" "$SOCK" >/dev/null 2>&1
exit_code=$(podman inspect -f '{{.State.ExitCode}}' "$SOCK")
expect "socket stop" "$exit_code" 0 "exit code 0" "exit code $exit_code"
if [ -e "$TMP/emptydir-sockets/bearer-proxy/proxy.sock" ]; then
    fail "socket removed" "the socket file outlived the proxy"
else
    pass "socket removed" "the socket file is gone after SIGTERM"
fi

# ---------------------------------------------------------------------------------------------------------------
# Sizes
# ---------------------------------------------------------------------------------------------------------------

echo
megabytes() { echo "scale=1; $1 / 1000000" | bc; }
echo "image $IMAGE: $(megabytes "$image_size") MB ($(echo "scale=1; $image_size / 1048576" | bc) MiB);" \
    "base $(megabytes "$base_size") MB, binary $(megabytes "$(stat -c %s "$BINARY")") MB"
echo "idle RSS of the proxy: $(mib "$rss_start") MiB after start, $(mib "$rss_idle") MiB idle after the checks" \
    "(compose layout); $(mib "$rss_k8s_start") MiB after start (k8s layout)"
summary
[ "$failed" -eq 0 ]
