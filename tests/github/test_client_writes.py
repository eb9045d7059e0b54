"""GitHubClient.send_json against the local replica: what is retried, what is sent once, error lines."""

import json

import pytest
from github_replica import GitHubReplica
from github_replica import Reply

from vllm_rocm_review.github.client import Forbidden
from vllm_rocm_review.github.client import GitHubClient
from vllm_rocm_review.github.client import NetworkError
from vllm_rocm_review.github.client import RetryPolicy
from vllm_rocm_review.github.client import ServerError
from vllm_rocm_review.github.client import Unauthorized
from vllm_rocm_review.github.client import Unprocessable

TOKEN = "ghp_writeTestToken0123456789abcdefABCDEF"
COMMENTS = "/repos/o/r/issues/7/comments"
COMMENT = "/repos/o/r/issues/comments/55"


@pytest.fixture
def replica(httpserver):
    return GitHubReplica(httpserver, tokens={TOKEN})


@pytest.fixture
def sleeps():
    return []


@pytest.fixture
def client(replica, sleeps):
    retry = RetryPolicy(max_retries=3, backoff_base=0.01, max_secondary_wait=120)
    return GitHubClient(replica.api_url, token=TOKEN, use_cache=False, sleep=sleeps.append, retry=retry)


def echo(status):
    def answer(request, match):
        return Reply({"id": 55, **json.loads(request.data)}, status=status)
    return answer


def test_post_sends_json_with_auth_and_returns_the_answer(replica, client):
    replica.route("POST", COMMENTS, echo(201))
    assert client.send_json("POST", COMMENTS, {"body": "说明 ok"}) == {"id": 55, "body": "说明 ok"}
    seen = replica.seen(COMMENTS)[0]
    assert seen.method == "POST" and seen.headers["Authorization"] == f"Bearer {TOKEN}"
    assert seen.headers["Content-Type"].startswith("application/json")
    assert client.rate_limit["remaining"] == replica.remaining


def test_post_is_not_retried_after_a_5xx(replica, client, sleeps):
    replica.route("POST", COMMENTS, echo(201))
    replica.fail("POST", COMMENTS, 502)
    with pytest.raises(ServerError, match="not sent again") as caught:
        client.send_json("POST", COMMENTS, {"body": "x"})
    assert len(replica.seen(COMMENTS)) == 1 and sleeps == []
    assert "\n" not in str(caught.value)


def test_post_is_not_retried_after_a_dropped_connection(replica, client, sleeps):
    replica.route("POST", COMMENTS, echo(201))
    replica.drop_connection(COMMENTS, method="POST")
    with pytest.raises(NetworkError):
        client.send_json("POST", COMMENTS, {"body": "x"})
    assert len(replica.seen(COMMENTS)) == 1 and sleeps == []


def test_post_waits_out_a_secondary_limit_then_sends(replica, client, sleeps):
    replica.route("POST", COMMENTS, echo(201))
    replica.fail("POST", COMMENTS, 403, {"message": "You have exceeded a secondary rate limit"}, {"Retry-After": "5"})
    assert client.send_json("POST", COMMENTS, {"body": "x"})["id"] == 55
    assert sleeps == [5.0] and len(replica.seen(COMMENTS)) == 2


def test_patch_is_retried_after_a_5xx_and_a_dropped_connection(replica, client, sleeps):
    replica.route("PATCH", COMMENT, echo(200))
    replica.fail("PATCH", COMMENT, 503)
    replica.drop_connection(COMMENT, method="PATCH")
    assert client.send_json("PATCH", COMMENT, {"body": "y"}) == {"id": 55, "body": "y"}
    assert len(replica.seen(COMMENT)) == 3 and len(sleeps) == 2


def test_403_on_a_write_is_one_line_naming_write_access(replica, client, sleeps):
    replica.fail("POST", COMMENTS, 403, {"message": "Resource not accessible by integration"})
    with pytest.raises(Forbidden) as caught:
        client.send_json("POST", COMMENTS, {"body": "x"})
    text = str(caught.value)
    assert "\n" not in text and "Resource not accessible by integration" in text and "write access" in text
    assert sleeps == []


def test_422_names_the_field_and_reason_on_one_line(replica, client):
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


def test_writes_need_a_token_and_a_write_method(replica):
    anonymous = GitHubClient(replica.api_url, use_cache=False)
    with pytest.raises(Unauthorized, match="needs a token"):
        anonymous.send_json("POST", COMMENTS, {})
    with pytest.raises(ValueError):
        GitHubClient(replica.api_url, token=TOKEN, use_cache=False).send_json("DELETE", COMMENT, {})
    assert replica.seen() == []
