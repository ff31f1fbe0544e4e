#!/usr/bin/env python3
"""A WebSocket server that greets each client on connect, reached directly and through a live bearer-proxy
(WebSocketEarlyBytesTests' finding, seen with real software): counts the connections on which the client gets the
greeting within 3 seconds. Run by hand with Debian's python3-websockets; only 127.0.0.1.

    /usr/bin/python3 websocket-greeting.py .build/debug/bearer-proxy

On 2026-11-26 (NIOHTTP1 data plane), three runs of 30 connections: directly 30 of 30 each time; through the proxy
21, 19 and 20 of 30 — when the greeting arrives in the same read as the 101, it waits in the proxy until the upstream
sends more.
"""

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import websockets


async def greet(ws, path=None):
    """Greets at once, then echoes."""
    await ws.send("hello from upstream")
    try:
        async for message in ws:
            await ws.send("echo " + message)
    except Exception:
        pass


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def main():
    server = await websockets.serve(greet, "127.0.0.1", 0)
    up = server.sockets[0].getsockname()[1]
    pp = free_port()
    cfg = {"listen": f"127.0.0.1:{pp}", "account": {"flow": "dev"},
           "routes": [{"prefix": "/api", "upstream": f"http://127.0.0.1:{up}", "scopes": ["api://api/Read"]}]}
    config = os.path.join(tempfile.mkdtemp(), "routes.json")
    with open(config, "w") as file:
        file.write(json.dumps(cfg))
    proxy = subprocess.Popen([sys.argv[1], "serve", "--config", config, "--no-persist"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{pp}/-/health")
                break
            except Exception:
                time.sleep(0.05)
        for label, port, prefix in [("direct", up, ""), ("through the proxy", pp, "/api")]:
            results = []
            for attempt in range(30):
                async with websockets.connect(f"ws://127.0.0.1:{port}{prefix}/ws") as ws:
                    try:
                        results.append(await asyncio.wait_for(ws.recv(), 3) == "hello from upstream")
                    except asyncio.TimeoutError:
                        results.append(False)
            print(label, "greeting received in", sum(results), "of", len(results), "connections")
    finally:
        proxy.terminate()
        proxy.wait()
        server.close()


if __name__ == "__main__":
    asyncio.run(main())
