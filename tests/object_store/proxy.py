"""A small threaded HTTP proxy between a client and an object-store server (moto, azurite):
it logs every request (method, kind, path, Range) and injects faults on a schedule: delays,
dropped connections, truncated bodies (the Content-Length of the whole body, fewer bytes
sent), short bodies (a consistent but shorter Content-Length), and 503 SlowDown answers.

It runs in its own process (TileDB-Py holds the GIL while it reads, so a proxy thread in the
reading process would stall), controlled over HTTP at /__proxy__/:

    proxy = FaultProxy("http://127.0.0.1:PORT").start()   # the real server; proxy.endpoint
    proxy.set_faults([rule(kinds={"GET"}, fault="503", first=True)])
    ...
    proxy.counts()  # {"GET": n, "LIST": n, "HEAD": n, "PUT": n, ...}; proxy.log: the requests
    proxy.stop()
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
             b"<Message>Please reduce your request rate.</Message></Error>")


@dataclass
class Request:
    """One request as the schedule sees it."""
    method: str
    kind: str          # GET (object read), LIST, HEAD, PUT, POST, DELETE
    path: str          # without the query
    query: str
    range: str | None  # the Range header
    attempt: int       # 1 for the first request with this method, path, query and range
    fault: str | None = None  # the fault injected


def rule(kinds, fault, first=False, path=""):
    """A fault rule: requests of `kinds` (GET, LIST, HEAD, PUT, POST, DELETE) whose path
    contains `path` get `fault` ("drop", "503", "truncate", "short", ["delay", seconds]);
    `first`: only a request's first attempt."""
    return {"kinds": sorted(kinds), "fault": fault, "first": first, "path": path}


def _apply(rules, req: Request):
    for r in rules or []:
        if req.kind in r["kinds"] and r["path"] in req.path and (req.attempt == 1 or not r["first"]):
            return r["fault"]
    return None


def classify(method: str, path: str, query: str) -> str:
    q = parse_qs(query, keep_blank_values=True)
    if method == "GET" and ("list-type" in q or q.get("comp") == ["list"] or
                            ("delimiter" in q and "prefix" in q) or
                            (path.rstrip("/").count("/") <= 1 and "uploads" not in q)):
        return "LIST"
    return method


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def _body(self) -> bytes | None:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else None

    def _control(self, parts):
        proxy: _Server = self.server.proxy  # type: ignore[attr-defined]
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if parts.path.endswith("/faults"):
            proxy.set_faults(json.loads(body or b"null"))
            out = b"{}"
        else:
            with proxy._lock:
                out = json.dumps([asdict(r) for r in proxy.log]).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def _forward(self):
        proxy: _Server = self.server.proxy  # type: ignore[attr-defined]
        parts = urlsplit(self.path)
        if parts.path.startswith("/__proxy__/"):
            return self._control(parts)
        body = self._body()
        req = proxy._record(self.command, parts.path, parts.query, self.headers.get("Range"))
        fault = proxy._fault(req)
        if fault == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if fault == "503":
            self.send_response(503, "Slow Down")
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(SLOW_DOWN)))
            self.end_headers()
            self.wfile.write(SLOW_DOWN)
            return
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("connection", "transfer-encoding", "content-length")}
        if body is not None:
            headers["Content-Length"] = str(len(body))
        conn = proxy._upstream()
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException):
            proxy._drop_upstream()
            self.send_error(502)
            return
        if isinstance(fault, (tuple, list)) and fault[0] == "delay":
            time.sleep(fault[1])
        elif fault == "delay":
            time.sleep(2.0)
        send = data
        length = len(data)
        if fault == "truncate" and len(data) > 1:
            send = data[: len(data) // 2]
        elif fault == "short" and len(data) > 1:
            send = data[: len(data) // 2]
            length = len(send)
        self.send_response(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in ("connection", "transfer-encoding", "content-length", "date",
                                 "server"):
                self.send_header(k, v)
        if self.command != "HEAD":
            self.send_header("Content-Length", str(length))
        else:
            cl = resp.getheader("Content-Length")
            if cl is not None:
                self.send_header("Content-Length", cl)
        self.end_headers()
        if self.command != "HEAD":
            try:
                self.wfile.write(send)
                self.wfile.flush()
            except OSError:
                pass
        if fault == "truncate":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward


class _Server:
    """The proxy server (in the proxy's process)."""

    def __init__(self, upstream: str):
        u = urlsplit(upstream)
        self.upstream_host = u.hostname
        self.upstream_port = u.port
        self.upstream_path = u.path.rstrip("/")
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.proxy = self  # type: ignore[attr-defined]
        self._lock = threading.Lock()
        self._local = threading.local()
        self._faults = None
        self.log: list[Request] = []
        self._attempts: Counter = Counter()
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        """The proxy's URL, with the upstream's path (azurite's account)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.upstream_path}"

    @property
    def hostport(self) -> str:
        return f"127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "FaultProxy":
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def set_faults(self, rules) -> None:
        """The fault rules (see `rule`); also resets the log and the attempt counts."""
        with self._lock:
            self._faults = rules
            self.log = []
            self._attempts = Counter()

    def _record(self, method, path, query, rng) -> Request:
        with self._lock:
            key = (method, path, query, rng)
            self._attempts[key] += 1
            r = Request(method, classify(method, path, query), path, query, rng,
                        self._attempts[key])
            r.fault = _apply(self._faults, r)
            self.log.append(r)
            return r

    def _fault(self, req: Request):
        return req.fault

    def _upstream(self) -> http.client.HTTPConnection:
        c = getattr(self._local, "conn", None)
        if c is None:
            c = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=60)
            self._local.conn = c
        return c

    def _drop_upstream(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
        self._local.conn = None


class FaultProxy:
    """The proxy in its own process, driven from the test (see the module documentation)."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.upstream_path = urlsplit(upstream).path.rstrip("/")
        self._proc: subprocess.Popen | None = None
        self.port = 0

    def start(self) -> "FaultProxy":
        self._proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), self.upstream],
                                      stdout=subprocess.PIPE, text=True)
        self.port = int(self._proc.stdout.readline())
        return self

    def stop(self) -> None:
        if self._proc:
            self._proc.terminate()
            self._proc.wait()
            self._proc = None

    @property
    def endpoint(self) -> str:
        """The proxy's URL, with the upstream's path (azurite's account)."""
        return f"http://127.0.0.1:{self.port}{self.upstream_path}"

    @property
    def hostport(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _call(self, what: str, body: bytes = b"") -> bytes:
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request("POST", f"/__proxy__/{what}", body=body)
        out = c.getresponse().read()
        c.close()
        return out

    def set_faults(self, rules) -> None:
        """Fault rules (a list of `rule(...)`, or None); resets the log."""
        self._call("faults", json.dumps(rules).encode())

    @property
    def log(self) -> list[Request]:
        return [Request(**r) for r in json.loads(self._call("log"))]

    def counts(self) -> Counter:
        return Counter(r.kind for r in self.log)


if __name__ == "__main__":
    server = _Server(sys.argv[1])
    server.start()
    print(server._server.server_address[1], flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
