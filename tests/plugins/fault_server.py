"""An OpenAI-compatible server on 127.0.0.1 that misbehaves on request, for fault-injection tests.

It speaks HTTP/1.1 with keep-alive over raw asyncio streams (in a thread of its own), so it
can do what a well-behaved framework will not: drip an answer one byte at a time, close the
connection half-way through a body, hang forever, or send a 200 whose body is not JSON.

Each request takes the next behaviour from ``script`` (``default`` once it is empty)::

    ok          200 with a chat completion echoing the last message
    status:N    HTTP N with an OpenAI-style error body
    hang        read the request, never answer
    drip        200 headers, then the body one byte every ``drip_interval_s``
    close_mid   200 headers and half the body, then close the connection
    reset       close the connection without answering
    malformed   200 with a body that is not JSON
    not_chat    200 with valid JSON that is not a chat completion
    echo_auth   HTTP 500 whose error message quotes the request's Authorization header

Every request is recorded in ``served`` as ``(behaviour, body, headers)``.

Fixture ``fault_server``: one fresh server per test, stopped afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

BEHAVIOURS = ("ok", "hang", "drip", "close_mid", "reset", "malformed", "not_chat", "echo_auth")


@dataclass
class Served:
    behaviour: str
    body: dict[str, Any]
    headers: dict[str, str] = field(repr=False)


def chat_completion(body: dict[str, Any], model: str) -> dict[str, Any]:
    """An answer echoing the last message, with usage counted in whitespace tokens."""
    last = body["messages"][-1]["content"]
    n = int(body.get("n", 1))
    texts = [f"echo {index}: {last}" for index in range(n)]
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {"index": index, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            for index, text in enumerate(texts)
        ],
        "usage": {
            "prompt_tokens": sum(len(str(m.get("content", "")).split()) for m in body["messages"]),
            "completion_tokens": sum(len(text.split()) for text in texts),
        },
    }


class FaultServer:
    def __init__(self, port: int = 0, *, model: str = "fault-model", drip_interval_s: float = 0.5) -> None:
        self.port = port
        self.model = model
        self.drip_interval_s = drip_interval_s
        self.script: deque[str] = deque()
        self.default = "ok"
        self.served: list[Served] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def behaviours(self) -> list[str]:
        with self._lock:
            return [served.behaviour for served in self.served]

    def _next(self) -> str:
        with self._lock:
            return self.script.popleft() if self.script else self.default

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FaultServer:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._server = loop.run_until_complete(
                asyncio.start_server(self._connection, "127.0.0.1", self.port, reuse_address=True)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        """Close the listening socket and every open connection (clients then see connection refused)."""
        loop = self._loop
        if loop is None:
            return

        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            for task in list(self._handlers):
                task.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)
            await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        assert self._thread is not None
        self._thread.join(10)
        self._loop = self._server = self._thread = None

    # ------------------------------------------------------------------ HTTP
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection must end."""
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        raw = await reader.readexactly(length) if length else b""
        if method == "GET" and path == "/v1/models":
            await self._send(writer, 200, {"object": "list", "data": [{"id": self.model, "object": "model"}]})
            return True
        body = json.loads(raw) if raw else {}
        behaviour = self._next()
        with self._lock:
            self.served.append(Served(behaviour, body, headers))
        if behaviour.startswith("status:"):
            status = int(behaviour.split(":", 1)[1])
            await self._send(writer, status, {"error": {"message": f"injected HTTP {status}"}})
            return True
        if behaviour == "ok":
            await self._send(writer, 200, chat_completion(body, self.model))
            return True
        if behaviour == "hang":
            await asyncio.Event().wait()  # until the server stops or the client goes away
        if behaviour == "reset":
            return False
        if behaviour == "malformed":
            await self._send_bytes(writer, 200, b'{"choices": [{"index": 0, "message": ')
            return True
        if behaviour == "not_chat":
            await self._send(writer, 200, {"status": "ok"})
            return True
        if behaviour == "echo_auth":
            message = f"invalid credentials: {headers.get('authorization', '')}"
            await self._send(writer, 500, {"error": {"message": message}})
            return True
        data = json.dumps(chat_completion(body, self.model)).encode()
        writer.write(self._head(200, len(data)))
        if behaviour == "close_mid":
            writer.write(data[: len(data) // 2])
            await writer.drain()
            return False
        if behaviour == "drip":
            for index in range(len(data)):
                writer.write(data[index : index + 1])
                await writer.drain()
                await asyncio.sleep(self.drip_interval_s)
            return True
        raise ValueError(f"unknown fault behaviour {behaviour!r}; known: {', '.join(BEHAVIOURS)}, status:N")

    @staticmethod
    def _head(status: int, length: int) -> bytes:
        return (
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n"
            "Connection: keep-alive\r\n\r\n"
        ).encode()

    async def _send_bytes(self, writer: asyncio.StreamWriter, status: int, data: bytes) -> None:
        writer.write(self._head(status, len(data)) + data)
        await writer.drain()

    async def _send(self, writer: asyncio.StreamWriter, status: int, body: dict[str, Any]) -> None:
        await self._send_bytes(writer, status, json.dumps(body).encode())


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    server = FaultServer().start()
    try:
        yield server
    finally:
        server.stop()
