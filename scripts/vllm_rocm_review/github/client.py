"""GitHubClient: the one module of the skill that talks HTTP to GitHub.

Everything that reads GitHub (``fetch_pr_data.py``, ``update_skill.py``) goes through here, so
the base URL, authentication, retries, rate limits, pagination and the conditional-request cache
are decided once.

Public API
----------
``resolve_api_url(cli_value)``
    ``--api-url``, else ``$GITHUB_API_URL``, else ``https://api.github.com`` (no trailing slash).
    Raises ``ValueError`` for anything that is not an http(s) URL.
``discover_token_with_source(cli_value, api_url=None)``
    ``(token, source)``: ``--token``, else ``$GH_TOKEN``, else ``$GITHUB_TOKEN``, else ``gh auth
    token`` when ``gh`` is on PATH (any failure there means no token), else None; ``source`` says
    where the token came from ("--token", "$GH_TOKEN", …, or "none") and never holds the token.
``default_cache_dir()``
    ``$VLLM_ROCM_REVIEW_CACHE``, else ``$XDG_CACHE_HOME/vllm-rocm-pr-review``, else
    ``~/.cache/vllm-rocm-pr-review``.
``GitHubClient(api_url=None, token=None, cache_dir=None, use_cache=True, *, sleep=time.sleep,
clock=time.time, retry=RetryPolicy(), wait_for_reset=False, max_pages=DEFAULT_MAX_PAGES,
timeout=DEFAULT_TIMEOUT, progress=None)``
    ``timeout`` is ``(connect, read)`` seconds (or one number for both).
    ``.get_json(path, params=None, accept=None)`` → parsed JSON.
    ``.get_paginated(path, params=None, accept=None, item_key=None, max_pages=None, stop_when=None)`` →
    ``Paginated(items, capped)``; sends ``per_page=100`` and follows ``Link: rel="next"`` as
    given; ``item_key`` names the list inside an envelope object (``"check_runs"``); ``capped``
    is True when the page cap stopped it while GitHub still offered a next page. ``stop_when``
    (a predicate on one item) ends the listing before the first item it accepts, so a list
    sorted by date costs only the pages inside the wanted window.
    ``.get_text(path, params=None, accept=DIFF_MEDIA_TYPE)`` → str (diff, patch, raw media types).
    ``.get_bytes(path, params=None, accept=RAW_MEDIA_TYPE)`` → bytes.
    ``.post_graphql(query, variables=None)`` → the ``data`` object (needs a token; never cached).
    ``.send_json(method, path, payload)`` → parsed JSON answer of a POST or PATCH (needs a token;
    never cached). A PATCH sets a resource to a state, so it is retried like a GET; a POST may
    have been applied when the answer is a 5xx or never arrives, so it is sent once (a rate-limit
    refusal, which GitHub sends before acting, is still waited out and retried).
    ``.requests_made`` (HTTP requests sent, retries and GraphQL included), ``.rate_limit_units``
    (REST answers that were not 304, i.e. what the core rate limit was charged),
    ``.graphql_requests`` (GraphQL has its own budget), ``.cache_hits`` (304 answers served from
    the cache), ``.rate_limit`` (``{"remaining": int|None, "reset": int|None}`` of the core limit
    from the last x-ratelimit-* headers).
    ``.remember(note)`` / ``.recalls(note)``: a note kept in the cache directory (nothing without
    a cache), for answers worth not asking again, such as a 406 on an unchanged PR's diff.
    ``path`` is an API path ("/repos/o/r/pulls/1", percent-encoded here) or a full URL on the
    same host (as in Link headers).

Errors are ``GitHubError`` subclasses whose ``str()`` is one line fit for stderr: ``NotFound``
(404), ``Unauthorized`` (401), ``Forbidden`` (403 that is not a rate limit), ``RateLimited``
(primary limit exhausted, or a secondary limit asking for more than the wait bound),
``Unprocessable`` (422: GitHub refused the content of a write; names the field and reason),
``TooLarge`` (406 ``too_large``; never retried), ``ServerError`` (5xx after retries),
``NetworkError`` (the host could not be reached or stopped answering; names the host and the
remedy), ``BadResponse`` (malformed JSON, foreign pagination host) and plain ``GitHubError`` for
any other status.

The cache keeps, per request, the ETag and body of the last 200 answer, keyed by a hash of the
full URL, the Accept header and a fingerprint (salted hash) of the token; the token itself is
never written. Replaying ``If-None-Match`` turns an unchanged resource into a 304, which GitHub
does not count against the rate limit.
"""

