"""The four kinds of gRPC call through the proxy with grpcio, against grpc_echo_server.py.

Usage: grpc_calls.py PORT SERVICE

Prints one JSON object per call: its kind, the status code's name, the details, the answers and the trailing metadata.
"""

import json
import sys

import grpc


def outcome(kind, call_result):
    try:
        answers, trailers = call_result()
        return {"kind": kind, "code": "OK", "details": "", "answers": [a.decode() for a in answers],
                "trailers": dict(trailers or ())}
    except grpc.RpcError as error:
        return {"kind": kind, "code": error.code().name, "details": error.details() or "", "answers": [],
                "trailers": dict(error.trailing_metadata() or ())}


def main() -> int:
    port, service = sys.argv[1], sys.argv[2]
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        def method(name, factory):
            return factory(f"/{service}/{name}", request_serializer=None, response_deserializer=None)

        def unary():
            answer, call = method("Unary", channel.unary_unary).with_call(b"a", timeout=20)
            return [answer], call.trailing_metadata()

        def server_stream():
            call = method("ServerStream", channel.unary_stream)(b"b", timeout=20)
            answers = list(call)
            return answers, call.trailing_metadata()

        def client_stream():
            answer, call = method("ClientStream", channel.stream_unary).with_call(iter([b"1", b"2", b"3", b"4"]),
                                                                                   timeout=20)
            return [answer], call.trailing_metadata()

        def bidi():
            call = method("Bidi", channel.stream_stream)(iter([b"x", b"y"]), timeout=20)
            answers = list(call)
            return answers, call.trailing_metadata()

        def fail():
            answer, call = method("Fail", channel.unary_unary).with_call(b"z", timeout=20)
            return [answer], call.trailing_metadata()

        for kind, call in [("unary", unary), ("server-stream", server_stream), ("client-stream", client_stream),
                           ("bidi", bidi), ("fail", fail)]:
            print(json.dumps(outcome(kind, call)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
