#!/usr/bin/env python3
"""The Python clients of the capture (issue #24 condition 4): each case sends what an application using that
library sends, to the recorder at $BASE (http://127.0.0.1:PORT/api). Run by capture.sh with Debian's python3.

    clients.py CASE
"""

import asyncio
import json
import os
import sys
import urllib.parse
import urllib.request

BASE = os.environ["BASE"]


def chunks():
    """A body of unknown length: the libraries send it chunked."""
    yield b'{"part": 1}\n'
    yield b'{"part": 2}\n'


def requests_session():
    import requests
    with requests.Session() as session:  # one connection, kept alive
        session.get(BASE + "/items", params={"q": "café", "tags": "a b&c"})
        session.head(BASE + "/items/7")
        session.post(BASE + "/items", json={"name": "Zoë", "count": 2})
        session.post(BASE + "/login", data={"user": "zoë", "password": "p@ss word"})
        session.put(BASE + "/items/7", data=b"raw bytes", headers={"Content-Type": "application/octet-stream"})
        session.delete(BASE + "/items/7")


def requests_upload():
    import requests
    with requests.Session() as session:
        session.post(BASE + "/upload", files={"file": ("notes.txt", b"line one\nline two\n", "text/plain")},
                     data={"note": "hello"})
        session.post(BASE + "/stream", data=chunks())


def requests_utf8_header():
    import requests
    # A header value as UTF-8 bytes: requests passes bytes through as they are.
    requests.get(BASE + "/items", headers={"X-Display-Name": "Zoë Ångström".encode()})


def httpx_client():
    import httpx
    with httpx.Client() as client:
        client.get(BASE + "/items", params={"q": "café", "page": 2})
        client.head(BASE + "/items/7")
        client.post(BASE + "/items", json={"name": "Zoë", "count": 2})
        client.post(BASE + "/login", data={"user": "zoë", "password": "p@ss word"})
        client.post(BASE + "/upload", files={"file": ("notes.txt", b"line one\nline two\n", "text/plain")})
        client.post(BASE + "/stream", content=chunks())
        client.patch(BASE + "/items/7", content=b'{"count": 3}', headers={"Content-Type": "application/json"})


def aiohttp_client():
    import aiohttp

    async def stream():
        yield b'{"part": 1}\n'
        yield b'{"part": 2}\n'

    async def run():
        async with aiohttp.ClientSession() as session:
            async with session.get(BASE + "/items", params={"q": "café"}) as response:
                await response.read()
            async with session.head(BASE + "/items/7") as response:
                await response.read()
            async with session.post(BASE + "/items", json={"name": "Zoë", "count": 2}) as response:
                await response.read()
            async with session.post(BASE + "/login", data={"user": "zoë", "password": "p@ss word"}) as response:
                await response.read()
            form = aiohttp.FormData()
            form.add_field("file", b"line one\nline two\n", filename="notes.txt", content_type="text/plain")
            async with session.post(BASE + "/upload", data=form) as response:
                await response.read()
            async with session.post(BASE + "/stream", data=stream()) as response:
                await response.read()

    asyncio.run(run())


def urllib_client():
    # urllib.request opens a connection per request and says Connection: close.
    urllib.request.urlopen(BASE + "/items?" + urllib.parse.urlencode({"q": "café", "tags": "a b&c"})).read()
    urllib.request.urlopen(urllib.request.Request(BASE + "/items/7", method="HEAD")).read()
    form = urllib.parse.urlencode({"user": "zoë", "password": "p@ss word"}).encode()
    urllib.request.urlopen(BASE + "/login", data=form).read()
    body = json.dumps({"name": "Zoë", "count": 2}).encode()
    request = urllib.request.Request(BASE + "/items", data=body, method="PUT",
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request).read()


def websockets_client():
    import websockets

    async def run():
        async with websockets.connect(BASE.replace("http://", "ws://") + "/ws?room=caf%C3%A9") as socket:
            await socket.send("hello")
            await socket.recv()

    asyncio.run(run())


CASES = {
    "requests-session": requests_session,
    "requests-upload": requests_upload,
    "requests-utf8-header": requests_utf8_header,
    "httpx": httpx_client,
    "aiohttp": aiohttp_client,
    "urllib": urllib_client,
    "websockets": websockets_client,
}

if __name__ == "__main__":
    CASES[sys.argv[1]]()
