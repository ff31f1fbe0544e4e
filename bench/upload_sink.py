#!/usr/bin/env python3
"""Loopback upload sink for bench/run.sh (BENCH_BIG=1).

Reads the whole request body of a PUT/POST (Content-Length or chunked), hashes it, and answers
only after the last byte arrived: {"bytes": N, "sha256": "..."}. GET answers {"ok": true} (used
as the readiness probe). Usage: upload_sink.py HOST PORT
"""

import hashlib
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = 256 * 1024


class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and `Expect: 100-continue` is answered

    def log_message(self, *args):  # quiet: the benchmark only wants the answer
        pass

    def _reply(self, code, obj):
        body = (json.dumps(obj) + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _read_exactly(self, remaining, digest):
        total = 0
        while remaining > 0:
            data = self.rfile.read(min(CHUNK, remaining))
            if not data:
                raise ConnectionError("body ended early")
            digest.update(data)
            total += len(data)
            remaining -= len(data)
        return total

    def _consume(self):
        digest = hashlib.sha256()
        total = 0
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            while True:
                line = self.rfile.readline(65537)
                if not line:
                    raise ConnectionError("body ended early")
                size = int(line.split(b";", 1)[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    break
                total += self._read_exactly(size, digest)
                self.rfile.readline(65537)  # CRLF after the chunk
        else:
            total = self._read_exactly(int(self.headers.get("Content-Length", "0")), digest)
        return total, digest.hexdigest()

    def do_GET(self):
        self._reply(200, {"ok": True})

    def do_PUT(self):
        total, hexdigest = self._consume()
        self._reply(200, {"bytes": total, "sha256": hexdigest})

    do_POST = do_PUT


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: upload_sink.py HOST PORT")
    server = ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), Sink)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
