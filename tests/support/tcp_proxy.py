"""A loopback TCP proxy that a test can cut and restore: a database outage, made between a service and its
PostgreSQL. While cut, every open connection is closed and each new one is accepted and closed at once (the
client sees the server close the connection, as when a database restarts)."""

from __future__ import annotations

import contextlib
import socket
import threading


class TcpProxy:
    def __init__(self, target_host: str = "127.0.0.1", target_port: int = 5432):
        self.target = (target_host, target_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._cut = False
        self.refused = 0  # connections closed at once while cut
        self._closed = False
        threading.Thread(target=self._accept, name="tcp-proxy", daemon=True).start()

    def url(self, database_url: str) -> str:
        """`database_url` (at the target's host:port) through this proxy."""
        host, port = self.target
        return database_url.replace(f"{host}:{port}", f"127.0.0.1:{self.port}")

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            for s in list(self._open):
                _close(s)
            self._open.clear()

    def restore(self) -> None:
        with self._lock:
            self._cut = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        _close(self.listener)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                if self._cut:
                    self.refused += 1
                    _close(client)
                    continue
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._open |= {client, upstream}
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                _close(s)
            with self._lock:
                self._open -= {src, dst}


def _close(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        s.close()
