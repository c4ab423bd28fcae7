"""An OpenAI-compatible server on 127.0.0.1 that records every request body it receives."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Recorded:
    url: str
    seen: list[dict] = field(default_factory=list)

    def by_prompt(self) -> list[dict]:
        """The bodies ordered by their first message (requests may arrive in any order)."""
        return sorted(self.seen, key=lambda b: b["messages"][0]["content"])


@contextlib.contextmanager
def recording_server(reply: str = "x") -> Iterator[Recorded]:
    """Serve ``/v1/chat/completions`` answering ``reply``; yields the base URL and the
    request bodies seen."""
    rec = Recorded("")

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            rec.seen.append(body)
            data = json.dumps({
                "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply}}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    rec.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield rec
    finally:
        server.shutdown()
