"""An HTTP/2 client that uploads as fast as the proxy's flow control lets it (python-hyper's h2, which keeps the
windows), on a stream whose upstream reads nothing; once no window has come for QUIET seconds, it asks for another
path on another stream of the same connection.

Usage: h2_stalled_upload.py PORT UPLOAD_PATH OTHER_PATH LIMIT QUIET
Prints one JSON object:
  sent          bytes of DATA the proxy's windows let through on the upload's stream,
  stalled       whether the windows stopped before LIMIT bytes (else the proxy took them all),
  other_status  the :status of the other stream's answer (null if none came within 10 s),
  other_bytes   the length of that answer's body.
"""

import json
import socket
import sys
import time

import h2.config
import h2.connection
import h2.events


def main(port, upload_path, other_path, limit, quiet):
    sock = socket.create_connection(("127.0.0.1", port))
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    authority = f"127.0.0.1:{port}"

    def head(method, path):
        return [(":method", method), (":scheme", "http"), (":path", path), (":authority", authority)]

    upload = 1
    conn.send_headers(upload, head("POST", upload_path))
    sock.sendall(conn.data_to_send())
    chunk = b"x" * 16384
    sent = 0
    stalled = False
    sock.settimeout(quiet)
    while sent < limit:
        room = min(conn.local_flow_control_window(upload), conn.max_outbound_frame_size, limit - sent)
        if room > 0:
            conn.send_data(upload, chunk[:room])
            sent += room
            sock.sendall(conn.data_to_send())
            continue
        try:
            data = sock.recv(65536)
        except socket.timeout:
            stalled = True
            break
        if not data:
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.StreamReset) and event.stream_id == upload:
                limit = sent
        sock.sendall(conn.data_to_send())

    other = 3
    conn.send_headers(other, head("GET", other_path), end_stream=True)
    sock.sendall(conn.data_to_send())
    status = None
    body = 0
    done = False
    deadline = time.monotonic() + 10
    sock.settimeout(1)
    while not done and time.monotonic() < deadline:
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        if not data:
            break
        for event in conn.receive_data(data):
            if getattr(event, "stream_id", None) != other:
                continue
            if isinstance(event, h2.events.ResponseReceived):
                status = int(dict(event.headers)[b":status"])
            elif isinstance(event, h2.events.DataReceived):
                body += len(event.data)
                conn.acknowledge_received_data(event.flow_controlled_length, other)
            elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                done = True
        sock.sendall(conn.data_to_send())
    sock.close()
    print(json.dumps({"sent": sent, "stalled": stalled, "other_status": status, "other_bytes": body}))


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
