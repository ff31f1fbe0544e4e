"""A hostile client for the reused head buffers (#24 session 17): pipelines COUNT requests on one connection with a
tiny receive window, then reads the answers slowly, so the proxy writes each next head while the last answer's bytes
still wait in its send queue.

Usage: slow_pipelined_client.py PORT COUNT
Request i is `GET /api/i` with `X-Request-Id: r<i>`. Prints one JSON object: for each answer in the order it came,
its status, X-Request-Id, X-Path (the upstream's header: the path it was asked for), body length, and whether every
body byte is the request's own (i mod 251).
"""

import json
import socket
import sys


def main(port, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(b"".join(
        f"GET /api/{i} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Request-Id: r{i}\r\n\r\n".encode()
        for i in range(count)))
    answers, buffer = [], b""
    while len(answers) < count:
        end = buffer.find(b"\r\n\r\n")
        if end >= 0:
            lines = buffer[:end].decode("latin-1").split("\r\n")
            fields = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
            length = int(fields.get("content-length", "0"))
            if len(buffer) >= end + 4 + length:
                body = buffer[end + 4:end + 4 + length]
                buffer = buffer[end + 4 + length:]
                n = len(answers)
                answers.append({"status": int(lines[0].split()[1]), "id": fields.get("x-request-id"),
                                "path": fields.get("x-path"), "length": length,
                                "own": body == bytes([n % 251]) * length})
                continue
        chunk = s.recv(1024)  # slowly: a small read each time
        if not chunk:
            break
        buffer += chunk
    print(json.dumps(answers))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
