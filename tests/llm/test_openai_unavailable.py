"""A server that cannot serve the run stops it at once, naming the endpoint (real sockets on
127.0.0.1, the openai SDK as the client)."""

from __future__ import annotations

import contextlib
import http.server
import importlib.util
import json
import socket
import threading
import time

import pytest

from cogrsi_lib.llm import Request, build_backend
from cogrsi_lib.llm.openai_backend import EndpointUnavailable

from .recorder import recording_server

pytestmark = pytest.mark.skipif(importlib.util.find_spec("openai") is None,
                                reason="no openai extra")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def listing(models: list[str], gets: list[str] | None = None):
    """A server whose ``/v1/models`` lists ``models`` (each with vLLM's ``max_model_len``)
    and whose chat completions answer "ok"; the paths of its GETs go to ``gets``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802
            if gets is not None:
                gets.append(self.path)
            self._send({"object": "list",
                        "data": [{"id": m, "max_model_len": 2048} for m in models]})

        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            self._send({"id": "x", "object": "chat.completion", "created": 0,
                        "model": body["model"],
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": "ok"}}],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 1,
                                  "total_tokens": 6}})

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()


def backend(url, **kw):
    return build_backend({"backend": "openai", "model": "m", "base_url": url, **kw})


def test_a_dead_server_raises_naming_the_endpoint_before_any_retry() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    b = backend(url, max_retries=5)
    start = time.monotonic()
    with pytest.raises(EndpointUnavailable, match=f"^connection refused at {url}$"):
        b.generate([Request.of("hello", max_tokens=4)])
    assert time.monotonic() - start < 5 and b.retries == 0


def test_a_dead_replica_among_live_ones_is_named() -> None:
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    with recording_server() as live:
        b = backend([live.url, dead])
        with pytest.raises(EndpointUnavailable, match=dead):
            b.generate([Request.of("hello", max_tokens=4)])


def test_a_server_not_serving_the_model_is_refused() -> None:
    served = r"model 'm' is not served at .* \(it serves: Qwen/Qwen3-8B, other\)"
    with listing(["Qwen/Qwen3-8B", "other"]) as url, pytest.raises(EndpointUnavailable,
                                                                  match=served):
        backend(url).generate([Request.of("hello", max_tokens=4)])


def test_a_server_without_a_models_route_is_used() -> None:
    with recording_server("ok") as server:
        (out,) = backend(server.url).generate([Request.of("hello", max_tokens=4)])
    assert out[0].text == "ok" and len(server.seen) == 1


def test_the_model_listing_is_fetched_once_for_the_check_and_the_context_length() -> None:
    gets: list[str] = []
    with listing(["m"], gets) as url:
        b = backend(url)
        (out,) = b.generate([Request.of("hello", max_tokens=4)])
        (endpoint,) = b.endpoints
        assert endpoint.max_model_len("m") == 2048
        b.generate([Request.of("again", max_tokens=4)])
    assert out[0].text == "ok" and gets == ["/v1/models"]
