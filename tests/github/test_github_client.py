"""GitHubClient against the local replica: pagination, cache, retries, rate limits, errors."""

import json
import os
import socket
import stat

import pytest
import requests
from github_env import clear_github_env
from github_env import fake_gh
from github_replica import GitHubReplica
from github_replica import Reply
from github_replica import refusing_url
from github_replica import unanswering_url

from vllm_rocm_review.github import client as github
from vllm_rocm_review.github.client import BadResponse
from vllm_rocm_review.github.client import Forbidden
from vllm_rocm_review.github.client import GitHubClient
from vllm_rocm_review.github.client import GitHubError
from vllm_rocm_review.github.client import NetworkError
from vllm_rocm_review.github.client import NotFound
from vllm_rocm_review.github.client import RateLimited
from vllm_rocm_review.github.client import RetryPolicy
from vllm_rocm_review.github.client import ServerError
from vllm_rocm_review.github.client import TooLarge
from vllm_rocm_review.github.client import Unauthorized
from vllm_rocm_review.github.client import Unprocessable

TOKEN = "ghp_clientTestToken0123456789abcdefABCDEF"
PULL = "/repos/o/r/pulls/1"
COMMENTS = "/repos/o/r/issues/7/comments"
COMMENT = "/repos/o/r/issues/comments/55"


@pytest.fixture
def replica(httpserver):
    return GitHubReplica(httpserver, tokens={TOKEN})


@pytest.fixture
def sleeps():
    return []


@pytest.fixture
def make_client(replica, tmp_path, sleeps):
    def make(**options):
        options.setdefault("cache_dir", tmp_path / "cache")
        options.setdefault("sleep", sleeps.append)
        options.setdefault("retry", RetryPolicy(max_retries=3, backoff_base=0.01, max_secondary_wait=120))
        return GitHubClient(replica.api_url, **options)

    return make


# --- pagination ----------------------------------------------------------------------------


def test_pagination_follows_link_next_with_per_page_100(replica, make_client):
    replica.add_list("/repos/o/r/items", [{"n": i} for i in range(250)])
    client = make_client()
    result = client.get_paginated("/repos/o/r/items")
    assert [item["n"] for item in result.items] == list(range(250))
    assert result.capped is False
    seen = replica.seen("/repos/o/r/items")
    assert [entry.query for entry in seen] == ["per_page=100", "per_page=100&page=2", "per_page=100&page=3"]
    assert client.requests_made == 3


def test_pagination_uses_the_link_url_exactly(replica, make_client):
    def first(request, match):
        return Reply([1], headers={"Link": f'<{replica.url_for("/elsewhere/page-two")}?cursor=xyz>; rel="next"'})

    replica.route("GET", "/repos/o/r/cursor", first)
    replica.route("GET", "/elsewhere/page-two", lambda request, match: [2] if request.args["cursor"] == "xyz" else [])
    assert make_client().get_paginated("/repos/o/r/cursor").items == [1, 2]


def test_pagination_page_cap_reports_capped(replica, make_client):
    replica.add_list("/repos/o/r/items", list(range(450)))
    result = make_client(max_pages=2).get_paginated("/repos/o/r/items")
    assert len(result.items) == 200
    assert result.capped is True
    assert len(replica.seen("/repos/o/r/items")) == 2


def test_pagination_unwraps_an_envelope(replica, make_client):
    replica.add_list("/repos/o/r/commits/s/check-runs", [{"name": f"c{i}"} for i in range(120)], envelope="check_runs")
    result = make_client().get_paginated("/repos/o/r/commits/s/check-runs", item_key="check_runs")
    assert len(result.items) == 120


def test_pagination_refuses_a_link_to_another_host(replica, make_client):
    replica.route(
        "GET", "/repos/o/r/evil", lambda request, match: Reply([1], headers={"Link": '<https://attacker.example/x>; rel="next"'})
    )
    with pytest.raises(BadResponse, match="refusing"):
        make_client(token=TOKEN).get_paginated("/repos/o/r/evil")


# --- conditional cache ---------------------------------------------------------------------


