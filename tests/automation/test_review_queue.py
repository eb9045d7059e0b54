"""review_queue.py end to end against the local GitHub replica (real sockets, no network)."""

import json
from datetime import datetime
from datetime import timedelta
from datetime import timezone

import pytest
import review_queue
from github_env import isolate_github_env
from github_replica import GitHubReplica
from replica_pull_request import FakePull
from replica_queue import BOT
from replica_queue import NEWEST
from replica_queue import QueuedPull
from replica_queue import ROCM_PATCH
from replica_queue import docs_pull
from replica_queue import iso
from replica_queue import mixed_queue
from replica_queue import post_marker
from replica_queue import rocm_pull
from replica_queue import serve_queue

from vllm_rocm_review.automation.queue import parse_since

TOKEN = "ghp_queueTestToken0123456789abcdefABCDEF"
REPO_PULLS = "/repos/vllm-project/vllm/pulls"


@pytest.fixture
def replica(httpserver, monkeypatch, tmp_path):
    isolate_github_env(monkeypatch, tmp_path)
    return GitHubReplica(httpserver, tokens={TOKEN})


@pytest.fixture
def run(replica, capsys):
    def run_cli(*args):
        code = review_queue.main([*map(str, args), "--api-url", replica.api_url, "--token", TOKEN])
        out, err = capsys.readouterr()
        return code, out, err

    return run_cli


def since_minutes_before_newest(minutes):
    return iso(NEWEST - timedelta(minutes=minutes))


def queued_numbers(out):
    return [int(line.split("\t")[0]) for line in out.splitlines()]


def test_pulls_listing_is_paginated_and_only_relevant_prs_read_comments(replica, run):
    pulls = mixed_queue(120, relevant_every=10)
    serve_queue(replica, pulls)
    code, out, err = run("--since", since_minutes_before_newest(1000))
    assert code == 0, err
    assert queued_numbers(out) == [queued.pull.number for queued in pulls[::10]]
    first = out.splitlines()[0].split("\t")
    assert first[1:4] == ["full", pulls[0].pull.head_sha, "-"] and first[4].startswith("[ROCm]")
    listing = replica.seen(REPO_PULLS)
    assert len(listing) == 2 and "page=2" in listing[1].query and "sort=updated" in listing[0].query
    assert len(replica.seen(r".*/files")) == 120
    assert len(replica.seen(r".*/issues/\d+/comments")) == 12
    assert not replica.seen(r"/repos/vllm-project/vllm/pulls/\d+")  # no PR fetched whole, no diff
    assert "120 PRs in the window, 120 gated, 12 relevant, 0 already reviewed at their head, 12 to review" in err


def test_listing_stops_at_the_window_edge(replica, run):
    pulls = mixed_queue(150, relevant_every=10)
    serve_queue(replica, pulls)
    code, out, err = run("--since", since_minutes_before_newest(59))
    assert code == 0, err
    assert len(replica.seen(REPO_PULLS)) == 1  # page 1 already reaches past the edge
    assert len(replica.seen(r".*/files")) == 60
    assert queued_numbers(out) == [queued.pull.number for queued in pulls[:60:10]]


def test_marker_on_the_second_comment_page_marks_the_head_reviewed(replica, run):
    reviewed, moved, untouched = rocm_pull(100, NEWEST), rocm_pull(99, NEWEST), rocm_pull(98, NEWEST)
    for queued in (reviewed, moved):
        queued.comments = [("someone", f"comment {i}") for i in range(120)]
    post_marker(reviewed)
    post_marker(moved, head_sha="0" * 40)
    serve_queue(replica, [reviewed, moved, untouched])
    code, out, err = run("--since", "2026-07-01", "--json")
    assert code == 0, err
    matrix = json.loads(out)
    assert matrix == {"include": [
        {"pr": 99, "head_sha": moved.pull.head_sha, "relevance": "full", "reviewed_head": "0" * 40},
        {"pr": 98, "head_sha": untouched.pull.head_sha, "relevance": "full", "reviewed_head": None},
    ]}
    assert len(replica.seen(r"/repos/vllm-project/vllm/issues/100/comments")) == 2
    assert "1 already reviewed at their head" in err


def test_marker_author_ignores_markers_others_post(replica, run):
    spoofed = rocm_pull(100, NEWEST)
    post_marker(spoofed, login="drive-by")
    serve_queue(replica, [spoofed])
    _, out, _ = run("--since", "2026-07-01")
    assert queued_numbers(out) == []
    _, out, _ = run("--since", "2026-07-01", "--marker-author", BOT)
    assert queued_numbers(out) == [100]


