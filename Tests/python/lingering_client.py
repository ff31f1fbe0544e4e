"""A client that never closes (#24 session 18): sends a request the proxy refuses, reads the answer up to the proxy's
FIN, then keeps sending a byte every 50 ms — each one a read, and so a chance for the proxy to re-arm its timers —
and waits for the proxy to close the connection for good (its lingering close has a limit of its own).

Usage: lingering_client.py PORT LIMIT
Prints one JSON object: the answer's status line, and the seconds from the FIN to the full close (null if the proxy
had not closed after LIMIT seconds).
"""

import json
import socket
import sys
import time


def main(port, limit):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"BREW /api/x HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    answer = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        answer += chunk
    fin = time.monotonic()
    closed = None
    s.settimeout(0.05)
    while time.monotonic() - fin < limit:
        try:
            s.sendall(b"x")
            s.recv(1)
        except socket.timeout:
            continue
        except OSError:
            closed = time.monotonic() - fin
            break
    print(json.dumps({"status": answer.split(b"\r\n", 1)[0].decode("latin-1"), "closed_after": closed}))


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]))
