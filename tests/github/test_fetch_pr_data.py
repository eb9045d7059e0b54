"""fetch_pr_data.py end to end against the local GitHub replica (real sockets, no network)."""

import json
import os
import sys

import fetch_pr_data
import pytest
from github_env import isolate_github_env
from github_replica import GitHubReplica
from github_replica import refusing_url
from replica_pull_request import FakePull
from replica_pull_request import pull_from_case
from replica_pull_request import review_comment_id
from replica_pull_request import serve_pull
from vllm_cases import case_ids
from vllm_cases import load_case
from vllm_cases import split_diff

from vllm_rocm_review.github.client import GitHubClient
from vllm_rocm_review.github.client import RetryPolicy
from vllm_rocm_review.github.pr_data import fetch_pr_document
from vllm_rocm_review.github.pr_ref import PullRef
from vllm_rocm_review.core.pr_schema import validate_pr_document

TOKEN = "ghp_fetchTestToken9876543210zyxwvuZYXWVU"
FULL_REF = "vllm-project/vllm"


@pytest.fixture
def env(monkeypatch, tmp_path):
    """No ambient token, a `gh` that fails, and a private cache directory."""
    return isolate_github_env(monkeypatch, tmp_path)


@pytest.fixture
def replica(httpserver):
    return GitHubReplica(httpserver, tokens={TOKEN})


@pytest.fixture
def run(replica, capsys, env):
    def run_cli(*args, token=TOKEN):
        argv = [*map(str, args), "--api-url", replica.api_url]
        if token:
            argv += ["--token", token]
        code = fetch_pr_data.main(argv)
        out, err = capsys.readouterr()
        return code, out, err

    return run_cli


def busy_pull():
    """A PR with several pages on most endpoints, CI and two linked issues."""
    return FakePull(
        number=4242,
        title="[ROCm] Busy PR",
        body="Fixes #100. Related to vllm-project/vllm#101.",
        files=[
            {"filename": f"vllm/model_executor/layers/f{i}.py", "status": "modified", "additions": 1, "deletions": 1,
             "patch": f"@@ -1 +1 @@\n-old {i}\n+new {i}"}
            for i in range(250)
        ],
        diff="diff --git a/x b/x\n",
        issue_comments=[("commenter", f"comment {i}") for i in range(120)],
        review_comments=[{"path": "vllm/x.py", "line": i + 1, "body": f"nit {i}"} for i in range(30)],
        reviews=[("reviewer-one", "COMMENTED", f"review {i}") for i in range(5)],
        check_runs=[(f"job-{i}", "completed", "success", "github-actions") for i in range(120)],
        statuses=[("buildkite/ci", "success", "passed"), ("buildkite/amd-ci", "failure", "agent lost")],
        issues={100: ("Crash on MI300X", "open", "trace"), 101: ("Perf tracking", "closed", "numbers")},
    )


def serve_threads(replica, resolved_ids):
    def answer(request, match):
        nodes = [
            {"isResolved": comment_id in resolved_ids, "isOutdated": False, "comments": {"nodes": [{"databaseId": comment_id}]}}
            for comment_id in (review_comment_id(i) for i in range(30))
        ]
        return {"data": {"repository": {"pullRequest": {"reviewThreads": {
            "pageInfo": {"hasNextPage": False, "endCursor": None}, "nodes": nodes}}}}}

    replica.route("POST", "/graphql", answer)


# --- real vLLM PRs ---------------------------------------------------------------------------


@pytest.mark.parametrize("number", case_ids())
def test_real_case_round_trips(number, replica, run):
    case, diff, message = load_case(number)
    serve_pull(replica, pull_from_case(case, diff, message, split_diff))
    code, out, err = run(number)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["diff"] == diff
    assert doc["meta"]["diff_source"] == "api"
    stats = {(f["filename"], f["status"], f["additions"], f["deletions"]) for f in case["files"]}
    assert {(f["filename"], f["status"], f["additions"], f["deletions"]) for f in doc["files"]} == stats
    assert doc["pr"]["changed_files"] == case["num_files"]
    assert not [entry for entry in doc["files"] if "patch" in entry]
    assert (doc["pr"]["additions"], doc["pr"]["deletions"]) == (case["total_additions"], case["total_deletions"])
    assert validate_pr_document(doc, strict=True) == []