def test_repeat_get_is_a_304_that_costs_no_units(replica, make_client):
    replica.add_json(PULL, {"number": 1})
    first = make_client()
    assert first.get_json(PULL) == {"number": 1}
    second = make_client()
    assert second.get_json(PULL) == {"number": 1}
    assert (second.requests_made, second.rate_limit_units, second.cache_hits) == (1, 0, 1)
    assert replica.seen(PULL)[-1].status == 304
    assert replica.seen(PULL)[-1].if_none_match is not None


def test_a_note_outlives_the_client_only_with_a_cache(make_client, tmp_path):
    make_client().remember("diff-too-large pulls/7 head=abc")
    assert make_client().recalls("diff-too-large pulls/7 head=abc")
    assert not make_client().recalls("diff-too-large pulls/7 head=def")
    uncached = make_client(use_cache=False)
    uncached.remember("diff-too-large pulls/8 head=abc")
    assert not uncached.recalls("diff-too-large pulls/8 head=abc")
    assert not make_client().recalls("diff-too-large pulls/8 head=abc")


def test_changed_resource_is_fetched_again(replica, make_client):
    replica.add_json(PULL, {"title": "old"})
    make_client().get_json(PULL)
    replica.add_json(PULL, {"title": "new"})
    client = make_client()
    assert client.get_json(PULL) == {"title": "new"}
    assert client.rate_limit_units == 1


def test_cached_pagination_replays_links(replica, make_client):
    replica.add_list("/repos/o/r/items", list(range(150)))
    make_client().get_paginated("/repos/o/r/items")
    again = make_client()
    assert again.get_paginated("/repos/o/r/items").items == list(range(150))
    assert (again.requests_made, again.rate_limit_units) == (2, 0)


def test_cache_is_separate_per_token_and_per_media_type(replica, make_client):
    replica.add_json(PULL, {"number": 1}, media={"application/vnd.github.diff": "diff text"})
    make_client().get_json(PULL)
    authenticated = make_client(token=TOKEN)
    authenticated.get_json(PULL)
    assert authenticated.cache_hits == 0
    assert authenticated.get_text(PULL) == "diff text"
    assert authenticated.cache_hits == 0


def test_cache_files_hold_no_token(replica, make_client, tmp_path):
    replica.add_json(PULL, {"number": 1})
    make_client(token=TOKEN).get_json(PULL)
    files = [path for path in (tmp_path / "cache").rglob("*") if path.is_file()]
    assert files
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert TOKEN not in path.read_text(encoding="utf-8")
        assert TOKEN[4:20] not in path.name


def test_no_cache_sends_no_if_none_match(replica, make_client, tmp_path):
    replica.add_json(PULL, {"number": 1})
    make_client(use_cache=False).get_json(PULL)
    make_client(use_cache=False).get_json(PULL)
    assert [entry.if_none_match for entry in replica.seen(PULL)] == [None, None]
    assert not (tmp_path / "cache").exists()


def test_malformed_json_is_not_cached(replica, make_client):
    replica.add_json(PULL, {"number": 1})
    replica.malformed_json(PULL)
    with pytest.raises(BadResponse, match="malformed JSON"):
        make_client().get_json(PULL)
    client = make_client()
    assert client.get_json(PULL) == {"number": 1}
    assert replica.seen(PULL)[-1].if_none_match is None


# --- retries ------------------------------------------------------------------------------


def test_5xx_once_then_ok_is_retried_with_backoff(replica, make_client, sleeps):
    replica.add_json(PULL, {"number": 1})
    replica.fail("GET", PULL, 502)
    client = make_client()
    assert client.get_json(PULL) == {"number": 1}
    assert client.requests_made == 2
    assert sleeps == [0.01]


def test_5xx_retries_are_bounded_and_grow(replica, make_client, sleeps):
    replica.fail("GET", PULL, 503, times=None)
    with pytest.raises(ServerError, match="503 after 4 attempts"):
        make_client().get_json(PULL)
    assert sleeps == [0.01, 0.02, 0.04]
    assert len(replica.seen(PULL)) == 4


