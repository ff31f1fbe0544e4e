"""One gRPC unary call through the proxy with grpcio, a client nobody here wrote.

Usage: grpc_call.py PORT METHOD [KEY=VALUE metadata ...]

METHOD is the full method path (/pkg.Service/Method). The request is raw bytes (no generated stubs: the proxy
never reads messages). Prints one JSON object: the status code's name, its number, and the details.
"""

import json
import sys

import grpc


def main() -> int:
    port, method = sys.argv[1], sys.argv[2]
    metadata = [tuple(pair.split("=", 1)) for pair in sys.argv[3:]]
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
        try:
            reply = call(b"\x08\x01", metadata=metadata, timeout=20)
            print(json.dumps({"code": "OK", "value": 0, "details": "", "reply": reply.hex()}))
        except grpc.RpcError as error:
            code = error.code()
            print(json.dumps({"code": code.name, "value": code.value[0], "details": error.details() or ""}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