@pytest.mark.parametrize("number", case_ids())
def test_real_case_406_rebuilds_the_same_files_and_hunks(number, replica, run):
    case, diff, message = load_case(number)
    serve_pull(replica, pull_from_case(case, diff, message, split_diff), diff_too_large=True)
    code, out, err = run(number)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["meta"]["diff_source"] == "files"
    assert split_diff(doc["diff"]) == split_diff(diff)
    assert doc["meta"]["files_without_patch"] == [f["filename"] for f in split_diff(diff) if f["patch"] is None]
    assert len(replica.seen(rf"/repos/{FULL_REF}/pulls/{number}")) == 2  # the PR and one 406, never retried


# --- request economy -------------------------------------------------------------------------


def test_fetch_makes_exactly_the_minimum_requests(replica, run):
    pull = busy_pull()
    serve_pull(replica, pull)
    serve_threads(replica, set())
    code, out, err = run(pull.number, "--include-ci")
    assert code == 0, err
    # pr 1 + diff 1 + files 3 + issue comments 2 + review comments 1 + reviews 1
    # + check runs 2 + statuses 1 + linked issues 2 + GraphQL thread states 1
    minimum = 15
    assert len(replica.log) == minimum
    assert json.loads(out)["meta"]["requests"] == minimum


def test_repeat_fetch_of_unchanged_pr_costs_no_rest_units(replica, run):
    pull = busy_pull()
    serve_pull(replica, pull)
    serve_threads(replica, set())
    first = run(pull.number, "--include-ci")
    rest_before = [entry for entry in replica.log if entry.method == "GET"]
    second = run(pull.number, "--include-ci")
    rest_after = [entry for entry in replica.log if entry.method == "GET"][len(rest_before):]
    assert first[0] == second[0] == 0
    assert len(rest_after) == len(rest_before)
    assert {entry.status for entry in rest_after} == {304}
    assert json.loads(first[1])["files"] == json.loads(second[1])["files"]


def test_a_refused_diff_is_not_asked_again_while_the_pr_is_unchanged(replica, run):
    pull = busy_pull()
    serve_pull(replica, pull, diff_too_large=True)
    serve_threads(replica, set())

    def diff_requests():
        return [seen for seen in replica.seen(rf"/repos/{FULL_REF}/pulls/{pull.number}") if "diff" in seen.accept]

    first = run(pull.number)
    logged = len(replica.log)
    second = run(pull.number)
    assert first[0] == second[0] == 0
    assert [seen.status for seen in diff_requests()] == [406]
    # GraphQL has its own budget; every REST request of the refetch answered 304
    assert {seen.status for seen in replica.log[logged:] if seen.method == "GET"} == {304}
    assert json.loads(second[1])["diff"] == json.loads(first[1])["diff"]
    assert json.loads(second[1])["meta"]["diff_source"] == "files"

    pull.head_sha = "d" * 40  # a new push: the PR answers 200, so the diff is asked for again
    serve_pull(replica, pull, diff_too_large=True)
    assert run(pull.number)[0] == 0
    assert [seen.status for seen in diff_requests()] == [406, 406]


def test_unauthenticated_repeat_costs_zero_units(replica, run):
    pull = busy_pull()
    serve_pull(replica, pull)
    run(pull.number, token=None)
    spent = replica.units_used
    code, out, err = run(pull.number, token=None)
    assert code == 0
    assert replica.units_used == spent
    assert not replica.seen("/graphql")


def test_no_cache_refetches_everything(replica, run, env):
    pull = busy_pull()
    serve_pull(replica, pull)
    run(pull.number, "--no-cache", token=None)
    spent = replica.units_used
    run(pull.number, "--no-cache", token=None)
    assert replica.units_used == 2 * spent
    assert not (env / "cache").exists()


