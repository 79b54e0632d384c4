"""Headers every answer carries (issue 40): `X-Content-Type-Options: nosniff`, so that a browser never reads a
kernel source (text/x-cuda), an event stream or a JSON error as HTML or script. Pages set their own
Content-Security-Policy (the campaign report's: `REPORT_CSP`)."""

from __future__ import annotations

from .limits import ASGIApp, Message, Receive, Scope, Send

# The HTML campaign report is self-contained (inline CSS and SVG, no script): nothing else may load or run.
REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"


class NoSniff:
    """ASGI middleware: add `X-Content-Type-Options: nosniff` to every HTTP response that does not set it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"x-content-type-options" for name, _ in headers):
                    headers.append((b"x-content-type-options", b"nosniff"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_header)
