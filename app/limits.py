"""Request size limit, enforced on the bytes actually received (Content-Length can be absent or wrong)."""

from __future__ import annotations

import json


class BodySizeLimit:
    """ASGI middleware: refuse request bodies over `max_bytes` with 413 and a message."""

    def __init__(self, app, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    if int(value) > self.max_bytes:
                        return await self._refuse(send, int(value))
                except ValueError:
                    pass
        received = 0
        started = False

        async def send_wrapper(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        async def limited_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _TooLarge(received)
            return message

        try:
            await self.app(scope, limited_receive, send_wrapper)
        except _TooLarge as exc:
            if not started:
                await self._refuse(send, exc.size)

    async def _refuse(self, send, size: int) -> None:
        body = json.dumps({"detail": f"request body of {size} bytes or more exceeds the limit of {self.max_bytes} bytes "
                                     "(CUDAMASTER_MAX_REQUEST_BYTES); send a smaller kernel or raise the limit"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    def __init__(self, size: int):
        self.size = size