def test_dropped_connection_is_retried(replica, make_client, sleeps):
    replica.add_json(PULL, {"number": 1})
    replica.drop_connection(PULL)
    client = make_client()
    assert client.get_json(PULL) == {"number": 1}
    assert client.requests_made == 2
    assert len(sleeps) == 1


def test_dropped_connections_give_up_with_a_network_error(replica, make_client):
    replica.drop_connection(PULL, times=None)
    host = replica.api_url.split("://")[1]
    with pytest.raises(NetworkError) as caught:
        make_client().get_json(PULL)
    assert str(caught.value) == (
        f"cannot reach {host}: connection dropped before an answer (GET {PULL}, 4 attempts); "
        "check the network and --api-url / $GITHUB_API_URL"
    )


def test_refused_connection_is_retried_once_and_names_host_and_remedy(sleeps):
    with refusing_url() as url:
        client = GitHubClient(url, use_cache=False, sleep=sleeps.append, retry=RetryPolicy(max_retries=3, backoff_base=0.01))
        with pytest.raises(NetworkError) as caught:
            client.get_json(PULL)
    host = url.split("://")[1]
    assert str(caught.value) == (
        f"cannot reach {host}: connection refused (GET {PULL}, 2 attempts); check the network and --api-url / $GITHUB_API_URL"
    )
    assert sleeps == [0.01] and client.requests_made == 2


def test_unanswering_server_times_out_on_read_and_the_retry_budget_stops_it():
    retry = RetryPolicy(max_retries=20, backoff_base=0.01, retry_budget=0.5)
    with unanswering_url() as url:
        client = GitHubClient(url, use_cache=False, timeout=(1, 0.1), retry=retry)
        with pytest.raises(NetworkError, match=r"no answer within 0\.1 s") as caught:
            client.get_json(PULL)
    # Each attempt waits 0.1 s for an answer, so the 0.5 s budget admits a few, never all 21.
    assert 2 <= client.requests_made < 10
    assert f"{client.requests_made} attempts" in str(caught.value)


def test_unknown_host_is_not_transient():
    try:
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except socket.gaierror as lookup:
            raise requests.ConnectionError("Max retries exceeded") from lookup
    except requests.ConnectionError as error:
        assert github._network_failure(error, (10, 30)) == ("host name not found", False)
    assert github._network_failure(requests.ConnectionError("reset"), (10, 30)) == ("connection dropped before an answer", True)
    assert github._network_failure(requests.ConnectTimeout(), (10, 30)) == ("no connection within 10 s", False)


def test_client_timeout_is_connect_and_read():
    assert GitHubClient("https://api.github.com", use_cache=False).timeout == (10.0, 30.0)
    assert GitHubClient("https://api.github.com", use_cache=False, timeout=5).timeout == (5, 5)


def test_5xx_retries_stop_at_the_retry_budget(replica, make_client, sleeps):
    replica.fail("GET", PULL, 503, times=None)
    with pytest.raises(ServerError, match="503 after 1 attempt;"):
        make_client(retry=RetryPolicy(max_retries=3, backoff_base=1.0, retry_budget=0.5)).get_json(PULL)
    assert sleeps == []


def test_406_too_large_is_never_retried(replica, make_client, sleeps):
    too_large = {"message": "Sorry, the diff exceeded the maximum number of lines (20000).",
                 "errors": [{"resource": "PullRequest", "field": "diff", "code": "too_large"}]}
    replica.add_json(PULL, {}, media={"application/vnd.github.diff": Reply(too_large, status=406)})
    with pytest.raises(TooLarge):
        make_client().get_text(PULL)
    assert len(replica.seen(PULL)) == 1
    assert sleeps == []


# --- rate limits --------------------------------------------------------------------------


def test_secondary_limit_with_retry_after_waits_and_retries(replica, make_client, sleeps):
    replica.add_json(PULL, {"number": 1})
    replica.fail("GET", PULL, 403, {"message": "You have exceeded a secondary rate limit."}, {"Retry-After": "7"})
    assert make_client().get_json(PULL) == {"number": 1}
    assert sleeps == [7.0]


