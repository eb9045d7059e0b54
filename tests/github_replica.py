"""A local GitHub REST replica on pytest-httpserver: real sockets, real headers, no network.

One catch-all handler on a pytest-httpserver ``HTTPServer`` dispatches to routes the test
registers, and adds what every GitHub answer has: ``x-ratelimit-*`` headers drawn from a
budget, a strong ETag on every 200 to a GET (a matching ``If-None-Match`` gets an empty 304
that costs no budget), optional latency, and one-shot faults. It knows no endpoint by itself;
tests and other helpers add the routes they need.

Use
---
    replica = GitHubReplica(httpserver)              # the pytest-httpserver fixture
    replica = GitHubReplica.standalone(latency=0.05) # outside pytest (benchmarks); .close() after
    replica.api_url                                  # base URL to give the client

Routes (the newest registration wins when several match; paths are regexes matched in full
against the request path, without the query string):
    replica.route(method, path_regex, handler)
        ``handler(request, match)`` returns a ``Reply``, a werkzeug ``Response``, or any
        JSON-serialisable value (served as a 200). ``request`` is the werkzeug request.
    replica.add_json(path, data, media=None, status=200)
        A fixed JSON answer at an exact path. ``media`` maps a media type (matched as a
        substring of the Accept header) to a str/bytes body or a ``Reply``, e.g.
        ``{"application/vnd.github.diff": diff_text}`` or a 406 ``too_large`` Reply.
    replica.add_list(path, items, envelope=None, envelope_fields=None, default_per_page=30, max_items=None)
        A list paginated the GitHub way: ``per_page`` (max 100) and ``page`` query parameters,
        ``Link`` header with ``next``/``last``/``first``/``prev`` absolute URLs; ``envelope``
        wraps each page as ``{"total_count": n, envelope: page, **envelope_fields}`` (check
        runs, combined status); ``max_items`` serves only that many (GitHub's 3,000-file cap).
    replica.add_text(path, text, content_type)

Faults (checked before routes, consumed in registration order):
    replica.fail(method, path_regex, status, body=None, headers=None, times=1)
    replica.drop_connection(path_regex, method="GET", times=1)   # socket closed, no answer
    replica.malformed_json(path_regex, method="GET", times=1)    # 200 with a broken JSON body
    ``times=None`` means every time.

Rate limit and auth:
    GitHubReplica(..., rate_limit=5000, reset_in=3600, tokens=None)
    ``replica.remaining`` / ``replica.reset`` can be set directly. When the budget is spent
    the answer is GitHub's primary-limit 403 (``x-ratelimit-remaining: 0``). With ``tokens``
    (a set of accepted tokens) a request carrying any other bearer token gets 401.

Servers that do not answer (no replica behind them):
    with refusing_url() as url: ...      # a bound port that is not listening: connection refused
    with unanswering_url() as url: ...   # accepts connections (kernel backlog) but never answers

Inspection:
    replica.log                     list of ``Seen`` (method, path, query, status, accept,
                                    if_none_match, authorized, headers, body_bytes sent back)
    replica.seen(path_regex=None)   the logged requests whose path matches
    replica.units_used              answers that were not 304
"""

import hashlib
import json
import logging
import re
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from urllib.parse import urlencode

from pytest_httpserver import HTTPServer
from werkzeug import Response

JSON_CONTENT_TYPE = "application/json; charset=utf-8"
PRIMARY_LIMIT_MESSAGE = (
    "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a "
    "higher rate limit. Check out the documentation for more details.)"
)


@dataclass
class Reply:
    """An answer from a route or fault: JSON-able data, str or bytes, plus status and headers."""

    body: object = None
    status: int = 200
    headers: dict = field(default_factory=dict)
    content_type: str = None


@dataclass
class Seen:
    method: str
    path: str
    query: str
    status: int
    accept: str
    if_none_match: str
    authorized: bool
    headers: dict
    body_bytes: int


@dataclass
class _Route:
    method: str
    pattern: re.Pattern
    handler: object


@dataclass
class _Fault:
    method: str
    pattern: re.Pattern
    action: object
    times: int


