#!/usr/bin/env python3
"""A loopback HTTP/1.1 server that records every byte a real client sends (issue #24 condition 4).

Each accepted connection's bytes are appended, exactly as received, to OUT/NAME-N.http (N in accept order;
connections that send nothing leave no file), and the method and target of each request it framed to
OUT/NAME-N.requests. The server answers plausibly so that each client goes on to send what
it sends to a real server: `100 Continue` to `Expect: 100-continue`, a `101` handshake and an echo to a WebSocket
client, a smart-HTTP v2 advertisement to git, a page with a script and a form to Chromium, and `200 OK` with a short
body to everything else. Its own parsing is only good enough to answer these clients: the recording is what counts,
and the recording is the raw bytes.

    recorder.py OUT NAME PORT_FILE    listens on 127.0.0.1 port 0, writes the port to PORT_FILE, runs until SIGTERM

Only 127.0.0.1: nothing here leaves the machine.
"""

import base64
import hashlib
import os
import signal
import socket
import sys
import threading

# RFC 6455 §1.3.
WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
# Any object id: git only reads it back to ask for it.
GIT_OID = b"7d1f3c6e2b9a4f5d8c0e1a2b3c4d5e6f7a8b9c0d"

PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>bearer-proxy capture</title><link rel="icon" href="data:,"></head>
<body>
<form id="form" method="post" action="/api/form">
  <input name="name" value="Zo\xc3\xab &amp; co"><input name="q" value="a+b=c / 100%">
