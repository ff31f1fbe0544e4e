"""A gRPC server nobody here wrote (grpcio), for the end-to-end tests: every call must carry
`authorization: Bearer ...` or it is refused with UNAUTHENTICATED; the four kinds of call echo what they get.

Usage: grpc_echo_server.py [--tls CERT KEY]
(says "listening on http://127.0.0.1:PORT" on stderr, then serves until killed; with --tls, over TLS with ALPN h2)

Methods (any service name): Unary, ServerStream (answers with 3 messages), ClientStream (answers once, with the
count), Bidi (echoes each), Fail (aborts with NOT_FOUND and a message). Each answer's trailing metadata says which
audience the token named: `x-token-aud`.

Methods that wait for the client to go, each named by the call's `x-call-id` metadata: Slow (unary, never answers)
and Hold (server streaming: one message, `ready`, then nothing). Neither sleeps: each waits for its call to end —
cancelled by the client, reset by a proxy, or past its deadline — which grpcio tells it (`context.add_callback`).
`/ctl/Ended` (unary, its request a call id, no token needed) answers once that call has ended that way: `ended`, or
`still running` after 30 s.

Bulk methods, for large streams: Sink (client streaming: answers `BYTES SHA256HEX` of every message's bytes) and
Source (server streaming: the request is `COUNT SIZE`; answers COUNT messages of SIZE bytes of a fixed pattern, and
their `BYTES SHA256HEX` in the trailing metadata `x-sha256`).
"""

import base64
import hashlib
import json
import sys
import threading
from concurrent import futures

import grpc

# Calls that ended before their handler answered, by call id; `/ctl/Ended` waits on them.
ENDED = {}
ENDED_LOCK = threading.Lock()


def ended_event(call_id):
    with ENDED_LOCK:
        return ENDED.setdefault(call_id, threading.Event())


def pattern(size):
    """SIZE bytes of a fixed pattern: every byte is its offset modulo 251."""
    return bytes(index % 251 for index in range(size))


def watch_end(context):
    """The event grpcio sets once the call is over (its callback runs on cancellation, reset or deadline)."""
    call_id = dict(context.invocation_metadata()).get("x-call-id", "")
    ended = ended_event(call_id)
    if not context.add_callback(ended.set):
        ended.set()  # it ended before the callback could be added
    return ended


def subject(context):
    metadata = dict(context.invocation_metadata())
    authorization = metadata.get("authorization", "")
    if not authorization.startswith("Bearer "):
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "no bearer token")
    payload = authorization[len("Bearer "):].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    context.set_trailing_metadata((("x-token-aud", str(claims.get("aud", ""))),))
    return claims


class Echo(grpc.GenericRpcHandler):
    def service(self, details):
        method = details.method.rsplit("/", 1)[-1]

        def unary(request, context):
            subject(context)
            return b"unary:" + request

        def server_stream(request, context):
            subject(context)
            for index in range(3):
                yield b"part%d:" % index + request

        def client_stream(requests, context):
            subject(context)
            return b"count:%d" % sum(1 for _ in requests)

        def bidi(requests, context):
            subject(context)
            for request in requests:
                yield b"echo:" + request

        def fail(request, context):
            subject(context)
            context.abort(grpc.StatusCode.NOT_FOUND, "no such thing: été")

        def slow(request, context):
            subject(context)
            watch_end(context).wait()
            return b"too late"

        def hold(request, context):
            subject(context)
            # Watched before `ready` goes: a cancel that comes while grpcio still sends it fails that send, and
            # grpcio then never resumes this generator (a watch added after the yield would never be).
            ended = watch_end(context)
            yield b"ready"
            ended.wait()

        def sink(requests, context):
            subject(context)
            digest, total = hashlib.sha256(), 0
            for request in requests:
                digest.update(request)
                total += len(request)
            return b"%d %s" % (total, digest.hexdigest().encode())

        def source(request, context):
            subject(context)
            count, size = (int(part) for part in request.split())
            block, digest = pattern(size), hashlib.sha256()
            for _ in range(count):
                digest.update(block)
                yield block
            context.set_trailing_metadata(
                (("x-token-aud", subject(context).get("aud", "")),
                 ("x-sha256", "%d %s" % (count * size, digest.hexdigest()))))

        def ended(request, context):
            if ended_event(request.decode()).wait(30):
                return b"ended"
            return b"still running"

        if details.method == "/ctl/Ended":
            return grpc.unary_unary_rpc_method_handler(ended)

        handlers = {
            "Unary": grpc.unary_unary_rpc_method_handler(unary),
            "ServerStream": grpc.unary_stream_rpc_method_handler(server_stream),
            "ClientStream": grpc.stream_unary_rpc_method_handler(client_stream),
            "Bidi": grpc.stream_stream_rpc_method_handler(bidi),
            "Fail": grpc.unary_unary_rpc_method_handler(fail),
            "Slow": grpc.unary_unary_rpc_method_handler(slow),
            "Hold": grpc.unary_stream_rpc_method_handler(hold),
            "Sink": grpc.stream_unary_rpc_method_handler(sink),
            "Source": grpc.unary_stream_rpc_method_handler(source),
        }
        return handlers.get(method)


# Large enough for the bulk methods' messages (a few MiB each).
MESSAGE_LIMIT = 16 * 1024 * 1024


def main() -> int:
    options = [("grpc.max_receive_message_length", MESSAGE_LIMIT), ("grpc.max_send_message_length", MESSAGE_LIMIT)]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), handlers=[Echo()], options=options)
    if sys.argv[1:2] == ["--tls"]:
        with open(sys.argv[2], "rb") as cert, open(sys.argv[3], "rb") as key:
            credentials = grpc.ssl_server_credentials([(key.read(), cert.read())])
        port = server.add_secure_port("127.0.0.1:0", credentials)
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"listening on http://127.0.0.1:{port}", file=sys.stderr, flush=True)
    server.wait_for_termination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
