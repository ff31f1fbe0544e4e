"""Opens many short WebSocket tunnels through the proxy, 20 at a time: each says "hello", reads the echo, closes.

Usage: websocket_churn.py URL COUNT
Prints one JSON object: {"tunnels": COUNT, "echoed": how many got their echo back}. For the memory tests: a tunnel's
handlers must be freed when it ends (ConnectionMemoryTests).
"""

import asyncio
import json
import sys

from websockets.asyncio.client import connect


async def one(url):
    async with connect(url, ping_interval=None, compression=None, open_timeout=20, close_timeout=20) as ws:
        await ws.send("hello")
        return await ws.recv() == "hello"


async def main(url, count):
    echoed = 0
    for start in range(0, count, 20):
        results = await asyncio.gather(*[one(url) for _ in range(min(20, count - start))])
        echoed += sum(results)
    print(json.dumps({"tunnels": count, "echoed": echoed}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