</form>
<script>
(async () => {
  await fetch('/api/items?filter=caf%C3%A9&page=2', {headers: {'Accept': 'application/json'}});
  await fetch('/api/items', {method: 'POST', headers: {'Content-Type': 'application/json'},
                             body: JSON.stringify({name: 'Zo\\u00eb', count: 2})});
  const data = new FormData();
  data.append('note', 'hello');
  data.append('file', new Blob(['line one\\nline two\\n'], {type: 'text/plain'}), 'notes.txt');
  await fetch('/api/upload', {method: 'POST', body: data});
  // A WebSocket to the same origin: its handshake carries the page's Origin, which the proxy checks.
  await new Promise((resolve) => {
    const socket = new WebSocket(`ws://${location.host}/api/ws?room=caf%C3%A9`);
    socket.onopen = () => socket.send('hello');
    socket.onmessage = () => socket.close(1000, 'done');
    socket.onclose = resolve;
    socket.onerror = resolve;
  });
  document.getElementById('form').submit();
})();
</script>
</body></html>
"""

# The form's answer. Both pages name their icon: otherwise Chromium asks for /favicon.ico, outside the proxy's route.
DONE = b'<!doctype html><html><head><link rel="icon" href="data:,"></head><body><p>done</p></body></html>'


def pkt(payload):
    """One git pkt-line (gitprotocol-common(5)): four hex digits of length, then the payload."""
    return b"%04x" % (len(payload) + 4) + payload


class Connection:
    """One client connection: records its bytes, frames requests well enough to answer them."""

    def __init__(self, server, sock, number):
        self.server = server
        self.sock = sock
        self.number = number
        self.buffer = b""
        self.file = None

    def record(self, data):
        if self.file is None:
            path = os.path.join(self.server.out, "%s-%d.http" % (self.server.name, self.number))
            self.file = open(path, "wb")
        self.file.write(data)
        self.file.flush()

    def receive(self):
        data = self.sock.recv(65536)
        if data:
            self.record(data)
            self.buffer += data
        return data

    def need(self, count):
        """Reads until the buffer holds `count` bytes; False at the end of input."""
        while len(self.buffer) < count:
            if not self.receive():
                return False
        return True

    def line(self):
        while b"\r\n" not in self.buffer:
            if not self.receive():
                return None
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def run(self):
        try:
            while self.request():
                pass
        except OSError:
            pass
        finally:
            self.sock.close()
            if self.file:
                self.file.close()

    def request(self):
        while b"\r\n\r\n" not in self.buffer:
            if not self.receive():
                return False
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        method, target, _ = lines[0].split(b" ", 2)
        fields = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            fields.setdefault(name.strip().lower(), []).append(value.strip())
        # The request as this parser framed it, for the corpus's manifest: the tests hold the references to it.
        with open(os.path.join(self.server.out, "%s-%d.requests" % (self.server.name, self.number)), "ab") as listed:
            listed.write(method + b" " + target + b"\n")
        if fields.get(b"expect", [b""])[0].lower() == b"100-continue":
            self.sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = self.body(fields)
        if body is None:
            return False
        if b"websocket" in b",".join(fields.get(b"upgrade", [])).lower():
            self.websocket(fields)
            return False
        status, headers, content = self.answer(method, target, fields, body)
        # An upgrade other than WebSocket (Java's `h2c` offer) is declined, and the connection closed after the
        # answer: what the proxy does (its parser reads nothing after an Upgrade request, SPEC §8), so the client
        # sends its next request on a new connection, as it will to the proxy.
        declined = b"upgrade" in fields
        if declined:
            headers = headers + [(b"Connection", b"close")]
        response = b"HTTP/1.1 " + status + b"\r\n"
        for name, value in headers + [(b"Content-Length", b"%d" % len(content))]:
            response += name + b": " + value + b"\r\n"
        response += b"\r\n" + (b"" if method == b"HEAD" else content)
        self.sock.sendall(response)
        if target.endswith(b"/api/form"):
            # Chromium's last request: capture.sh stops waiting.
            open(os.path.join(self.server.out, ".%s-done" % self.server.name), "w").close()
        return not declined and b"close" not in b",".join(fields.get(b"connection", [])).lower()

    def body(self, fields):
        if b"chunked" in b",".join(fields.get(b"transfer-encoding", [])).lower():
            body = b""
            while True:
                size = self.line()
                if size is None:
                    return None
                size = int(size.split(b";")[0], 16)
                if size == 0:
                    while True:  # trailer section
                        trailer = self.line()
                        if trailer is None:
                            return None
                        if trailer == b"":
                            return body
                if not self.need(size + 2):
                    return None
                body += self.buffer[:size]
                self.buffer = self.buffer[size + 2:]
        length = int(fields.get(b"content-length", [b"0"])[0])
        if not self.need(length):
            return None
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return body

    def answer(self, method, target, fields, body):
        path = target.split(b"?")[0]
        if path.endswith(b"/page.html"):
            return b"200 OK", [(b"Content-Type", b"text/html; charset=utf-8")], PAGE
        if path.endswith(b"/info/refs"):
            # Protocol v2 over smart HTTP (gitprotocol-v2(5)): the capability advertisement.
            advert = pkt(b"version 2\n") + pkt(b"ls-refs=unborn\n") + pkt(b"fetch=shallow\n")
            advert += pkt(b"server-option\n") + pkt(b"object-format=sha1\n") + b"0000"
            return b"200 OK", [(b"Content-Type", b"application/x-git-upload-pack-advertisement"),
                               (b"Cache-Control", b"no-cache")], advert
        if path.endswith(b"/git-upload-pack"):
            if b"command=ls-refs" in body:
                refs = pkt(GIT_OID + b" HEAD symref-target:refs/heads/main\n")
                refs += pkt(GIT_OID + b" refs/heads/main\n") + b"0000"
                return b"200 OK", [(b"Content-Type", b"application/x-git-upload-pack-result")], refs
            # A fetch: no pack to give. git gives up here, after sending its request.
            return b"500 Internal Server Error", [(b"Content-Type", b"text/plain")], b"no pack here\n"
        if path.endswith(b"/form"):
            return b"200 OK", [(b"Content-Type", b"text/html; charset=utf-8")], DONE
        if fields.get(b"accept", [b""])[0].startswith(b"application/json") or method == b"POST":
            return b"200 OK", [(b"Content-Type", b"application/json")], b'{"ok": true}\n'
        return b"200 OK", [(b"Content-Type", b"text/plain; charset=utf-8")], b"ok\n"

    def websocket(self, fields):
        """RFC 6455 §4.2.2: the 101 handshake, then echoes text frames and answers a close."""
        key = fields[b"sec-websocket-key"][0]
        accept = base64.b64encode(hashlib.sha1(key + WEBSOCKET_GUID).digest())
        self.sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
        while self.need(2):
            opcode = self.buffer[0] & 0x0F
            length = self.buffer[1] & 0x7F
            offset = 2
            if length == 126:
                if not self.need(4):
                    return
                length, offset = int.from_bytes(self.buffer[2:4], "big"), 4
            elif length == 127:
                if not self.need(10):
                    return
                length, offset = int.from_bytes(self.buffer[2:10], "big"), 10
            if not self.need(offset + 4 + length):
                return
            mask = self.buffer[offset:offset + 4]
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(self.buffer[offset + 4:offset + 4 + length]))
            self.buffer = self.buffer[offset + 4 + length:]
            if length > 125:
                return
            self.sock.sendall(bytes([0x80 | opcode, length]) + payload)
            if opcode == 0x8:
                return


class Recorder:
    def __init__(self, out, name):
        self.out = out
        self.name = name
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)

    def serve(self):
        number = 0
        while True:
            sock, _ = self.listener.accept()
            number += 1
            connection = Connection(self, sock, number)
            threading.Thread(target=connection.run, daemon=True).start()


def main():
    out, name, port_file = sys.argv[1:4]
    recorder = Recorder(out, name)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    with open(port_file + ".tmp", "w") as port:
        port.write(str(recorder.listener.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    recorder.serve()


if __name__ == "__main__":
    main()
