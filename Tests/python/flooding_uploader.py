"""A hostile client for the request body's backpressure (#24 session 19): sends a POST announcing LIMIT bytes and
writes its body as fast as the socket takes it, until the proxy has taken LIMIT bytes or has taken nothing for
STALL seconds (it stopped reading, as it must while the upstream reads nothing).

Usage: flooding_uploader.py PORT LIMIT_BYTES STALL_SECONDS [WAIT_SECONDS]
With WAIT_SECONDS, after a stall it goes on pushing body bytes whenever the socket takes any — so that the proxy
never sees this client stall — and waits up to that long for the proxy to end the exchange: its answer's status
line, or the connection closed or reset (a close with unread body bytes is a reset, which may discard the answer).
Prints one JSON object: how many body bytes the socket accepted in all, whether writing stalled before LIMIT, and —
when waiting — the status line that came (or null) and whether the connection ended within the wait.
"""

import json
import select
import socket
import sys
import time


def main(port, limit, stall, wait):
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
    report = {"sent": sent, "stalled": stalled}
    if stalled and wait > 0:
        received, ended = b"", False
        deadline = time.monotonic() + wait
        while not ended and time.monotonic() < deadline:
            want_write = [s] if sent < limit else []
            readable, writable, _ = select.select([s], want_write, [], max(0.0, deadline - time.monotonic()))
            try:
                if readable:
                    data = s.recv(65536)
                    if not data:
                        ended = True
                    received += data
                elif writable:
                    sent += s.send(chunk[: min(len(chunk), limit - sent)])
            except BlockingIOError:
                pass
            except OSError:
                ended = True  # reset
        report["sent"] = sent
        report["status_line"] = received.split(b"\r\n", 1)[0].decode("latin-1") if received else None
        report["ended"] = ended
    print(json.dumps(report))
    s.close()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]) if len(sys.argv) > 4 else 0)