def test_more_than_300_files_skips_the_diff_request_and_flags_the_3000_cap(replica, run):
    files = [
        {"filename": f"tests/generated/t{i}.py", "status": "added", "additions": 1, "deletions": 0, "patch": "@@ -0,0 +1 @@\n+x"}
        for i in range(3001)
    ]
    pull = FakePull(number=9, files=files)
    serve_pull(replica, pull, max_files=3000)
    code, out, err = run(9)
    doc = json.loads(out)
    assert code == 0
    assert doc["meta"]["diff_source"] == "files"
    assert doc["meta"]["files_truncated"] is True
    assert len(doc["files"]) == 3000 and doc["pr"]["changed_files"] == 3001
    assert not [entry for entry in replica.seen("/repos/vllm-project/vllm/pulls/9") if "diff" in entry.accept]
    assert doc["diff"].count("diff --git ") == 3000
    assert "--- /dev/null\n+++ b/tests/generated/t0.py\n" in doc["diff"]


def test_page_cap_is_reported(replica, tmp_path):
    pull = busy_pull()
    serve_pull(replica, pull)
    client = GitHubClient(replica.api_url, cache_dir=tmp_path / "c", max_pages=1)
    doc = fetch_pr_document(client, PullRef("vllm-project", "vllm", pull.number))
    assert doc["meta"]["pages_capped"] == ["issue_comments"]
    assert len(doc["issue_comments"]) == 100
    assert validate_pr_document(doc, strict=True) == []


def test_a_5xx_and_a_dropped_connection_during_a_fetch_are_survived(replica, tmp_path):
    pull = busy_pull()
    serve_pull(replica, pull)
    replica.fail("GET", "/repos/vllm-project/vllm/pulls/4242/files", 502)
    replica.drop_connection("/repos/vllm-project/vllm/issues/4242/comments")
    sleeps = []
    client = GitHubClient(replica.api_url, cache_dir=tmp_path / "c", sleep=sleeps.append, retry=RetryPolicy(backoff_base=0.001))
    doc = fetch_pr_document(client, PullRef("vllm-project", "vllm", pull.number))
    assert len(doc["files"]) == 250 and len(doc["issue_comments"]) == 120
    assert len(sleeps) == 2


# --- content -------------------------------------------------------------------------------


def test_ci_checks_and_summary(replica, run):
    pull = FakePull(
        number=5,
        check_runs=[
            ("pre-commit", "completed", "success", "github-actions"),
            ("docs", "in_progress", None, "github-actions"),
            ("lint", "completed", "timed_out", "github-actions"),
        ],
        statuses=[("buildkite/ci", "success", "ok"), ("buildkite/amd-ci", "error", "agent lost"), ("rtd", "pending", None)],
    )
    serve_pull(replica, pull)
    code, out, err = run(5, "--include-ci")
    checks = json.loads(out)["checks"]
    assert checks["summary"] == {
        "total": 6,
        "by_outcome": {"error": 1, "pending": 2, "success": 2, "timed_out": 1},
        "failed": ["lint", "buildkite/amd-ci"],
    }
    assert checks["check_runs"][0] == {
        "name": "pre-commit",
        "status": "completed",
        "conclusion": "success",
        "details_url": checks["check_runs"][0]["details_url"],
        "app": "github-actions",
    }
    assert checks["statuses"][1]["context"] == "buildkite/amd-ci"


def test_checks_are_absent_without_include_ci(replica, run):
    serve_pull(replica, FakePull(number=5))
    code, out, err = run(5)
    assert "checks" not in json.loads(out)
    assert not replica.seen(r".*/check-runs|.*/status")


def test_linked_issues_and_slim_objects(replica, run):
    pull = busy_pull()
    serve_pull(replica, pull)
    serve_threads(replica, {review_comment_id(0)})
    code, out, err = run(pull.number)
    doc = json.loads(out)
    assert [(issue["number"], issue["state"]) for issue in doc["linked_issues"]] == [(100, "open"), (101, "closed")]
    assert doc["pr"]["author"] == "octo-dev" and doc["pr"]["head"]["repo"] == "octo-dev/vllm"
    assert set(doc["issue_comments"][0]) == {"id", "author", "body", "created_at", "html_url"}
    assert doc["review_comments"][0]["thread_resolved"] is True
    assert doc["review_comments"][1]["thread_resolved"] is False
    for key in ("url", "user", "_links", "node_id", "avatar_url"):
        assert f'"{key}"' not in out


