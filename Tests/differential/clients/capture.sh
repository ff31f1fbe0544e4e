#!/usr/bin/env bash
# Captures the requests of real HTTP clients as bytes (issue #24 condition 4): each case starts recorder.py on
# 127.0.0.1 (port 0), drives one client through a few realistic requests against it, and keeps the bytes of every
# connection, one file each, as Tests/BearerProxyTests/Fixtures/real-clients/<case>-<n>.http, and the method and
# target of each request the recorder framed in requests.txt there (one line each: file, method, target). The client
# versions go to versions.txt. RealClientDifferentialTests replays the files; this script is run by hand, once, as root on a
# Debian 12 machine (it installs the clients from the Debian mirror), never in CI. Nothing leaves 127.0.0.1:
# Chromium is told that every other host does not resolve.
#
#     Tests/differential/clients/capture.sh
#
# With --through-proxy, the same clients go through a running bearer-proxy (BINARY serve, dev account, one route
# /api to the recorder, the proxy's own origin allowed) and the corpus is left alone: what the upstream received is
# kept in $LIVE_OUT if set, and a summary says how each client fared (git clone fails at the pack either way).
#
#     Tests/differential/clients/capture.sh --through-proxy .build/debug/bearer-proxy
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
proxy=
if [ "${1:-}" = --through-proxy ]; then
    proxy=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
fi
out=$(cd "$here/../../BearerProxyTests/Fixtures" && pwd)/real-clients
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -z "$proxy" ] || out=${LIVE_OUT:-$work/upstream}
summary=()

if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl wget python3-requests python3-httpx \
        python3-aiohttp python3-websockets golang-go nodejs openjdk-17-jdk-headless chromium git >/dev/null
fi
# Debian's Python, whatever python3 is first on PATH: the client libraries above are installed for it.
python=/usr/bin/python3

