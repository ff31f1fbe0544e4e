"""A gRPC server nobody here wrote (grpcio), for the end-to-end tests: every call must carry
`authorization: Bearer ...` or it is refused with UNAUTHENTICATED; the four kinds of call echo what they get.

Usage: grpc_echo_server.py   (says "listening on http://127.0.0.1:PORT" on stderr, then serves until killed)

Methods (any service name): Unary, ServerStream (answers with 3 messages), ClientStream (answers once, with the
count), Bidi (echoes each), Fail (aborts with NOT_FOUND and a message). Each answer's trailing metadata says which
audience the token named: `x-token-aud`.
"""

import base64
import json
import sys
from concurrent import futures

import grpc


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

        handlers = {
            "Unary": grpc.unary_unary_rpc_method_handler(unary),
            "ServerStream": grpc.unary_stream_rpc_method_handler(server_stream),
            "ClientStream": grpc.stream_unary_rpc_method_handler(client_stream),
            "Bidi": grpc.stream_stream_rpc_method_handler(bidi),
            "Fail": grpc.unary_unary_rpc_method_handler(fail),
        }
        return handlers.get(method)


def main() -> int:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), handlers=[Echo()])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"listening on http://127.0.0.1:{port}", file=sys.stderr, flush=True)
    server.wait_for_termination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
