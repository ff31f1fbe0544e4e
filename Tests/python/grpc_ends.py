"""A gRPC call through the proxy that ends early, with grpcio, against grpc_echo_server.py; then asks the server
directly (not through the proxy) whether its side of the call ended too.

Usage: grpc_ends.py cancel PORT SERVICE SERVER_PORT|-     (Hold: reads its first message, then cancels the call)
       grpc_ends.py deadline PORT SERVICE SERVER_PORT|- MS (Slow, with a deadline of MS milliseconds)
       grpc_ends.py stream PORT SERVICE                   (Hold: reads messages until the call ends, however it ends)

SERVER_PORT `-` skips the question (an upstream that is no grpc_echo_server.py). Prints one JSON object: the
messages read, the call's status code's name and details, and the server's word (`ended`, `still running`, or "").
"""

import json
import sys
import uuid

import grpc


def main() -> int:
    mode, port, service = sys.argv[1], sys.argv[2], sys.argv[3]
    server_port = sys.argv[4] if len(sys.argv) > 4 else "-"
    call_id = uuid.uuid4().hex
    metadata = [("x-call-id", call_id)]
    answers, code, details = [], "OK", ""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            if mode == "cancel":
                call = channel.unary_stream(f"/{service}/Hold")(b"", metadata=metadata, timeout=60)
                answers.append(next(call).decode(errors="replace"))
                call.cancel()
                code = call.code().name
            elif mode == "deadline":
                milliseconds = int(sys.argv[5])
                answers.append(channel.unary_unary(f"/{service}/Slow")(
                    b"", metadata=metadata, timeout=milliseconds / 1000).decode())
            else:
                call = channel.unary_stream(f"/{service}/Hold")(b"", metadata=metadata, timeout=60)
                for answer in call:
                    answers.append(answer.decode(errors="replace"))
        except grpc.RpcError as error:
            code, details = error.code().name, error.details() or ""
    server = ""
    if server_port != "-":
        with grpc.insecure_channel(f"127.0.0.1:{server_port}") as direct:
            server = direct.unary_unary("/ctl/Ended")(call_id.encode(), timeout=40).decode()
    print(json.dumps({"answers": answers, "code": code, "details": details, "server": server}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
