# Sourced by bench/counts.sh and bench/ab.sh: a temporary directory removed on exit with the processes started
# into PIDS, the local nginx upstream's configuration, and the routes.json that points bearer-proxy at it. Every
# server listens on 127.0.0.1 only.

TMP=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

# upstream_nginx_conf PORT -> $TMP/nginx.conf: one worker answering `{"ok":true}` on 127.0.0.1:PORT, keep-alive
upstream_nginx_conf() {
    cat >"$TMP/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $TMP/nginx.pid;
error_log $TMP/nginx-error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 1000000;
    server { listen 127.0.0.1:$1; location / { default_type application/json; return 200 '{"ok":true}'; } }
}
CONF
}

# bench_routes FILE LISTEN_PORT UPSTREAM_PORT: bearer-proxy on LISTEN_PORT, /bench to the upstream, the dev account
bench_routes() {
    cat >"$1" <<JSON
{ "listen": "127.0.0.1:$2", "account": { "flow": "dev" },
  "routes": [ { "prefix": "/bench", "upstream": "http://127.0.0.1:$3", "scopes": ["api://bench/.default"] } ] }
JSON
}