import base64
import hashlib
import json
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote
from urllib.parse import urlencode
from urllib.parse import urlsplit

import requests
from requests.utils import parse_header_links

from ..core.atomic_io import write_atomic

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
JSON_MEDIA_TYPE = "application/vnd.github+json"
DIFF_MEDIA_TYPE = "application/vnd.github.diff"
RAW_MEDIA_TYPE = "application/vnd.github.raw"
USER_AGENT = "vllm-rocm-pr-review"
CACHE_ENV = "VLLM_ROCM_REVIEW_CACHE"
CACHE_DIR_NAME = "vllm-rocm-pr-review"
PER_PAGE = 100
# GitHub lists at most 3,000 files per PR (30 pages of 100); 50 pages covers any list a review
# needs while bounding a runaway Link chain.
DEFAULT_MAX_PAGES = 50
UNAUTHENTICATED_LIMIT = 60
NO_TOKEN_WARNING = (
    "warning: no GitHub token (--token, GH_TOKEN, GITHUB_TOKEN or `gh auth login`); "
    f"unauthenticated access is limited to {UNAUTHENTICATED_LIMIT} requests per hour"
)
# (connect, read) seconds: a host that does not accept within 10 s is down or filtered; a
# GitHub answer rarely takes more than a few seconds, so 30 s of silence means it is stuck.
DEFAULT_TIMEOUT = (10.0, 30.0)
API_URL_REMEDY = "check the network and --api-url / $GITHUB_API_URL"
# Failures before a complete answer arrived (a body cut short raises ChunkedEncodingError).
NETWORK_ERRORS = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)
# Seconds to wait on a secondary limit that names no retry-after (GitHub asks for at least 60).
SECONDARY_DEFAULT_WAIT = 60
TOKEN_FINGERPRINT_SALT = b"vllm-rocm-pr-review/token-fingerprint/v1"
WRITE_METHODS = ("POST", "PATCH")


class GitHubError(Exception):
    """A GitHub request failed; ``str(error)`` is one line for stderr."""

    status = None


class NotFound(GitHubError):
    status = 404


class Unauthorized(GitHubError):
    status = 401


class Forbidden(GitHubError):
    status = 403


class TooLarge(GitHubError):
    status = 406


class Unprocessable(GitHubError):
    status = 422


class ServerError(GitHubError):
    pass


class NetworkError(GitHubError):
    pass


class BadResponse(GitHubError):
    pass


