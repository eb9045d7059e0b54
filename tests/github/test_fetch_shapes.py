"""The replica's PR responses carry every key of GitHub's documented examples (../shared)."""

import json

import pytest
from conftest import shared_path
from replica_pull_request import FakePull
from replica_pull_request import raw_check_run
from replica_pull_request import raw_combined_status_fields
from replica_pull_request import raw_file
from replica_pull_request import raw_issue
from replica_pull_request import raw_issue_comment
from replica_pull_request import raw_pull
from replica_pull_request import raw_review
from replica_pull_request import raw_review_comment
from replica_pull_request import raw_status

from vllm_rocm_review.github import pr_data

PULL = FakePull(
    files=[{"filename": "a.py", "status": "modified", "additions": 1, "deletions": 0, "patch": "@@ -1 +1,2 @@\n a\n+b"}],
    statuses=[("buildkite/ci", "success", "ok")],
)
BUILT = {
    "pull-request.json": lambda: raw_pull(PULL),
    "pull-request-files.json": lambda: raw_file(PULL, PULL.files[0]),
    "issue-comments.json": lambda: raw_issue_comment(PULL, 0, "someone", "hi"),
    "pull-request-review-comments.json": lambda: raw_review_comment(PULL, 0, {"path": "a.py", "line": 1, "body": "x", "in_reply_to": 0}),
    "pull-request-reviews.json": lambda: raw_review(PULL, 0, "someone", "APPROVED", "ok"),
    "issue.json": lambda: raw_issue(PULL, 3, "t", "open", "b"),
}


def example(name):
    data = json.loads(shared_path("github-api-examples", name).read_text(encoding="utf-8"))
    return data[0] if isinstance(data, list) else data


@pytest.mark.parametrize("name", sorted(BUILT))
def test_builder_has_every_documented_key(name):
    documented = example(name)
    built = BUILT[name]()
    assert set(documented) - set(built) == set()
    for key in ("user", "head", "base"):
        if isinstance(documented.get(key), dict):
            assert set(documented[key]) - set(built[key]) == set(), key


def test_check_run_and_combined_status_shapes():
    runs = example("check-runs-for-ref.json")
    assert set(runs) == {"total_count", "check_runs"}
    assert set(runs["check_runs"][0]) - set(raw_check_run(PULL, 0, "x", "completed", "success", "gha")) == set()
    status = example("combined-status.json")
    built = {**raw_combined_status_fields(PULL, PULL.statuses), "total_count": 1, "statuses": []}
    assert set(status) == set(built)
    assert set(status["statuses"][0]) == set(raw_status(PULL, 0, "c", "success", "d"))


def test_slimming_the_documented_examples_keeps_only_reviewer_fields():
    pr = pr_data.slim_pr(example("pull-request.json"))
    assert pr["author"] == "octocat" and pr["head"]["repo"] == "octocat/Hello-World"
    assert pr["labels"] == ["bug"]
    comment = pr_data.slim_review_comment(example("pull-request-review-comments.json"))
    assert comment["in_reply_to_id"] == 8 and comment["side"] == "RIGHT"
    text = json.dumps([pr, comment, pr_data.slim_issue_comment(example("issue-comments.json"))])
    for noise in ("avatar_url", "node_id", "_links", "followers_url", "gravatar_id"):
        assert noise not in text
