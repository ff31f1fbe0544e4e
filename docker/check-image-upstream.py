#!/usr/bin/env python3
"""Loopback upstreams for docker/check-image.sh (standard library only).

    check-image-upstream.py DIR HTTP_PORT HTTPS_PORT SLOW_PORT SLOW_SECONDS

- http://127.0.0.1:HTTP_PORT and https://localhost:HTTPS_PORT (certificate DIR/server.crt, key DIR/server.key)
  answer every request with JSON: method, path, query, the header names, the claims of the bearer token
  (decoded, never the token itself), and whether a client-key header arrived.
- http://127.0.0.1:SLOW_PORT waits SLOW_SECONDS, then answers "slow done": a request in flight for the SIGTERM check.

Binds 127.0.0.1 only. Writes DIR/upstream.ready when all three listen; runs until killed.
"""

import base64
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit


def claims_of(authorization: str | None) -> dict | None:
    if not authorization or not authorization.startswith("Bearer "):
        return None
    parts = authorization[len("Bearer "):].split(".")
    if len(parts) != 3:
        return {"error": "not a JWT"}
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    return json.loads(base64.urlsafe_b64decode(payload))


class Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        target = urlsplit(self.path)
        body = json.dumps({
            "method": self.command,
            "path": target.path,
            "query": target.query,
            "headers": sorted(self.headers.keys()),
            "claims": claims_of(self.headers.get("Authorization")),
            "clientKeyForwarded": any(name.lower() in ("x-bearer-proxy-key", "proxy-authorization")
                                      for name in self.headers.keys()),
        }, indent=2).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = answer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        sys.stderr.write(f"upstream {self.server.server_address[1]}: {format % args}\n")


class Slow(Echo):
    def answer(self) -> None:
        time.sleep(float(sys.argv[5]))
        body = b"slow done\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = answer


def main() -> None:
    directory = Path(sys.argv[1])
    http_port, https_port, slow_port = (int(p) for p in sys.argv[2:5])
    servers = [ThreadingHTTPServer(("127.0.0.1", http_port), Echo),
               ThreadingHTTPServer(("127.0.0.1", https_port), Echo),
               ThreadingHTTPServer(("127.0.0.1", slow_port), Slow)]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(directory / "server.crt", directory / "server.key")
    servers[1].socket = context.wrap_socket(servers[1].socket, server_side=True)
    for server in servers:
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    (directory / "upstream.ready").write_text("ready\n")
    threading.Event().wait()


if __name__ == "__main__":
    main()
