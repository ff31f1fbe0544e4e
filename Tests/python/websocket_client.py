"""A WebSocket client (the `websockets` library) that plays the tunnel tests' script through the proxy.

Usage: websocket_client.py URL [ORIGIN]       the whole script
       websocket_client.py --idle URL         connect, say nothing, report how the tunnel ended
Prints one JSON object: the answers it got, or the status and body of a refused handshake. Never prints a token.
"""

import asyncio
import json
import os
import sys

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus


async def play(url, origin):
    result = {}
    try:
        async with connect(url, origin=origin, max_size=None, ping_interval=None, compression=None,
                           open_timeout=20, close_timeout=20) as ws:
            await ws.send("hello")
            result["echo"] = await ws.recv()
            await ws.send("whoami")
            result["whoami"] = await ws.recv()
            big = os.urandom(10 * 1024 * 1024)
            await ws.send(big)
            result["big"] = (await ws.recv()) == big
            for i in range(1000):
                await ws.send(f"m{i}")
            received = [await ws.recv() for _ in range(1000)]
            result["ordered"] = received == [f"m{i}" for i in range(1000)]
            await ws.send("ping-me")
            result["ping"] = await ws.recv()
            await ws.close(1000, "bye")
            result["close_code"] = ws.protocol.close_rcvd.code if ws.protocol.close_rcvd else None
    except InvalidStatus as refused:
        result["refused"] = refused.response.status_code
        result["body"] = refused.response.body.decode("utf-8", "replace")
    return result


async def idle(url):
    """Waits, silent, until the other side ends the connection (the proxy's idle limit)."""
    async with connect(url, max_size=None, ping_interval=None, compression=None, open_timeout=20) as ws:
        try:
            await ws.recv()
            return {"ended": "message"}
        except ConnectionClosed as closed:
            return {"ended": "closed", "close_code": closed.rcvd.code if closed.rcvd else None}


if __name__ == "__main__":
    if sys.argv[1] == "--idle":
        run = idle(sys.argv[2])
    else:
        run = play(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
    print(json.dumps(asyncio.run(asyncio.wait_for(run, 60))))
