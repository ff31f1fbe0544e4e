#!/usr/bin/env python3
"""A minimal OAuth authorization server for benchmarks, on 127.0.0.1 only: its discovery document lists ES256 in
dpop_signing_alg_values_supported, and its token endpoint answers any client-credentials request with a token of
about 1 KiB valid for an hour — token_type DPoP when the request carried a DPoP proof (RFC 9449 §5), Bearer otherwise.
It checks nothing: it only lets bench/dpop-ab.sh give bearer-proxy a DPoP-bound token to send upstream.

    python3 bench/dpop_issuer.py PORT
"""
import http.server
import json
import sys

PORT = int(sys.argv[1])
BASE = f"http://127.0.0.1:{PORT}"
TOKEN = "bench-" + "t" * 1018


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.answer({"issuer": BASE, "token_endpoint": BASE + "/token",
                     "dpop_signing_alg_values_supported": ["ES256"]})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        kind = "DPoP" if self.headers.get("dpop") else "Bearer"
        self.answer({"access_token": TOKEN, "token_type": kind, "expires_in": 3600})

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