def test_secondary_limit_by_message_only_waits_the_default(replica, make_client, sleeps):
    replica.add_json(PULL, {"number": 1})
    replica.fail("GET", PULL, 429, {"message": "You have exceeded a secondary rate limit. Please wait."})
    assert make_client().get_json(PULL) == {"number": 1}
    assert sleeps == [60]


def test_secondary_limit_beyond_the_bound_raises(replica, make_client, sleeps):
    replica.fail("GET", PULL, 429, {"message": "slow down"}, {"Retry-After": "3600"})
    with pytest.raises(RateLimited) as caught:
        make_client().get_json(PULL)
    assert caught.value.secondary and caught.value.retry_after == 3600
    assert sleeps == []


def test_exhausted_primary_limit_names_the_reset_time_and_does_not_retry(replica, make_client, sleeps):
    replica.remaining = 0
    replica.reset = 1893456000  # 2030-01-01 00:00:00 UTC
    with pytest.raises(RateLimited, match="resets at 2030-01-01 00:00:00 UTC") as caught:
        make_client(clock=lambda: 1893456000 - 600).get_json(PULL)
    assert caught.value.reset == 1893456000 and not caught.value.secondary
    assert "(in 11 min)" in str(caught.value)
    assert len(replica.seen(PULL)) == 1 and sleeps == []