def test_replies_do_not_repeat_the_thread_hunk(replica, run):
    comments = [
        {"path": "vllm/x.py", "line": 3, "body": "why?", "diff_hunk": "@@ -1 +1 @@\n-a\n+b"},
        {"path": "vllm/x.py", "line": 3, "body": "because", "diff_hunk": "@@ -1 +1 @@\n-a\n+b", "in_reply_to": 0},
        {"path": "vllm/x.py", "line": 9, "body": "moved", "diff_hunk": "@@ -5 +5 @@\n-c\n+d", "in_reply_to": 0},
    ]
    serve_pull(replica, FakePull(number=5, review_comments=comments))
    code, out, err = run(5, token=None)
    hunks = [comment["diff_hunk"] for comment in json.loads(out)["review_comments"]]
    assert hunks == ["@@ -1 +1 @@\n-a\n+b", None, "@@ -5 +5 @@\n-c\n+d"]


def test_thread_state_is_null_without_a_token(replica, run):
    pull = busy_pull()
    serve_pull(replica, pull)
    code, out, err = run(pull.number, token=None)
    assert {c["thread_resolved"] for c in json.loads(out)["review_comments"]} == {None}
    assert not replica.seen("/graphql")


def test_graphql_failure_is_a_warning(replica, run):
    pull = busy_pull()
    serve_pull(replica, pull)
    replica.route("POST", "/graphql", lambda request, match: {"errors": [{"message": "Resource not accessible"}]})
    code, out, err = run(pull.number)
    assert code == 0
    assert "warning: review thread states unavailable" in err
    assert json.loads(out)["meta"]["warnings"]


# --- CLI contract --------------------------------------------------------------------------


