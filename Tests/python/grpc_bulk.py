"""Large gRPC streams through the proxy with grpcio, against grpc_echo_server.py: MIB messages of 1 MiB up (Sink,
client streaming) and MIB down (Source, server streaming), each checked by SHA-256 end to end.

Usage: grpc_bulk.py PORT SERVICE MIB

Prints one JSON object: for each direction the bytes and SHA-256 this side saw and what the server said it saw (or
sent), and how long each took in seconds (reported, never judged).
"""

import hashlib
import json
import sys
import time

import grpc

MESSAGE = 1024 * 1024
LIMIT = 16 * 1024 * 1024


def pattern(size):
    """The same fixed pattern as grpc_echo_server.py's: every byte is its offset modulo 251."""
    return bytes(index % 251 for index in range(size))


def main() -> int:
    port, service, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
    options = [("grpc.max_receive_message_length", LIMIT), ("grpc.max_send_message_length", LIMIT)]
    block = pattern(MESSAGE)
    expected = hashlib.sha256()
    for _ in range(mib):
        expected.update(block)
    result = {"expected": f"{mib * MESSAGE} {expected.hexdigest()}"}
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
        started = time.monotonic()
        answer = channel.stream_unary(f"/{service}/Sink")((block for _ in range(mib)), timeout=300)
        result["up"] = {"server": answer.decode(), "seconds": round(time.monotonic() - started, 2)}

        started = time.monotonic()
        call = channel.unary_stream(f"/{service}/Source")(b"%d %d" % (mib, MESSAGE), timeout=300)
        digest, total = hashlib.sha256(), 0
        for message in call:
            digest.update(message)
            total += len(message)
        trailers = dict(call.trailing_metadata() or ())
        result["down"] = {"client": f"{total} {digest.hexdigest()}", "server": trailers.get("x-sha256", ""),
                          "seconds": round(time.monotonic() - started, 2)}
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