mkdir -p "$out"
rm -f "$out"/*.http "$out/requests.txt"

# run_case NAME 'COMMAND': COMMAND (evaluated then, so that it sees them) runs with $BASE=http://127.0.0.1:PORT/api
# and $PORT pointing at a fresh recorder.
run_case() {
    local name=$1
    shift
    rm -f "$work/port"
    "$python" "$here/recorder.py" "$work" "$name" "$work/port" &
    local recorder=$!
    for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
    local port
    port=$(cat "$work/port")
    echo "==> $name (127.0.0.1:$port)"
    local client_port=$port server=
    if [ -n "$proxy" ]; then
        client_port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        cat >"$work/routes.json" <<JSON
{ "listen": "127.0.0.1:$client_port", "account": { "flow": "dev" },
  "allowedOrigins": ["http://127.0.0.1:$client_port"],
  "routes": [{ "prefix": "/api", "upstream": "http://127.0.0.1:$port/api", "scopes": ["api://api/Read"] }] }
JSON
        "$proxy" serve --config "$work/routes.json" --no-persist >"$work/proxy-$name.log" 2>&1 &
        server=$!
        for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$client_port/-/health" && break; sleep 0.05; done
        echo "    through bearer-proxy on 127.0.0.1:$client_port"
    fi
    local status=0
    (export BASE="http://127.0.0.1:$client_port/api" PORT=$client_port && eval "$1") || status=$?
    [ "$status" = 0 ] || echo "    ($name: the client exited $status)"
    if [ -n "$server" ]; then
        kill "$server"
        wait "$server" 2>/dev/null || true
    fi
    # Connections the client keeps open have sent everything they will send once the client has exited.
    kill "$recorder"
    wait "$recorder" 2>/dev/null || true
    summary+=("$name: client exit $status, $(cat "$work/$name"-*.requests 2>/dev/null | wc -l) request(s) received")
    # One file per connection that sent anything, numbered in accept order without gaps.
    local n=0
    for file in $(ls "$work/$name"-*.http 2>/dev/null | sort -V); do
        n=$((n + 1))
        mv "$file" "$out/$name-$n.http"
        sed "s|^|$name-$n.http |" "${file%.http}.requests" >>"$out/requests.txt"
    done
}

large=$work/large.bin
# More than 1 KiB: curl asks `Expect: 100-continue` before a larger upload; every byte value in it.
head -c 16384 /dev/urandom >"$large"
small=$work/notes.txt
printf 'line one\nline two\n' >"$small"

# curl: one connection for several URLs; uploads with Content-Length, chunked from stdin, and large enough for
# Expect: 100-continue; a UTF-8 header value; the proxy as an HTTP proxy (absolute-form).
curl_cases() {
    curl -sS -o /dev/null -o /dev/null -o /dev/null "$BASE/items?q=caf%C3%A9&tags=a%20b%26c" "$BASE/items/7" \
        "$BASE/items?page=2"
    curl -sS -o /dev/null -I "$BASE/items/7"
}
run_case curl-get curl_cases
run_case curl-post-json 'curl -sS -o /dev/null -H "Content-Type: application/json" -d "{\"name\":\"Zoë\",\"count\":2}" \
    "$BASE/items"'
run_case curl-form 'curl -sS -o /dev/null --data-urlencode "user=zoë" --data-urlencode "password=p@ss word" \
    "$BASE/login"'
run_case curl-multipart 'curl -sS -o /dev/null -F note=hello -F "file=@$small;type=text/plain" "$BASE/upload"'
run_case curl-chunked 'printf "{\"part\": 1}\n{\"part\": 2}\n" | curl -sS -o /dev/null -T - \
    -H "Transfer-Encoding: chunked" "$BASE/stream"'
run_case curl-expect-continue 'curl -sS -o /dev/null -T "$large" "$BASE/large.bin"'
run_case curl-utf8-header 'curl -sS -o /dev/null -H "X-Display-Name: Zoë Ångström" "$BASE/items"'
run_case curl-as-proxy 'curl -sS -o /dev/null -x "http://127.0.0.1:$PORT" "$BASE/items?q=1"'

# wget: two URLs on one connection, a HEAD (--spider), a form post, a PUT of a file.
run_case wget-get 'wget -q -O /dev/null "$BASE/items?q=caf%C3%A9" "$BASE/items/7"'
run_case wget-head 'wget -q --spider "$BASE/items/7"'
run_case wget-post 'wget -q -O /dev/null --post-data "user=zo%C3%AB&password=p%40ss+word" "$BASE/login"'
run_case wget-put 'wget -q -O /dev/null --method=PUT --body-file="$small" "$BASE/notes.txt"'

# Python.
for case in requests-session requests-upload requests-utf8-header httpx aiohttp urllib websockets; do
    run_case "python-$case" '"$python" "$here/clients.py" "$case"'
done

# Go net/http.
gocache=$work/go
mkdir -p "$gocache"
(cd "$work" && cp "$here/client.go" . && GOCACHE=$gocache GO111MODULE=off go build -o go-client client.go)
run_case go-net-http '"$work/go-client"'

# Node's fetch.
run_case node-fetch 'node "$here/client.mjs"'

# Java's HttpClient, as newHttpClient() makes it (HTTP/2 preferred: h2c upgrade offered) and pinned to HTTP/1.1.
run_case java-httpclient-default 'java "$here/Client.java" default'
run_case java-httpclient-http1 'java "$here/Client.java" http1'

# git over smart HTTP (protocol v2): ls-remote, and a clone that gets as far as asking for the pack.
run_case git-ls-remote 'git ls-remote "$BASE/repo.git"'
run_case git-clone 'git clone -q "$BASE/repo.git" "$work/clone"'

# Headless Chromium: a page from the recorder that fetches (GET, POST JSON, POST multipart) and then submits a form
# (POST urlencoded) to its own origin. The recorder marks the form's arrival; then the browser is stopped.
chromium_case() {
    chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
        --disable-component-update --disable-sync --disable-default-apps --disable-extensions --no-pings \
        --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" --user-data-dir="$work/chromium" \
        "$BASE/page.html" >"$work/chromium.log" 2>&1 &
    local browser=$!
    for _ in $(seq 300); do [ -e "$work/.chromium-done" ] && break; sleep 0.1; done
    [ -e "$work/.chromium-done" ] || echo "    (chromium: the form post never arrived; see $work/chromium.log)"
    sleep 1 # the form's response page loads; nothing more is sent
    kill "$browser"
    wait "$browser" 2>/dev/null || true
}
run_case chromium chromium_case

printf '%s\n' "${summary[@]}"
[ -z "$proxy" ] || exit 0
{
    echo "Captured $(date -u +%Y-%m-%d) on $(. /etc/os-release && echo "$PRETTY_NAME") by Tests/differential/clients/capture.sh"
    echo "curl: $(curl --version | head -1 | cut -d' ' -f1-2)"
    echo "wget: $(wget --version | head -1 | cut -d' ' -f1-3)"
    echo "python3: $("$python" --version | cut -d' ' -f2)"
    "$python" -c 'import requests, httpx, aiohttp, websockets
print("requests:", requests.__version__); print("httpx:", httpx.__version__)
print("aiohttp:", aiohttp.__version__); print("websockets:", websockets.__version__)'
    echo "go: $(go version | cut -d' ' -f3)"
    echo "node: $(node --version)"
    echo "java: $(java -version 2>&1 | head -1)"
    echo "git: $(git --version | cut -d' ' -f3)"
    echo "chromium: $(chromium --version 2>/dev/null | head -1 | cut -d' ' -f2)"
} >"$out/versions.txt"
ls -l "$out"