def test_unauthenticated_run_warns_once_on_stderr(replica, run):
    serve_pull(replica, FakePull(number=5))
    code, out, err = run(5, token=None)
    assert code == 0
    warnings = [line for line in err.splitlines() if "60 requests per hour" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning:")
    json.loads(out)


def test_stdout_is_only_json_and_no_progress_without_tty(replica, run):
    serve_pull(replica, FakePull(number=5))
    code, out, err = run(5)
    assert json.loads(out)["pr"]["number"] == 5
    assert err == ""


def test_progress_goes_to_a_tty_stderr_unless_quiet(replica, run, monkeypatch):
    serve_pull(replica, FakePull(number=5))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = run(5)
    assert "fetch: GET /repos/vllm-project/vllm/pulls/5\n" in err
    assert all(line.startswith("fetch: ") for line in err.splitlines())
    code, out, err = run(5, "--quiet")
    assert err == ""


def test_token_never_leaks(replica, run, env):
    pull = busy_pull()
    serve_pull(replica, pull)
    serve_threads(replica, set())
    (env / "out").mkdir()
    output = env / "out" / "pr.json"
    code, out, err = run(pull.number, "--include-ci", "--output", output)
    assert code == 0
    for text in (out, err, output.read_text(encoding="utf-8")):
        assert TOKEN not in text
    cached = [path for path in (env / "cache").rglob("*") if path.is_file()]
    assert cached
    for path in cached:
        assert TOKEN not in path.read_text(encoding="utf-8")
    assert replica.seen()[0].headers["Authorization"] == f"Bearer {TOKEN}"


def test_output_file_is_written_and_stdout_stays_empty(replica, run, env):
    serve_pull(replica, FakePull(number=5))
    output = env / "pr-5.json"
    code, out, err = run(5, "--output", output)
    assert code == 0 and out == ""
    assert validate_pr_document(json.loads(output.read_text(encoding="utf-8")), strict=True) == []
    assert [p.name for p in output.parent.iterdir() if p.name.startswith(".pr-5")] == []


def test_failure_creates_no_output_file(replica, run, env):
    output = env / "missing.json"
    code, out, err = run(77, "--output", output)
    assert code == 1
    assert err.strip() == "error: PR 77 not found in vllm-project/vllm"
    assert not output.exists() and out == ""


def test_failure_leaves_an_existing_output_untouched(replica, run, env):
    output = env / "kept.json"
    output.write_text("previous content\n")
    serve_pull(replica, FakePull(number=5))
    replica.fail("GET", "/repos/vllm-project/vllm/pulls/5/files", 403, {"message": "Must have admin rights"})
    code, out, err = run(5, "--output", output)
    assert code == 1
    assert "forbidden (403)" in err
    assert output.read_text() == "previous content\n"


def test_404_names_pr_and_repo_and_hints_at_tokens_when_unauthenticated(replica, run):
    code, out, err = run("ROCm/vllm#12", token=None)
    assert code == 1
    assert "error: PR 12 not found in ROCm/vllm (a private repository needs a token)" in err


def test_401_says_token_rejected_and_where_it_came_from(replica, run, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", "ghp_revoked")
    code, out, err = run(5, token=None)
    assert code == 1
    assert err.splitlines()[-1] == "error: token rejected by GitHub (401); the token came from $GH_TOKEN: renew it or unset it"
    assert "ghp_revoked" not in err


def test_exhausted_primary_limit_exits_1_with_reset_time(replica, run, env):
    replica.remaining = 0
    replica.reset = 1893456000
    output = env / "never.json"
    code, out, err = run(5, "--output", output, token=None)
    assert code == 1
    assert "rate limit exhausted" in err and "resets at 2030-01-01 00:00:00 UTC" in err and "--wait" in err
    assert not output.exists()


def test_malformed_json_is_a_clear_error(replica, run):
    serve_pull(replica, FakePull(number=5))
    replica.malformed_json("/repos/vllm-project/vllm/pulls/5/reviews")
    code, out, err = run(5)
    assert code == 1
    assert err.strip() == "error: GET /repos/vllm-project/vllm/pulls/5/reviews: GitHub answered malformed JSON (19 bytes)"
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize("argument", ["abc", "12x", "#", "vllm#12", "https://github.com/vllm-project/vllm/issues/12", "0"])
def test_bad_pr_argument_exits_2(argument, run, replica):
    code, out, err = run(argument)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")
    assert replica.log == []


def test_pr_url_with_suffix_and_repo_option(replica, run):
    serve_pull(replica, FakePull(owner="ROCm", name="vllm", number=31))
    code, out, err = run("https://github.com/ROCm/vllm/pull/31/files")
    assert code == 0 and json.loads(out)["meta"]["repo"] == "ROCm/vllm"
    code, out, err = run("31", "--repo", "ROCm/vllm")
    assert code == 0 and json.loads(out)["pr"]["number"] == 31


def test_checkout_and_sources_are_exclusive(run):
    with pytest.raises(SystemExit) as caught:
        run(5, "--checkout", "a", "--sources", "b")
    assert caught.value.code == 2


def test_api_url_from_environment(replica, env, monkeypatch, capsys):
    serve_pull(replica, FakePull(number=5))
    monkeypatch.setenv("GITHUB_API_URL", replica.api_url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    assert fetch_pr_data.main(["5", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["meta"]["api_url"] == replica.api_url
    assert replica.seen()[0].authorized


# --- usage and path checks before any request ----------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--checkout", ""], "error: --checkout needs a directory but got an empty value; set VLLM_REPO or pass a path"),
        (["--checkout", "  "], "error: --checkout needs a directory but got an empty value; set VLLM_REPO or pass a path"),
        (["--sources", ""], "error: --sources needs a directory but got an empty value; pass one"),
        (["--output", ""], "error: --output needs a file path but got an empty value; pass one"),
        (["--sources-limit", "3"], "error: --sources-limit only applies to --sources; add --sources DIR or drop it"),
        (["--sources", "src", "--sources-limit", "-1"], "error: --sources-limit must be 0 or more"),
    ],
)
def test_usage_errors_exit_2_with_one_line_and_no_request(args, message, replica, run, env):
    code, out, err = run(5, *args)
    assert code == 2
    assert err.startswith(message) and len(err.splitlines()) == 1
    assert out == "" and replica.log == []
    assert sorted(p.name for p in env.iterdir()) == ["bin"]


def test_output_in_a_missing_directory_is_refused_before_any_request(replica, run, env):
    output = env / "no" / "such" / "pr-5.json"
    code, out, err = run(5, "--output", output)
    assert code == 1
    assert err == f"error: cannot write {output}: directory {output.parent} does not exist; create it (mkdir -p {output.parent}) or choose another path\n"
    assert replica.log == [] and not (env / "no").exists()


def test_output_that_is_a_directory_is_refused_before_any_request(replica, run, env):
    code, out, err = run(5, "--output", env)
    assert code == 1
    assert err == f"error: --output {env} is a directory; give a file path, e.g. outputs/pr-12345.json\n"
    assert replica.log == []


def test_output_under_a_file_is_refused_before_any_request(replica, run, env):
    (env / "notes.txt").write_text("x")
    code, out, err = run(5, "--output", env / "notes.txt" / "pr.json")
    assert code == 1
    assert err == f"error: cannot write {env / 'notes.txt' / 'pr.json'}: {env / 'notes.txt'} is a file, not a directory; choose another path\n"
    assert replica.log == []


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc, a directory that takes no new files")
def test_output_in_a_directory_that_takes_no_files_is_refused_before_any_request(replica, run):
    code, out, err = run(5, "--output", "/proc/pr-5.json")
    assert code == 1
    assert err.startswith("error: cannot write /proc/pr-5.json: /proc does not accept new files (")
    assert err.endswith("); choose a writable directory\n") and ".tmp" not in err
    assert replica.log == []


def test_sources_that_is_a_file_is_refused_before_any_request(replica, run, env):
    (env / "src").write_text("x")
    code, out, err = run(5, "--sources", env / "src")
    assert code == 1
    assert err == f"error: --sources {env / 'src'} is a file; give a directory (it is created when missing)\n"
    assert replica.log == []


def test_wrote_line_after_output_unless_quiet(replica, run, env):
    serve_pull(replica, FakePull(number=5))
    output = env / "pr-5.json"
    code, out, err = run(5, "--output", output)
    assert code == 0
    assert err == f"wrote {output} (6 requests, 0 unchanged)\n"
    code, out, err = run(5, "--output", output, "--quiet")
    assert code == 0 and err == ""


def test_output_gets_the_umask_mode_not_a_private_one(replica, run, env):
    serve_pull(replica, FakePull(number=5))
    previous = os.umask(0o022)
    try:
        code, out, err = run(5, "--output", env / "pr-5.json")
    finally:
        os.umask(previous)
    assert code == 0
    assert (env / "pr-5.json").stat().st_mode & 0o777 == 0o644


def test_unreachable_api_is_tried_twice_and_names_the_host_and_the_remedy(env, capsys):
    output = env / "pr.json"
    with refusing_url() as url:
        code = fetch_pr_data.main(["5", "--api-url", url, "--token", TOKEN, "--output", str(output)])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and not output.exists()
    assert err == (
        f"error: cannot reach {url.split('://')[1]}: connection refused (GET /repos/vllm-project/vllm/pulls/5, 2 attempts); "
        "check the network and --api-url / $GITHUB_API_URL\n"
    )


def test_failure_without_a_token_prints_only_the_error(replica, run):
    code, out, err = run("ROCm/vllm#12", token=None)
    assert code == 1
    assert err == "error: PR 12 not found in ROCm/vllm (a private repository needs a token)\n"


def test_help_names_the_cache_fallbacks_and_no_fixed_tmp_paths(capsys):
    with pytest.raises(SystemExit):
        fetch_pr_data.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "/tmp" not in text
    assert "--output outputs/pr-12345.json" in text
    assert ("VLLM_ROCM_REVIEW_CACHE (cache directory; default $XDG_CACHE_HOME/vllm-rocm-pr-review, else "
            "~/.cache/vllm-rocm-pr-review)") in text
    assert "the directory must exist" in text
