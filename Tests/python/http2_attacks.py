"""HTTP/2's own attacks against the proxy, with python-hyper's h2 and hyperframe (an HTTP/2 stack nobody here wrote):
each one sends what a hostile client sends, then reads until the proxy closes the connection or the time is up.

Usage: http2_attacks.py PORT ATTACK LIMIT
Prints one JSON object:
  goaway          the error code of the GOAWAY the proxy sent (null if none),
  resets          {stream id: error code} of the RST_STREAM frames it sent,
  statuses        {stream id: :status} of the responses it sent,
  closed          whether the proxy closed the connection within LIMIT seconds,
  sent_all        whether the whole attack was written before the proxy stopped reading.
"""

import json
import socket
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.settings
from hyperframe.frame import (
    ContinuationFrame,
    DataFrame,
    HeadersFrame,
    PingFrame,
    RstStreamFrame,
    SettingsFrame,
    WindowUpdateFrame,
)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def request_block(encoder, port, path="/api/x", extra=()):
    fields = [(":method", "GET"), (":scheme", "http"), (":path", path), (":authority", f"127.0.0.1:{port}")]
    return encoder.encode(fields + list(extra))


def attack_bytes(name, port):
    """The attack's bytes, after the preface, the client's SETTINGS and the acknowledgement of the server's."""
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, validate_outbound_headers=False))
    encoder = conn.encoder
    out = []
    if name == "rapid-reset":
        # CVE-2023-44487: open a stream and cancel it at once, over and over.
        for index in range(1000):
            stream = 1 + 2 * index
            frame = HeadersFrame(stream, request_block(encoder, port))
            frame.flags.add("END_HEADERS")
            frame.flags.add("END_STREAM")
            out.append(frame.serialize())
            out.append(RstStreamFrame(stream, error_code=8).serialize())
    elif name == "continuation-flood":
        # CVE-2024-27316 and kin: a header section that never ends, in endless CONTINUATION frames.
        frame = HeadersFrame(1, request_block(encoder, port))
        out.append(frame.serialize())
        for _ in range(10000):
            out.append(ContinuationFrame(1, b"\x40\x01a\x01b").serialize())
    elif name == "header-list-too-large":
        # An HPACK bomb's shape: one header section far over SETTINGS_MAX_HEADER_LIST_SIZE.
        extra = [(f"x-{index}", "v" * 4000) for index in range(64)]
        block = request_block(encoder, port, extra=extra)
        first, rest = block[:16000], block[16000:]
        frame = HeadersFrame(1, first)
        frame.flags.add("END_STREAM")
        out.append(frame.serialize())
        while rest:
            piece, rest = rest[:16000], rest[16000:]
            cont = ContinuationFrame(1, piece)
            if not rest:
                cont.flags.add("END_HEADERS")
            out.append(cont.serialize())
    elif name == "settings-flood":
        for _ in range(5000):
            out.append(SettingsFrame(0, settings={h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 100}).serialize())
    elif name == "ping-flood":
        for index in range(5000):
            out.append(PingFrame(0, opaque_data=index.to_bytes(8, "big")).serialize())
    elif name == "empty-data-flood":
        frame = HeadersFrame(1, request_block(encoder, port))
        frame.flags.add("END_HEADERS")
        out.append(frame.serialize())
        for _ in range(5000):
            out.append(DataFrame(1, b"").serialize())
    elif name == "window-overflow":
        # A window over 2^31-1 is a flow-control error (RFC 9113 §6.9.1).
        out.append(WindowUpdateFrame(0, window_increment=2**31 - 1).serialize())
        out.append(WindowUpdateFrame(0, window_increment=2**31 - 1).serialize())
    elif name == "too-many-streams":
        # Streams that never end, past SETTINGS_MAX_CONCURRENT_STREAMS.
        for index in range(150):
            frame = HeadersFrame(1 + 2 * index, request_block(encoder, port))
            frame.flags.add("END_HEADERS")
            out.append(frame.serialize())
    else:
        raise SystemExit(f"unknown attack {name}")
    return b"".join(out)


def acknowledge_settings(sock):
    """Reads up to the server's first SETTINGS frame and acknowledges it."""
    data = b""
    deadline = time.monotonic() + 5
    while len(data) < 9 and time.monotonic() < deadline:
        try:
            data += sock.recv(65536)
        except socket.timeout:
            continue
    ack = SettingsFrame(0)
    ack.flags.add("ACK")
    sock.sendall(ack.serialize())


def main(port, name, limit):
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(0.2)
    sent_all = True
    try:
        # The server's SETTINGS acknowledged first, as a client that knows them does: its limits then hold
        # (RFC 9113 §6.5.3), not only the defaults a server applies before the acknowledgement.
        sock.sendall(PREFACE + SettingsFrame(0).serialize())
        acknowledge_settings(sock)
        sock.sendall(attack_bytes(name, port))
    except OSError:
        sent_all = False
    goaway, resets, statuses, closed = None, {}, {}, False
    deadline = time.monotonic() + limit
    buffered = b""
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            closed = True
            break
        if not chunk:
            closed = True
            break
        buffered += chunk
    # Read frame by frame, not through an H2Connection: its state machine would refuse the answers to frames it never
    # sent itself.
    for event in parse_frames(buffered):
        kind, stream, value = event
        if kind == "goaway":
            goaway = value
        elif kind == "rst":
            resets[str(stream)] = value
        elif kind == "status":
            statuses[str(stream)] = value
    print(json.dumps({"goaway": goaway, "resets": resets, "statuses": statuses, "closed": closed, "sent_all": sent_all}))


def parse_frames(data):
    """The proxy's frames, by hyperframe (HPACK by h2's decoder): (kind, stream, value) for GOAWAY, RST_STREAM and
    response heads."""
    from hpack import Decoder
    from hyperframe.frame import Frame, GoAwayFrame

    decoder = Decoder()
    decoder.max_allowed_table_size = 65536
    events = []
    offset = 0
    pending_block = {}
    while offset + 9 <= len(data):
        frame, length = Frame.parse_frame_header(memoryview(data[offset : offset + 9]))
        if offset + 9 + length > len(data):
            break
        frame.parse_body(memoryview(data[offset + 9 : offset + 9 + length]))
        offset += 9 + length
        if isinstance(frame, GoAwayFrame):
            events.append(("goaway", 0, frame.error_code))
        elif isinstance(frame, RstStreamFrame):
            events.append(("rst", frame.stream_id, frame.error_code))
        elif isinstance(frame, (HeadersFrame, ContinuationFrame)):
            pending_block[frame.stream_id] = pending_block.get(frame.stream_id, b"") + frame.data
            if "END_HEADERS" in frame.flags:
                fields = decoder.decode(pending_block.pop(frame.stream_id))
                for key, value in fields:
                    key = key.decode() if isinstance(key, bytes) else key
                    value = value.decode() if isinstance(value, bytes) else value
                    if key == ":status":
                        events.append(("status", frame.stream_id, int(value)))
    return events


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], float(sys.argv[3]))
