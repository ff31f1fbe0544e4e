#!/usr/bin/env python3
"""Python's h11 as one of the three reference parsers of the differential harness (issue #24 condition 2).

Frames a whole byte stream with an h11 Connection -- SERVER for requests, CLIENT for responses -- answering each
message so that start_next_cycle can read the next one (pipelining), and prints what it found as JSON in the message
model the Swift tests compare (Tests/differential/README.md).

    frame_stream.py [--responses] FILE    one stream from FILE ("-" for stdin), one JSON document
    frame_stream.py [--responses] --batch one stream per stdin line: base64 bytes, a space, comma-separated read
                                          split offsets (may be empty); one JSON line out per line in
"""

import argparse
import base64
import json
import sys

import h11

# NIOHTTP1's default limit on a head (80 KiB), so that a size limit is not what makes the references differ; h11's
# own default is 16 KiB.
MAX_HEAD = 80 * 1024


def pairs(headers):
    """Field lines as [lowercase name, value], in the order they came (h11 keeps the raw order)."""
    return [[name.decode("latin-1").lower(), value.decode("latin-1")] for name, value in headers.raw_items()]


def switches(request):
    """Whether the server takes the upgrade h11 offers it: CONNECT, or Upgrade with the "upgrade" connection option
    (RFC 9110 §7.8, §9.3.6) -- llhttp's rule, which the Go program follows too. h11 pauses on any Upgrade field and
    leaves the choice to the server; one that declines answers as usual and h11 reads on (its docs, "Switching
    protocols")."""
    if request.method == b"CONNECT":
        return True
    options = [option.strip().lower() for name, value in request.headers if name == b"connection"
               for option in value.split(b",")]
    return any(name == b"upgrade" for name, _ in request.headers) and b"upgrade" in options


def keeps_alive_http10(request):
    """An HTTP/1.0 request whose Connection options name keep-alive and not close (RFC 9112 §9.3, tokens of a list
    in any case): llhttp and net/http read the next request after it, as a server that honours HTTP/1.0's keep-alive
    does. h11 never honours it (it closes after every HTTP/1.0 message), so the harness reads what follows with a
    new h11 connection: each request is still framed by h11 alone, and persistence is the server's choice, as the
    upgrade is in switches()."""
    if request.http_version != b"1.0":
        return False
    options = [option.strip(b" \t").lower() for name, value in request.headers if name == b"connection"
               for option in value.split(b",")]
    return b"keep-alive" in options and b"close" not in options


def pieces(data, splits):
    start = 0
    for split in sorted(splits) + [len(data)]:
        if split > start:
            yield data[start:split]
            start = split


def frame(data, splits, responses):
    conn = h11.Connection(h11.CLIENT if responses else h11.SERVER, max_incomplete_event_size=MAX_HEAD)
    messages = []
    current = None
    fed = 0
    consumed = 0
    request = None

    def verdict(end, error=None):
        return {"messages": messages, "end": end, "error": error, "leftover": len(data) - consumed}

    def ask():
        # A response is framed against the request it answers: a GET, so that a body is read (RFC 9112 §6.3).
        conn.send(h11.Request(method="GET", target="/", headers=[("Host", "reference")]))
        conn.send(h11.EndOfMessage())

    if responses:
        ask()
    chunks = pieces(data, splits)
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                chunk = next(chunks, None)
                if chunk is None:
                    if responses and (current is not None or conn.trailing_data[0]):
                        # The upstream closes: a body delimited by the close ends here (RFC 9112 §6.3 rule 8).
                        conn.receive_data(b"")
                        continue
                    return verdict("clean" if current is None and not conn.trailing_data[0] else "incomplete")
                fed += len(chunk)
                conn.receive_data(chunk)
                continue
            if event is h11.PAUSED:
                return verdict("upgrade")
            if isinstance(event, h11.ConnectionClosed):
                return verdict("clean" if current is None else "incomplete")
            if isinstance(event, (h11.Request, h11.Response, h11.InformationalResponse)):
                request = event
                current = {"version": "HTTP/" + event.http_version.decode(), "fields": pairs(event.headers),
                           "body": b"", "trailers": []}
                if isinstance(event, h11.Request):
                    current["method"] = event.method.decode("latin-1")
                    current["target"] = event.target.decode("latin-1")
                else:
                    current["status"] = event.status_code
                if isinstance(event, h11.InformationalResponse):
                    current["body"] = ""
                    messages.append(current)
                    current = None
                    consumed = fed - len(conn.trailing_data[0])
            elif isinstance(event, h11.Data):
                current["body"] += bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                current["trailers"] = pairs(event.headers)
                current["body"] = base64.b64encode(current["body"]).decode()
                messages.append(current)
                current = None
                consumed = fed - len(conn.trailing_data[0])
                if not responses:
                    if conn.their_state is h11.MIGHT_SWITCH_PROTOCOL and switches(request):
                        return verdict("upgrade")
                    conn.send(h11.Response(status_code=200, headers=[("Content-Length", "0")]))
                    conn.send(h11.EndOfMessage())
                # A body delimited by the close ended the connection too (h11 still says DONE here).
                closed = conn.trailing_data[1]
                if not responses and not closed and keeps_alive_http10(request):
                    rest = conn.trailing_data[0]
                    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
                    if rest:  # to h11, no bytes is the end of the input
                        conn.receive_data(rest)
                    continue
                if closed or conn.their_state is h11.MUST_CLOSE or conn.our_state is h11.MUST_CLOSE:
                    return verdict("close")
                conn.start_next_cycle()
                if responses:
                    ask()
    except h11.RemoteProtocolError as error:
        return verdict("error", str(error))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", action="store_true", help="frame responses (to GET requests)")
    parser.add_argument("--batch", action="store_true", help="one base64 stream per stdin line")
    parser.add_argument("file", nargs="?")
    args = parser.parse_args()
    if args.batch:
        out = sys.stdout
        for line in sys.stdin:
            encoded, _, splits = line.rstrip("\n").partition(" ")
            offsets = [int(split) for split in splits.split(",") if split]
            out.write(json.dumps(frame(base64.b64decode(encoded), offsets, args.responses)) + "\n")
        out.flush()
    elif args.file:
        data = sys.stdin.buffer.read() if args.file == "-" else open(args.file, "rb").read()
        print(json.dumps(frame(data, [], args.responses)))
    else:
        parser.error("give FILE or --batch")


if __name__ == "__main__":
    main()