def test_primary_limit_with_wait_for_reset_sleeps_then_retries(replica, make_client, sleeps):
    replica.add_json(PULL, {"number": 1})
    replica.fail("GET", PULL, 429, {"message": "API rate limit exceeded"}, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1000"})
    client = make_client(wait_for_reset=True, clock=lambda: 900)
    assert client.get_json(PULL) == {"number": 1}
    assert sleeps == [101]


def test_plain_403_is_a_permission_error_without_retry(replica, make_client, sleeps):
    replica.fail("GET", PULL, 403, {"message": "Resource not accessible by personal access token"})
    with pytest.raises(Forbidden, match="forbidden"):
        make_client().get_json(PULL)
    assert len(replica.seen(PULL)) == 1 and sleeps == []


def test_rate_limit_headers_are_recorded(replica, make_client):
    replica.add_json(PULL, {})
    replica.remaining = 42
    client = make_client()
    client.get_json(PULL)
    assert client.rate_limit == {"remaining": 41, "reset": replica.reset}


# --- other errors -------------------------------------------------------------------------


def test_401_is_unauthorized(replica, make_client):
    with pytest.raises(Unauthorized, match="token rejected"):
        make_client(token="ghp_wrong").get_json(PULL)


def test_404_is_not_found(replica, make_client):
    with pytest.raises(NotFound, match="not found"):
        make_client().get_json("/repos/o/r/pulls/99")


def test_other_status_is_a_one_line_error_with_status(replica, make_client):
    replica.fail("GET", PULL, 410, {"message": "This issue was deleted\nlong ago"})
    with pytest.raises(GitHubError) as caught:
        make_client().get_json(PULL)
    assert caught.value.status == 410 and "\n" not in str(caught.value)


def test_token_is_sent_as_bearer_and_never_in_messages(replica, make_client):
    replica.fail("GET", PULL, 500, times=None)
    with pytest.raises(ServerError) as caught:
        make_client(token=TOKEN).get_json(PULL)
    assert TOKEN not in str(caught.value) and TOKEN not in repr(make_client(token=TOKEN))
    assert replica.seen(PULL)[0].headers["Authorization"] == f"Bearer {TOKEN}"


def test_paths_are_percent_encoded(replica, make_client):
    replica.route("GET", r"/repos/o/r/contents/dir x/a#b\.py", lambda request, match: {"ok": True})
    assert make_client().get_json("/repos/o/r/contents/dir x/a#b.py", params={"ref": "a b"}) == {"ok": True}
    assert replica.seen()[-1].query == "ref=a+b"


# --- GraphQL ------------------------------------------------------------------------------


def test_graphql_posts_the_query_and_returns_data(replica, make_client):
    def answer(request, match):
        payload = json.loads(request.data)
        return {"data": {"echo": payload["variables"]["n"]}}

    replica.route("POST", "/graphql", answer)
    client = make_client(token=TOKEN)
    assert client.post_graphql("query($n: Int!) { echo }", {"n": 5}) == {"echo": 5}
    assert client.requests_made == 1


def test_graphql_errors_and_missing_token(replica, make_client):
    replica.route("POST", "/graphql", lambda request, match: {"errors": [{"message": "Field 'x' doesn't exist"}]})
    with pytest.raises(GitHubError, match="doesn't exist"):
        make_client(token=TOKEN).post_graphql("{ x }")
    with pytest.raises(Unauthorized):
        make_client().post_graphql("{ x }")


def test_graphql_url_for_github_and_enterprise():
    assert github.graphql_url("https://api.github.com") == "https://api.github.com/graphql"
    assert github.graphql_url("https://ghe.example.com/api/v3") == "https://ghe.example.com/api/graphql"


# --- configuration ------------------------------------------------------------------------


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No GitHub variables, and a PATH holding only an empty folder (no `gh` unless a test adds one)."""
    clear_github_env(monkeypatch)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def test_resolve_api_url_precedence(clean_env, monkeypatch):
    assert github.resolve_api_url(None) == "https://api.github.com"
    monkeypatch.setenv("GITHUB_API_URL", "https://ghe.example.com/api/v3/")
    assert github.resolve_api_url(None) == "https://ghe.example.com/api/v3"
    assert github.resolve_api_url("http://127.0.0.1:9") == "http://127.0.0.1:9"
    with pytest.raises(ValueError, match="not an http"):
        github.resolve_api_url("ftp://x")


def test_token_precedence(clean_env, monkeypatch):
    fake_gh(clean_env, "echo gho_fromgh")
    assert github.discover_token_with_source(None) == ("gho_fromgh", "gh auth token")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_fromgithub")
    assert github.discover_token_with_source(None) == ("ghs_fromgithub", "$GITHUB_TOKEN")
    monkeypatch.setenv("GH_TOKEN", "ghp_fromgh_env")
    assert github.discover_token_with_source(None)[0] == "ghp_fromgh_env"
    assert github.discover_token_with_source("ghp_cli") == ("ghp_cli", "--token")


def test_failing_gh_means_no_token(clean_env):
    fake_gh(clean_env, "echo 'no oauth token' >&2; exit 1")
    assert github.discover_token_with_source(None) == (None, "none")


def test_gh_gets_the_enterprise_hostname(clean_env, tmp_path):
    log = tmp_path / "gh-args"
    fake_gh(clean_env, f'echo "$@" > {log}; echo gho_enterprise')
    assert github.discover_token_with_source(None, "https://ghe.example.com/api/v3")[0] == "gho_enterprise"
    assert log.read_text().split() == ["auth", "token", "--hostname", "ghe.example.com"]


def test_no_gh_on_path_means_no_token(clean_env):
    assert github.discover_token_with_source(None)[0] is None


def test_default_cache_dir_precedence(clean_env, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert github.default_cache_dir() == tmp_path / "home" / ".cache" / "vllm-rocm-pr-review"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert github.default_cache_dir() == tmp_path / "xdg" / "vllm-rocm-pr-review"
    monkeypatch.setenv("VLLM_ROCM_REVIEW_CACHE", str(tmp_path / "mine"))
    assert github.default_cache_dir() == tmp_path / "mine"


def test_client_uses_default_cache_dir(clean_env, monkeypatch, replica, tmp_path):
    monkeypatch.setenv("VLLM_ROCM_REVIEW_CACHE", str(tmp_path / "env-cache"))
    replica.add_json(PULL, {})
    GitHubClient(replica.api_url).get_json(PULL)
    assert any(path.is_file() for path in (tmp_path / "env-cache").rglob("*.json"))
    assert os.environ["VLLM_ROCM_REVIEW_CACHE"] == str(tmp_path / "env-cache")


# --- writes (send_json) -------------------------------------------------------------------


def echo(status):
    def answer(request, match):
        return Reply({"id": 55, **json.loads(request.data)}, status=status)
    return answer


def test_post_sends_json_with_auth_and_returns_the_answer(replica, make_client):
    client = make_client(token=TOKEN, use_cache=False)
    replica.route("POST", COMMENTS, echo(201))
    assert client.send_json("POST", COMMENTS, {"body": "说明 ok"}) == {"id": 55, "body": "说明 ok"}
    seen = replica.seen(COMMENTS)[0]
    assert seen.method == "POST" and seen.headers["Authorization"] == f"Bearer {TOKEN}"
    assert seen.headers["Content-Type"].startswith("application/json")
    assert client.rate_limit["remaining"] == replica.remaining


def test_post_is_not_retried_after_a_5xx(replica, make_client, sleeps):
    client = make_client(token=TOKEN, use_cache=False)
    replica.route("POST", COMMENTS, echo(201))
    replica.fail("POST", COMMENTS, 502)
    with pytest.raises(ServerError, match="not sent again") as caught:
        client.send_json("POST", COMMENTS, {"body": "x"})
    assert len(replica.seen(COMMENTS)) == 1 and sleeps == []
    assert "\n" not in str(caught.value)


def test_post_is_not_retried_after_a_dropped_connection(replica, make_client, sleeps):
    client = make_client(token=TOKEN, use_cache=False)
    replica.route("POST", COMMENTS, echo(201))
    replica.drop_connection(COMMENTS, method="POST")
    with pytest.raises(NetworkError):
        client.send_json("POST", COMMENTS, {"body": "x"})
    assert len(replica.seen(COMMENTS)) == 1 and sleeps == []


def test_post_waits_out_a_secondary_limit_then_sends(replica, make_client, sleeps):
    client = make_client(token=TOKEN, use_cache=False)
    replica.route("POST", COMMENTS, echo(201))
    replica.fail("POST", COMMENTS, 403, {"message": "You have exceeded a secondary rate limit"}, {"Retry-After": "5"})
    assert client.send_json("POST", COMMENTS, {"body": "x"})["id"] == 55
    assert sleeps == [5.0] and len(replica.seen(COMMENTS)) == 2


def test_patch_is_retried_after_a_5xx_and_a_dropped_connection(replica, make_client, sleeps):
    client = make_client(token=TOKEN, use_cache=False)
    replica.route("PATCH", COMMENT, echo(200))
    replica.fail("PATCH", COMMENT, 503)
    replica.drop_connection(COMMENT, method="PATCH")
    assert client.send_json("PATCH", COMMENT, {"body": "y"}) == {"id": 55, "body": "y"}
    assert len(replica.seen(COMMENT)) == 3 and len(sleeps) == 2


def test_403_on_a_write_is_one_line_naming_write_access(replica, make_client, sleeps):
    client = make_client(token=TOKEN, use_cache=False)
    replica.fail("POST", COMMENTS, 403, {"message": "Resource not accessible by integration"})
    with pytest.raises(Forbidden) as caught:
        client.send_json("POST", COMMENTS, {"body": "x"})
    text = str(caught.value)
    assert "\n" not in text and "Resource not accessible by integration" in text and "write access" in text
    assert sleeps == []


def test_422_names_the_field_and_reason_on_one_line(replica, make_client):
    client = make_client(token=TOKEN, use_cache=False)
    body = {"message": "Validation Failed",
            "errors": [{"resource": "PullRequestReviewComment", "field": "line", "code": "invalid",
                        "message": "line must be part of the diff"}, "pull_request_review_thread.path is invalid"]}
    replica.fail("POST", "/repos/o/r/pulls/7/reviews", 422, body)
    with pytest.raises(Unprocessable) as caught:
        client.send_json("POST", "/repos/o/r/pulls/7/reviews", {"event": "COMMENT"})
    text = str(caught.value)
    assert "\n" not in text and "(422)" in text
    assert "PullRequestReviewComment.line line must be part of the diff" in text
    assert "path is invalid" in text


def test_writes_need_a_token_and_a_write_method(replica, make_client):
    anonymous = make_client()
    with pytest.raises(Unauthorized, match="needs a token"):
        anonymous.send_json("POST", COMMENTS, {})
    with pytest.raises(ValueError):
        make_client(token=TOKEN).send_json("DELETE", COMMENT, {})
    assert replica.seen() == []