class GitHubReplica:
    """Routes, budget, ETags and faults on one pytest-httpserver server (see module docstring)."""

    def __init__(self, server, *, latency=0.0, rate_limit=5000, reset_in=3600, tokens=None):
        self.server = server
        self.latency = latency
        self.limit = rate_limit
        self.remaining = rate_limit
        self.reset = int(time.time()) + reset_in
        self.tokens = set(tokens) if tokens else None
        self.log = []
        self._routes = []
        self._faults = []
        self._lock = threading.Lock()
        self._owns_server = False
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        if not server.is_running():
            server.start()
        server.expect_request(re.compile(".*")).respond_with_handler(self._dispatch)

    @classmethod
    def standalone(cls, **options):
        """A replica on its own server, for scripts outside pytest; call ``close()`` when done."""
        replica = cls(HTTPServer(host="127.0.0.1", port=0), **options)
        replica._owns_server = True
        return replica

    def close(self):
        if self._owns_server and self.server.is_running():
            self.server.clear()
            self.server.stop()

    @property
    def api_url(self):
        return self.server.url_for("").rstrip("/")

    def url_for(self, path):
        return self.server.url_for(path)

    # --- registration ------------------------------------------------------------------

    def route(self, method, path_regex, handler):
        self._routes.insert(0, _Route(method.upper(), re.compile(path_regex), handler))

    def add_json(self, path, data, media=None, status=200):
        alternates = dict(media or {})

        def serve(request, match):
            accept = request.headers.get("Accept", "")
            for media_type, answer in alternates.items():
                if media_type in accept:
                    if isinstance(answer, Reply):
                        return answer
                    return Reply(answer, content_type=f"{media_type}; charset=utf-8")
            return Reply(data, status=status)

        self.route("GET", re.escape(path), serve)

    def add_text(self, path, text, content_type="text/plain; charset=utf-8"):
        self.route("GET", re.escape(path), lambda request, match: Reply(text, content_type=content_type))

    def add_list(self, path, items, envelope=None, envelope_fields=None, default_per_page=30, max_items=None):
        served = list(items if max_items is None else items[:max_items])

        def serve(request, match):
            per_page = min(100, max(1, _int(request.args.get("per_page"), default_per_page)))
            page = max(1, _int(request.args.get("page"), 1))
            last = max(1, -(-len(served) // per_page))
            chunk = served[(page - 1) * per_page : page * per_page]
            links = []
            if page < last:
                links += [_link(request, page + 1, "next"), _link(request, last, "last")]
            if page > 1:
                links += [_link(request, 1, "first"), _link(request, page - 1, "prev")]
            headers = {"Link": ", ".join(links)} if links else {}
            body = {**(envelope_fields or {}), "total_count": len(served), envelope: chunk} if envelope else chunk
            return Reply(body, headers=headers)

        self.route("GET", re.escape(path), serve)

    # --- faults ------------------------------------------------------------------------

    def fail(self, method, path_regex, status, body=None, headers=None, times=1):
        reply = Reply(body if body is not None else {"message": f"injected {status}"}, status, dict(headers or {}))
        self._faults.append(_Fault(method.upper(), re.compile(path_regex), reply, times))

    def drop_connection(self, path_regex, method="GET", times=1):
        self._faults.append(_Fault(method.upper(), re.compile(path_regex), "drop", times))

    def malformed_json(self, path_regex, method="GET", times=1):
        reply = Reply(b'{"truncated": [1, 2', content_type=JSON_CONTENT_TYPE)
        self._faults.append(_Fault(method.upper(), re.compile(path_regex), reply, times))

    # --- inspection --------------------------------------------------------------------

    def seen(self, path_regex=None):
        if path_regex is None:
            return list(self.log)
        pattern = re.compile(path_regex)
        return [entry for entry in self.log if pattern.fullmatch(entry.path)]

    @property
    def units_used(self):
        return sum(1 for entry in self.log if entry.status not in (304, 0))

    # --- dispatch ----------------------------------------------------------------------

    def _dispatch(self, request):
        if self.latency:
            time.sleep(self.latency)
        with self._lock:
            response = self._answer(request)
        self.log.append(
            Seen(
                method=request.method,
                path=request.path,
                query=request.query_string.decode("latin-1"),
                status=response.status_code if response is not None else 0,
                accept=request.headers.get("Accept", ""),
                if_none_match=request.headers.get("If-None-Match"),
                authorized="Authorization" in request.headers,
                headers=dict(request.headers),
                body_bytes=len(response.get_data()) if response is not None else 0,
            )
        )
        if response is None:
            request.environ["werkzeug.socket"].shutdown(socket.SHUT_RDWR)
            return Response(b"", 200)
        return response

    def _answer(self, request):
        """The response for one request, or None to drop the connection."""
        auth = request.headers.get("Authorization", "")
        if self.tokens is not None and auth and auth.removeprefix("Bearer ").removeprefix("token ") not in self.tokens:
            return self._finish(request, Reply({"message": "Bad credentials", "status": "401"}, 401))
        fault = self._take_fault(request)
        if fault == "drop":
            return None
        if fault is not None:
            return self._finish(request, fault)
        if self.remaining <= 0:
            reply = Reply({"message": PRIMARY_LIMIT_MESSAGE, "status": "403"}, 403)
            return self._finish(request, reply)
        for route in self._routes:
            if route.method != request.method:
                continue
            match = route.pattern.fullmatch(request.path)
            if match:
                result = route.handler(request, match)
                if isinstance(result, Response):
                    self._spend()
                    self._add_rate_headers(result.headers)
                    return result
                return self._finish(request, result if isinstance(result, Reply) else Reply(result))
        return self._finish(request, Reply({"message": "Not Found", "status": "404"}, 404))

    def _take_fault(self, request):
        for fault in self._faults:
            if fault.method == request.method and fault.pattern.fullmatch(request.path):
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                return fault.action
        return None

    def _finish(self, request, reply):
        body, content_type = _encode(reply)
        headers = {"Content-Type": content_type}
        if request.method == "GET" and reply.status == 200:
            etag = '"' + hashlib.sha256(body + content_type.encode()).hexdigest()[:32] + '"'
            headers["ETag"] = etag
            if request.headers.get("If-None-Match") == etag:
                response = Response(b"", 304, headers={"ETag": etag})
                self._add_rate_headers(response.headers)
                return response
        self._spend()
        headers.update(reply.headers)
        response = Response(body, reply.status, headers=headers)
        for name, value in reply.headers.items():
            response.headers[name] = str(value)
        if not any(name.lower() == "x-ratelimit-remaining" for name in reply.headers):
            self._add_rate_headers(response.headers)
        return response

    def _spend(self):
        self.remaining = max(0, self.remaining - 1)

    def _add_rate_headers(self, headers):
        headers["X-RateLimit-Limit"] = str(self.limit)
        headers["X-RateLimit-Remaining"] = str(self.remaining)
        headers["X-RateLimit-Used"] = str(self.limit - self.remaining)
        headers["X-RateLimit-Reset"] = str(self.reset)
        headers["X-RateLimit-Resource"] = "core"


def _encode(reply):
    if isinstance(reply.body, bytes):
        return reply.body, reply.content_type or "application/octet-stream"
    if isinstance(reply.body, str):
        return reply.body.encode("utf-8"), reply.content_type or "text/plain; charset=utf-8"
    return json.dumps(reply.body, separators=(",", ":")).encode("utf-8"), reply.content_type or JSON_CONTENT_TYPE


def _link(request, page, rel):
    params = [(key, value) for key, value in request.args.items(multi=True) if key != "page"]
    params.append(("page", str(page)))
    return f'<{request.base_url}?{urlencode(params)}>; rel="{rel}"'


def _int(value, default):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


@contextmanager
def refusing_url():
    """``http://127.0.0.1:PORT`` of a port bound but not listening, so every connection is refused."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{holder.getsockname()[1]}"


@contextmanager
def unanswering_url():
    """``http://127.0.0.1:PORT`` of a black hole: the kernel accepts connections, nobody ever answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
