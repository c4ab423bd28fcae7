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
def listing(models: list[str]):
    """A server whose ``/v1/models`` lists ``models``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):  # noqa: N802
            data = json.dumps({"object": "list", "data": [{"id": m} for m in models]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

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
