"""A hostile client for the request body's backpressure (#24 session 19): sends a POST announcing LIMIT bytes and
writes its body as fast as the socket takes it, until the proxy has taken LIMIT bytes or has taken nothing for
STALL seconds (it stopped reading, as it must while the upstream reads nothing).

Usage: flooding_uploader.py PORT LIMIT_BYTES STALL_SECONDS
Prints one JSON object: how many body bytes the socket accepted, and whether writing stalled before LIMIT.
"""

import json
import select
import socket
import sys


def main(port, limit, stall):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect(("127.0.0.1", port))
    s.sendall(f"POST /api/upload HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {limit}\r\n\r\n".encode())
    s.setblocking(False)
    chunk = b"x" * 65536
    sent, stalled = 0, False
    while sent < limit:
        _, writable, _ = select.select([], [s], [], stall)
        if not writable:
            stalled = True
            break
        try:
            sent += s.send(chunk[: min(len(chunk), limit - sent)])
        except BlockingIOError:
            continue
        except OSError:
            break  # the proxy closed the connection: what it took is what counts
    print(json.dumps({"sent": sent, "stalled": stalled}))
    s.close()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]))