class RateLimited(GitHubError):
    """A rate limit the client will not (or may not) wait out.

    ``reset`` is the epoch second the primary limit resets (None if unknown); ``retry_after``
    the seconds a secondary limit asked for; ``secondary`` tells the two apart.
    """

    def __init__(self, message, reset=None, retry_after=None, secondary=False):
        super().__init__(message)
        self.reset = reset
        self.retry_after = retry_after
        self.secondary = secondary


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try before giving up; sleeps go through the client's injectable ``sleep``.

    5xx answers, dropped connections and read timeouts are transient: they are retried
    ``max_retries`` times with exponential backoff (``backoff_base * 2**n`` seconds, at most
    ``backoff_cap``). A refused connection, an unknown host name, a TLS failure or a connect
    timeout will not heal in seconds, so it is retried only ``unreachable_retries`` times. No
    retry starts once it would begin more than ``retry_budget`` seconds after the first attempt,
    which bounds a server that accepts connections but never answers to about one budget plus
    one read timeout. A secondary rate limit is waited out when it asks for at most
    ``max_secondary_wait`` seconds, up to ``max_retries`` times. With ``wait_for_reset`` the
    client sleeps for a primary reset up to ``max_reset_wait``.
    """

    max_retries: int = 4
    unreachable_retries: int = 1
    backoff_base: float = 1.0
    backoff_cap: float = 30.0
    retry_budget: float = 60.0
    max_secondary_wait: float = 180.0
    max_reset_wait: float = 3900.0

    def backoff(self, attempt):
        return min(self.backoff_cap, self.backoff_base * (2**attempt))

    def may_retry(self, failures, limit, started):
        """Whether retry number ``failures + 1`` fits both ``limit`` and the time budget."""
        if failures >= limit:
            return False
        return time.monotonic() - started + self.backoff(failures) <= self.retry_budget


class Paginated(NamedTuple):
    items: list
    capped: bool


@dataclass
class _Answer:
    status: int
    body: bytes
    headers: dict


def resolve_api_url(cli_value=None):
    """The API base URL: --api-url, else $GITHUB_API_URL, else api.github.com."""
    value = cli_value or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL
    value = value.strip().rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"API URL {value!r} is not an http(s) URL; pass e.g. --api-url https://api.github.com")
    return value


def discover_token_with_source(cli_value=None, api_url=None):
    """Return ``(token, source)``: --token, $GH_TOKEN, $GITHUB_TOKEN, then `gh auth token`."""
    if cli_value:
        return cli_value.strip(), "--token"
    for name in ("GH_TOKEN", "GITHUB_TOKEN"):
        value = os.environ.get(name, "").strip()
        if value:
            return value, f"${name}"
    token = _token_from_gh(api_url)
    if token:
        return token, "gh auth token"
    return None, "none"


def _token_from_gh(api_url):
    gh = shutil.which("gh")
    if not gh:
        return None
    command = [gh, "auth", "token"]
    host = urlsplit(api_url or DEFAULT_API_URL).hostname or ""
    if host and host != "api.github.com":
        command += ["--hostname", host]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=15, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    token = done.stdout.strip()
    return token if done.returncode == 0 and token and "\n" not in token else None


def default_cache_dir():
    """$VLLM_ROCM_REVIEW_CACHE, else $XDG_CACHE_HOME/vllm-rocm-pr-review, else ~/.cache/…."""
    explicit = os.environ.get(CACHE_ENV, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / CACHE_DIR_NAME


def token_fingerprint(token):
    """A salted hash that separates cache entries per token without revealing it."""
    if not token:
        return "anonymous"
    return hashlib.sha256(TOKEN_FINGERPRINT_SALT + token.encode("utf-8")).hexdigest()[:24]


def graphql_url(api_url):
    """GraphQL endpoint for an API base: api.github.com/graphql, or <host>/api/graphql on GHES."""
    if api_url.endswith("/api/v3"):
        return api_url[: -len("/v3")] + "/graphql"
    return api_url + "/graphql"


def _no_netrc(request):
    """Send exactly the headers we set: requests would otherwise add ~/.netrc credentials."""
    return request


class _ResponseCache:
    """ETag + body per request on disk; one JSON file per entry, written atomically."""

    def __init__(self, directory):
        self.directory = Path(directory)

    def _path(self, key):
        return self.directory / key[:2] / f"{key}.json"

    def load(self, key):
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
            body = entry["body"]
            data = base64.b64decode(body) if entry["encoding"] == "base64" else body.encode("utf-8")
            return entry["etag"], data, entry.get("headers", {})
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def store(self, key, url, etag, body, headers):
        try:
            text, encoding = body.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            text, encoding = base64.b64encode(body).decode("ascii"), "base64"
        entry = {"url": url, "etag": etag, "encoding": encoding, "body": text, "headers": headers}
        try:
            # Private-repository answers may be cached: keep the directory to its owner.
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_atomic(self._path(key), json.dumps(entry), private=True)
        except OSError:
            pass  # An unwritable cache only costs rate-limit units next time.

    def _note_path(self, note):
        return self.directory / "notes" / f"{hashlib.sha256(note.encode('utf-8')).hexdigest()}.json"

    def remember(self, note):
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_atomic(self._note_path(note), json.dumps({"note": note}), private=True)
        except OSError:
            pass

    def recalls(self, note):
        return self._note_path(note).is_file()


class GitHubClient:
    """A GitHub REST/GraphQL client with retries, rate-limit handling, pagination and a cache."""

    def __init__(
        self,
        api_url=None,
        token=None,
        cache_dir=None,
        use_cache=True,
        *,
        sleep=time.sleep,
        clock=time.time,
        retry=None,
        wait_for_reset=False,
        max_pages=DEFAULT_MAX_PAGES,
        timeout=DEFAULT_TIMEOUT,
        progress=None,
    ):
        self.api_url = resolve_api_url(api_url)
        self._token = token or None
        self._fingerprint = token_fingerprint(self._token)
        self._cache = _ResponseCache(cache_dir or default_cache_dir()) if use_cache else None
        self._sleep = sleep
        self._clock = clock
        self.retry = retry or RetryPolicy()
        self.wait_for_reset = wait_for_reset
        self.max_pages = max_pages
        self.timeout = tuple(timeout) if isinstance(timeout, (tuple, list)) else (timeout, timeout)
        self._progress = progress
        self._session = requests.Session()
        self._origin = _origin(self.api_url)
        self.requests_made = 0
        self.rate_limit_units = 0
        self.graphql_requests = 0
        self.cache_hits = 0
        self.rate_limit = {"remaining": None, "reset": None}

    @property
    def authenticated(self):
        return self._token is not None

    def __repr__(self):
        return f"GitHubClient(api_url={self.api_url!r}, authenticated={self.authenticated})"

    # --- public calls -------------------------------------------------------------------

    def get_json(self, path, params=None, accept=None):
        return self._get(self._url(path, params), accept or JSON_MEDIA_TYPE, _parse_json)[0]

    def get_text(self, path, params=None, accept=DIFF_MEDIA_TYPE):
        return self.get_bytes(path, params, accept).decode("utf-8", errors="replace")

    def get_bytes(self, path, params=None, accept=RAW_MEDIA_TYPE):
        return self._get(self._url(path, params), accept, _raw_body)[0]

    def get_paginated(self, path, params=None, accept=None, item_key=None, max_pages=None, stop_when=None):
        limit = max_pages or self.max_pages
        url = self._url(path, {**(params or {}), "per_page": PER_PAGE})
        items = []
        pages = 0
        while url:
            page, headers = self._get(url, accept or JSON_MEDIA_TYPE, _parse_json)
            pages += 1
            if item_key is not None:
                page = page.get(item_key, []) if isinstance(page, dict) else None
            if not isinstance(page, list):
                raise BadResponse(f"GET {_short(path)}: expected a list{' in ' + repr(item_key) if item_key else ''}")
            if stop_when is not None:
                cut = next((index for index, item in enumerate(page) if stop_when(item)), None)
                if cut is not None:
                    items.extend(page[:cut])
                    return Paginated(items, False)
            items.extend(page)
            url = _next_link(headers.get("link"))
            if not page:
                break
            if url and pages >= limit:
                return Paginated(items, True)
            if url and _origin(url) != self._origin:
                raise BadResponse(f"GET {_short(path)}: pagination link leaves {self._origin}; refusing to follow it")
        return Paginated(items, False)

    def post_graphql(self, query, variables=None):
        if not self._token:
            raise Unauthorized("GitHub GraphQL needs a token; pass --token or set GH_TOKEN")
        payload = json.dumps({"query": query, "variables": variables or {}}).encode("utf-8")
        self.graphql_requests += 1
        answer = self._send("POST", graphql_url(self.api_url), JSON_MEDIA_TYPE, body=payload)
        result = _parse_json(answer.body, answer.status, "POST graphql")
        errors = result.get("errors") if isinstance(result, dict) else None
        if errors:
            first = errors[0] if isinstance(errors[0], dict) else {}
            message = _one_line(first.get("message", "unknown error"))
            if first.get("type") == "RATE_LIMITED":
                raise RateLimited(f"GitHub GraphQL rate limit exceeded: {message}", secondary=False)
            raise GitHubError(f"GitHub GraphQL error: {message}")
        if not isinstance(result, dict) or not isinstance(result.get("data"), dict):
            raise BadResponse("GitHub GraphQL answer has no data object")
        return result["data"]

    def send_json(self, method, path, payload):
        method = method.upper()
        if method not in WRITE_METHODS:
            raise ValueError(f"send_json sends {' or '.join(WRITE_METHODS)}, not {method}")
        if not self._token:
            raise Unauthorized(f"{method} {_short(path)}: writing to GitHub needs a token; pass --token or set GH_TOKEN")
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        answer = self._send(method, self._url(path, None), JSON_MEDIA_TYPE, body=body,
                            repeatable=method == "PATCH")
        return _parse_json(answer.body, answer.status, f"{method} {_short(path)}")

    def remember(self, note):
        if self._cache is not None:
            self._cache.remember(note)

    def recalls(self, note):
        return self._cache is not None and self._cache.recalls(note)

    # --- plumbing -----------------------------------------------------------------------

    def _url(self, path, params):
        if path.startswith(("http://", "https://")):
            url = path
            if _origin(url) != self._origin:
                raise BadResponse(f"refusing to send a request for {self.api_url} to {_origin(url)}")
        else:
            url = self.api_url + quote("/" + path.lstrip("/"), safe="/-_.~")
        if params:
            url += ("&" if "?" in url else "?") + urlencode(sorted(params.items()))
        return url

    def _cache_key(self, url, accept):
        material = f"{url}\n{accept}\n{self._fingerprint}".encode("utf-8")
        return hashlib.sha256(material).hexdigest()

    def _get(self, url, accept, parse):
        """``(parse(body, status, label), headers)`` for a GET, through the conditional cache."""
        cached = None
        key = None
        if self._cache is not None:
            key = self._cache_key(url, accept)
            cached = self._cache.load(key)
        answer = self._send("GET", url, accept, etag=cached[0] if cached else None)
        if answer.status == 304 and cached:
            self.cache_hits += 1
            return parse(cached[1], 200, f"GET {_short(url)}"), cached[2]
        if answer.status == 304:
            raise BadResponse(f"GET {_short(url)}: 304 Not Modified without a cached copy")
        value = parse(answer.body, answer.status, f"GET {_short(url)}")  # a bad body never reaches the cache
        etag = answer.headers.get("etag")
        if key and etag and answer.status == 200:
            kept = {name: answer.headers[name] for name in ("link", "content-type") if name in answer.headers}
            self._cache.store(key, url, etag, answer.body, kept)
        return value, answer.headers

    def _headers(self, accept, etag, has_body=False):
        headers = {
            "Accept": accept,
            "User-Agent": USER_AGENT,
            "X-GitHub-Api-Version": API_VERSION,
        }
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        if etag:
            headers["If-None-Match"] = etag
        if has_body:
            headers["Content-Type"] = "application/json; charset=utf-8"
        return headers

    def _send(self, method, url, accept, etag=None, body=None, repeatable=True):
        """One logical request: retries 5xx, network failures and short secondary limits.

        ``repeatable=False`` (a POST that changes state) turns off the retries of 5xx answers and
        of failures after the request may have reached GitHub: sending it again could apply it twice.
        """
        failures = 0
        started = time.monotonic()
        while True:
            if self._progress:
                self._progress(f"{method} {_short(url)}")
            self.requests_made += 1
            try:
                response = self._session.request(
                    method,
                    url,
                    headers=self._headers(accept, etag, has_body=body is not None),
                    data=body,
                    timeout=self.timeout,
                    allow_redirects=True,
                    auth=_no_netrc,
                )
                payload = response.content
            except NETWORK_ERRORS as exc:
                reason, transient = _network_failure(exc, self.timeout)
                limit = self.retry.max_retries if transient else self.retry.unreachable_retries
                if not repeatable and _may_have_arrived(exc):
                    limit = 0
                if not self.retry.may_retry(failures, limit, started):
                    raise NetworkError(
                        f"cannot reach {urlsplit(url).netloc}: {reason} ({method} {_short(url)}, {_attempts(failures)}); "
                        f"{API_URL_REMEDY}"
                    ) from None
                self._sleep(self.retry.backoff(failures))
                failures += 1
                continue
            headers = {name.lower(): value for name, value in response.headers.items()}
            answer = _Answer(response.status_code, payload, headers)
            if url != graphql_url(self.api_url):  # GraphQL is charged to its own budget
                self._note_rate_limit(answer)
            if answer.status < 400:
                return answer
            wait = self._retry_wait(method, url, answer, failures, started, repeatable)
            self._sleep(wait)
            failures += 1

    def _note_rate_limit(self, answer):
        if answer.status != 304:
            self.rate_limit_units += 1
        remaining = _int_or_none(answer.headers.get("x-ratelimit-remaining"))
        reset = _int_or_none(answer.headers.get("x-ratelimit-reset"))
        if remaining is not None:
            self.rate_limit = {"remaining": remaining, "reset": reset}

    def _retry_wait(self, method, url, answer, failures, started, repeatable=True):
        """Seconds to sleep before retrying ``answer``, or raise the typed error for it."""
        where = f"{method} {_short(url)}"
        status = answer.status
        message = _error_message(answer.body)
        if status in (403, 429):
            retry_after = _retry_after_seconds(answer.headers.get("retry-after"), self._clock())
            remaining = answer.headers.get("x-ratelimit-remaining")
            reset = _int_or_none(answer.headers.get("x-ratelimit-reset"))
            if retry_after is not None or "secondary rate limit" in message.lower():
                return self._secondary_wait(where, retry_after, failures)
            if remaining == "0":
                return self._primary_wait(reset, failures)
            if status == 429:
                return self._secondary_wait(where, None, failures)
            if method in WRITE_METHODS:
                raise Forbidden(f"{where}: forbidden (403): {message or 'no permission'}; the token needs write "
                                "access to this repository's pull requests and issues")
            raise Forbidden(f"{where}: forbidden (403): {message or 'no permission'}; check the token's access to this repository")
        if status == 401:
            raise Unauthorized(f"{where}: token rejected (401): {message or 'bad credentials'}")
        if status == 404:
            raise NotFound(f"{where}: not found (404)")
        if status == 406 and _is_too_large(answer.body):
            raise TooLarge(f"{where}: too large for this media type (406): {message}")
        if status == 422:
            raise Unprocessable(f"{where}: GitHub refused the content (422): {_validation_summary(answer.body)}")
        if status >= 500:
            if not repeatable:
                raise ServerError(f"{where}: GitHub answered {status}; not sent again since it may have been "
                                  "applied; check the pull request before re-running")
            if not self.retry.may_retry(failures, self.retry.max_retries, started):
                raise ServerError(f"{where}: GitHub answered {status} after {_attempts(failures)}; try again later")
            return self.retry.backoff(failures)
        error = GitHubError(f"{where}: GitHub answered {status}: {message or 'no message'}")
        error.status = status
        raise error

    def _secondary_wait(self, where, retry_after, failures):
        wait = retry_after if retry_after is not None else SECONDARY_DEFAULT_WAIT * (2**failures)
        if failures >= self.retry.max_retries or wait > self.retry.max_secondary_wait:
            raise RateLimited(
                f"{where}: GitHub secondary rate limit asks to wait {wait:.0f} s; try again later",
                retry_after=wait,
                secondary=True,
            )
        return wait

    def _primary_wait(self, reset, failures):
        now = self._clock()
        wait = max(0.0, reset - now) + 1 if reset is not None else None
        waitable = wait is not None and wait <= self.retry.max_reset_wait and failures < self.retry.max_retries
        if self.wait_for_reset and waitable:
            return wait
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(reset)) if reset is not None else "an unknown time"
        minutes = f" (in {int(wait // 60) + 1} min)" if wait is not None else ""
        who = "authenticated" if self._token else f"unauthenticated, {UNAUTHENTICATED_LIMIT}/hour"
        raise RateLimited(f"GitHub API rate limit exhausted ({who}); it resets at {when}{minutes}", reset=reset)


def _network_failure(error, timeout):
    """``(reason, transient)`` for a request that got no answer; ``timeout`` is (connect, read)."""
    if isinstance(error, requests.exceptions.SSLError):
        return "TLS handshake failed", False
    if isinstance(error, requests.ConnectTimeout):
        return f"no connection within {timeout[0]:g} s", False
    if isinstance(error, requests.ReadTimeout):
        return f"no answer within {timeout[1]:g} s", True
    causes = _causes(error)
    if any(isinstance(cause, socket.gaierror) for cause in causes):
        return "host name not found", False
    if any(isinstance(cause, ConnectionRefusedError) for cause in causes):
        return "connection refused", False
    return "connection dropped before an answer", True


def _causes(error):
    """``error`` and the exceptions it wraps (requests and urllib3 chain them several ways)."""
    found = []
    pending = [error]
    while pending and len(found) < 20:
        current = pending.pop()
        if not isinstance(current, BaseException) or any(current is seen for seen in found):
            continue
        found.append(current)
        pending += [current.__cause__, current.__context__, getattr(current, "reason", None), *current.args[:1]]
    return found


def _may_have_arrived(error):
    """Whether the request may have reached GitHub: anything but a failure to connect at all."""
    if isinstance(error, (requests.ConnectTimeout, requests.exceptions.SSLError)):
        return False
    causes = _causes(error)
    return not any(isinstance(cause, (socket.gaierror, ConnectionRefusedError)) for cause in causes)


def _validation_summary(body):
    """GitHub's 422 body as one phrase: its message and each error's field and reason."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return "no message"
    if not isinstance(data, dict):
        return "no message"
    parts = []
    for error in data.get("errors") or []:
        if isinstance(error, dict):
            where = ".".join(str(error[key]) for key in ("resource", "field") if error.get(key))
            reason = error.get("message") or error.get("code") or ""
            parts.append(f"{where} {reason}".strip())
        elif isinstance(error, str):
            parts.append(error)
    message = str(data.get("message") or "validation failed")
    return _one_line(message + (": " + "; ".join(parts) if parts else ""))


def _attempts(failures):
    return "1 attempt" if failures == 0 else f"{failures + 1} attempts"


def _origin(url):
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _short(url):
    """A URL without scheme, host and query, for messages."""
    return urlsplit(url).path or url


def _next_link(header):
    if not header:
        return None
    for link in parse_header_links(header):
        if link.get("rel") == "next":
            return link.get("url")
    return None


def _parse_json(body, status, label):
    if status == 204:
        return []
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise BadResponse(f"{label}: GitHub answered malformed JSON ({len(body)} bytes)") from None


def _raw_body(body, status, label):
    return body


def _error_message(body):
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return ""
    return _one_line(str(data.get("message", ""))) if isinstance(data, dict) else ""


def _is_too_large(body):
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return False
    errors = data.get("errors") if isinstance(data, dict) else None
    return any(isinstance(e, dict) and e.get("code") == "too_large" for e in errors or [])


def _retry_after_seconds(value, now):
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - now)
    except (TypeError, ValueError):
        return None


def _int_or_none(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _one_line(text):
    return " ".join(str(text).split())[:300]
