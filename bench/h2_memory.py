#!/usr/bin/env python3
"""What an idle HTTP/2 connection and an open stream cost `bearer-proxy serve` in resident memory.

    python3 bench/h2_memory.py PID PORT [CONNECTIONS] [STREAM_CONNECTIONS] [STREAMS]

PID is a running `serve` (one loop is the figure docs/benchmarks.md states), PORT its listener on 127.0.0.1. First
CONNECTIONS (1,000) connections send the preface and SETTINGS and open no stream; then STREAM_CONNECTIONS (10) more
each open STREAMS (100) streams whose HEADERS do not end them, so every request waits for a body that never comes
(no upstream connection is made). VmRSS is read from /proc/PID/status before, after each step, and once more after a
pause; each step's growth divided by what it opened is the figure. Needs Python's h2 (pip install h2).
"""

import socket
import sys
import time

import h2.config
import h2.connection


def rss_kib(pid):
    with open("/proc/%d/status" % pid, encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for %d" % pid)


def settle(pid):
    """VmRSS once it has stopped moving (the loop has read everything sent)."""
    last = -1
    for _ in range(50):
        time.sleep(0.2)
        now = rss_kib(pid)
        if now == last:
            return now
        last = now
    return last


def open_connection(port):
    sock = socket.create_connection(("127.0.0.1", port))
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    return sock, conn


def main(argv):
    pid, port = int(argv[1]), int(argv[2])
    connections = int(argv[3]) if len(argv) > 3 else 1000
    stream_connections = int(argv[4]) if len(argv) > 4 else 10
    streams = int(argv[5]) if len(argv) > 5 else 100
    held = []
    before = settle(pid)
    for _ in range(connections):
        held.append(open_connection(port))
    idle = settle(pid)
    for _ in range(stream_connections):
        sock, conn = open_connection(port)
        for index in range(streams):
            stream_id = conn.get_next_available_stream_id()
            conn.send_headers(stream_id, [(":method", "POST"), (":scheme", "http"), (":authority", "127.0.0.1"),
                                          (":path", "/bench/wait-%d" % index), ("content-length", "10")])
        sock.sendall(conn.data_to_send())
        held.append((sock, conn))
    with_streams = settle(pid)
    print("VmRSS before: %.1f MiB" % (before / 1024))
    print("%d idle connections: %.1f MiB, %.1f KiB each" % (connections, idle / 1024, (idle - before) / connections))
    opened = stream_connections * streams
    print("%d connections with %d open streams each: %.1f MiB, %.1f KiB a stream (its connection's share included)"
          % (stream_connections, streams, with_streams / 1024, (with_streams - idle) / opened))
    for sock, _ in held:
        sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