def test_partial_relevance_is_queued_and_label_narrows(replica, run):
    shared = FakePull(number=7, title="Speed up the sampler", head_sha="7" * 40, labels=["rocm"], files=[
        {"filename": "vllm/platforms/rocm.py", "status": "modified", "additions": 1, "deletions": 0, "patch": ROCM_PATCH},
        *({"filename": f"vllm/v1/sample/part_{i}.py", "status": "modified", "additions": 1, "deletions": 0,
           "patch": "@@ -1 +1 @@\n-a = 1\n+a = 2"} for i in range(4)),
    ])
    serve_queue(replica, [QueuedPull(shared, NEWEST), rocm_pull(6, NEWEST - timedelta(minutes=1))])
    code, out, err = run("--since", "2026-07-01", "--json")
    assert code == 0, err
    assert [(e["pr"], e["relevance"]) for e in json.loads(out)["include"]] == [(7, "partial"), (6, "full")]
    _, out, _ = run("--since", "2026-07-01", "--json", "--label", "rocm")
    assert [e["pr"] for e in json.loads(out)["include"]] == [7]


def test_rate_limit_stops_cleanly_with_what_it_has(replica, run):
    pulls = [rocm_pull(200 - i, NEWEST - timedelta(minutes=i)) for i in range(10)]
    serve_queue(replica, pulls)
    replica.remaining = 1 + 2 * 3 + 1  # the listing, three PRs (files + comments), then one more files page
    code, out, err = run("--since", "2026-07-01")
    assert code == review_queue.RATE_LIMITED == 3
    assert queued_numbers(out) == [200, 199, 198]
    assert "stopped early: GitHub API rate limit exhausted" in err and "partial" in err
    assert err.strip().splitlines()[-1].startswith("error: ")


def test_limit_bounds_the_queue_and_its_requests(replica, run):
    serve_queue(replica, [rocm_pull(300 - i, NEWEST - timedelta(minutes=i)) for i in range(10)])
    code, out, _ = run("--since", "2026-07-01", "--limit", "2")
    assert code == 0 and queued_numbers(out) == [300, 299]
    assert len(replica.seen(r".*/files")) == 2


def test_second_run_over_unchanged_prs_costs_only_the_changed_answers(replica, run):
    pulls = mixed_queue(30, relevant_every=10)
    serve_queue(replica, pulls)
    run("--since", "2026-07-01")
    used = replica.units_used
    code, out, err = run("--since", "2026-07-01")
    assert code == 0 and len(queued_numbers(out)) == 3
    assert replica.units_used == used  # every answer was a 304
    assert "0 rate-limit units, 34 unchanged" in err


def test_window_with_no_prs_prints_nothing(replica, run):
    serve_queue(replica, [docs_pull(5, NEWEST)])
    code, out, err = run("--since", "2026-08-02", "--json")
    assert code == 0 and json.loads(out) == {"include": []}
    assert not replica.seen(r".*/files")


@pytest.mark.parametrize("args, message", [
    (["--since", "yesterday"], "--since 'yesterday' is neither a duration"),
    (["--repo", "vllm"], "--repo 'vllm' is not OWNER/NAME"),
    (["--limit", "0"], "--limit must be 1 or more"),
    (["--label", " "], "--label needs a label name"),
])
def test_usage_errors_exit_2_before_any_request(replica, run, args, message):
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1
    assert replica.log == []


def test_argparse_usage_errors_exit_2(replica, run):
    with pytest.raises(SystemExit) as exited:
        run("--state", "merged")
    assert exited.value.code == 2


def test_since_accepts_durations_and_dates():
    now = datetime(2026, 8, 3, 12, 0, tzinfo=timezone.utc).timestamp()
    assert parse_since("2d", now) == datetime(2026, 8, 1, 12, 0, tzinfo=timezone.utc)
    assert parse_since("90m", now) == datetime(2026, 8, 3, 10, 30, tzinfo=timezone.utc)
    assert parse_since("1w", now) == datetime(2026, 7, 27, 12, 0, tzinfo=timezone.utc)
    assert parse_since("2026-08-01", now) == datetime(2026, 8, 1, tzinfo=timezone.utc)
    assert parse_since("2026-08-01T10:00:00Z", now) == datetime(2026, 8, 1, 10, tzinfo=timezone.utc)
    with pytest.raises(ValueError):
        parse_since("-2d", now)
