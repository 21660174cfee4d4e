"""A small OpenAI-compatible chat server on 127.0.0.1 for tests that must kill and restart servers.

It answers ``POST /v1/chat/completions`` by echoing the last message, records every request
body and header, and can be told to fail (HTTP status for the next k requests), to ignore
``n`` like some servers do, or to be slow. ``stop()`` closes the socket for real, so clients
see connection refused; ``start()`` listens again on the same port.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAIServer:
    def __init__(self, port: int = 0, *, model: str = "fake-model") -> None:
        self.port = port
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.fail_next: list[int] = []  # HTTP statuses to answer, one per coming request
        self.ignore_n = False
        self.delay_s = 0.0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": fake.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with fake._lock:
                    fake.requests.append(body)
                    fake.headers.append(dict(self.headers))
                    status = fake.fail_next.pop(0) if fake.fail_next else 200
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    if fake.delay_s:
                        time.sleep(fake.delay_s)
                    if status != 200:
                        self._send(status, {"error": {"message": f"injected failure {status}"}})
                    elif body.get("model") != fake.model:
                        self._send(404, {"error": {"message": f"The model `{body.get('model')}` does not exist."}})
                    else:
                        self._send(200, fake.answer(body))
                finally:
                    with fake._lock:
                        fake.in_flight -= 1

        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        last = body["messages"][-1]["content"]
        n = 1 if self.ignore_n else int(body.get("n", 1))
        texts = [f"echo {index}: {last}" for index in range(n)]
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": self.model,
            "choices": [
                {"index": index, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                for index, text in enumerate(texts)
            ],
            "usage": {
                "prompt_tokens": sum(len(m["content"].split()) for m in body["messages"]),
                "completion_tokens": sum(len(text.split()) for text in texts),
            },
        }

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
