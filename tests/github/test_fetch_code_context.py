"""--checkout against a local bare repository and --sources against the replica."""

import json
import os
import subprocess

import fetch_pr_data
import pytest
from github_env import isolate_github_env
from github_replica import GitHubReplica
from github_replica import Reply
from replica_pull_request import FakePull
from replica_pull_request import serve_pull

from vllm_rocm_review.github import code_context
from vllm_rocm_review.github.client import GitHubClient

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd, *args):
    done = subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True, env={**os.environ, **GIT_ENV}
    )
    return done.stdout.strip()


@pytest.fixture
def env(monkeypatch, tmp_path):
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    return isolate_github_env(monkeypatch, tmp_path)


@pytest.fixture
def upstream(env, monkeypatch):
    """A bare vllm-project/vllm.git with main and refs/pull/7/head, plus its commit SHAs.

    History: B (merge base) -> M on main, and B -> H for the PR head.
    """
    root = env / "git"
    bare = root / "vllm-project" / "vllm.git"
    bare.mkdir(parents=True)
    git(bare, "init", "--quiet", "--bare", "--initial-branch=main")
    work = env / "author"
    work.mkdir()
    git(work, "init", "--quiet", "-b", "main")
    (work / "rocm.py").write_text("base\n")
    git(work, "add", ".")
    git(work, "commit", "--quiet", "-m", "base")
    merge_base = git(work, "rev-parse", "HEAD")
    (work / "other.py").write_text("main moved on\n")
    git(work, "add", ".")
    git(work, "commit", "--quiet", "-m", "main")
    main = git(work, "rev-parse", "HEAD")
    git(work, "checkout", "--quiet", "-b", "pr", merge_base)
    (work / "rocm.py").write_text("pr change\n")
    git(work, "commit", "--quiet", "-am", "pr")
    head = git(work, "rev-parse", "HEAD")
    git(work, "push", "--quiet", str(bare), "main:refs/heads/main", "pr:refs/pull/7/head")
    monkeypatch.setenv(code_context.GIT_URL_ENV, f"file://{root}")
    return {"bare": bare, "base": main, "head": head, "merge_base": merge_base}


@pytest.fixture
def replica(httpserver):
    return GitHubReplica(httpserver)


def run(replica, capsys, *args):
    code = fetch_pr_data.main([*map(str, args), "--api-url", replica.api_url])
    out, err = capsys.readouterr()
    return code, out, err


# --- --checkout --------------------------------------------------------------------------------


def test_checkout_into_an_existing_clone_leaves_its_work_tree_alone(upstream, replica, capsys, env):
    clone = env / "clone"
    git(env, "clone", "--quiet", str(upstream["bare"]), str(clone))
    (clone / "rocm.py").write_text("local edit\n")
    (clone / "untracked.txt").write_text("mine\n")
    status_before = git(clone, "status", "--porcelain")
    serve_pull(replica, FakePull(number=7, head_sha=upstream["head"], base_sha=upstream["base"]))

    code, out, err = run(replica, capsys, 7, "--checkout", clone)
    assert code == 0, err
    checkout = json.loads(out)["meta"]["checkout"]
    assert checkout == {
        "path": str(clone.resolve()),
        "base_sha": upstream["base"],
        "head_sha": upstream["head"],
        "merge_base": upstream["merge_base"],
    }
    assert git(clone, "status", "--porcelain") == status_before
    assert git(clone, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert git(clone, "rev-parse", "refs/vllm-rocm-review/pr-7/head") == upstream["head"]
    assert git(clone, "rev-parse", "refs/vllm-rocm-review/pr-7/base") == upstream["base"]
    assert not (clone / ".git" / "FETCH_HEAD").exists()


def test_checkout_creates_a_repository_at_a_new_path(upstream, replica, capsys, env):
    target = env / "fresh" / "vllm"
    serve_pull(replica, FakePull(number=7, head_sha=upstream["head"], base_sha=upstream["base"]))
    code, out, err = run(replica, capsys, 7, "--checkout", target)
    assert code == 0, err
    assert json.loads(out)["meta"]["checkout"]["merge_base"] == upstream["merge_base"]
    assert git(target, "rev-parse", "refs/vllm-rocm-review/pr-7/head") == upstream["head"]


def test_checkout_failure_is_a_warning_and_the_json_is_still_written(upstream, replica, capsys, env, monkeypatch):
    monkeypatch.setenv(code_context.GIT_URL_ENV, f"file://{env / 'nowhere'}")
    serve_pull(replica, FakePull(number=7, head_sha=upstream["head"], base_sha=upstream["base"]))
    output = env / "pr.json"
    code, out, err = run(replica, capsys, 7, "--checkout", env / "c2", "--output", output)
    assert code == 0
    doc = json.loads(output.read_text())
    assert "checkout" not in doc["meta"]
    assert doc["meta"]["warnings"][0].startswith("--checkout skipped: git fetch failed")
    assert "\nwarning: --checkout skipped: git fetch failed" in err


def test_failed_checkout_removes_what_it_created(upstream, env):
    nowhere = f"file://{env / 'nowhere'}"
    new_path = env / "new" / "deeper" / "vllm"
    with pytest.raises(code_context.CheckoutError, match="git fetch failed"):
        code_context.fetch_checkout(new_path, "vllm-project/vllm", 7, upstream["base"], nowhere)
    assert not (env / "new").exists()
    empty = env / "empty"
    empty.mkdir()
    with pytest.raises(code_context.CheckoutError, match="git fetch failed"):
        code_context.fetch_checkout(empty, "vllm-project/vllm", 7, upstream["base"], nowhere)
    assert empty.is_dir() and list(empty.iterdir()) == []


def test_failed_fetch_leaves_an_existing_clone_in_place(upstream, env):
    clone = env / "clone"
    git(env, "clone", "--quiet", str(upstream["bare"]), str(clone))
    with pytest.raises(code_context.CheckoutError):
        code_context.fetch_checkout(clone, "vllm-project/vllm", 7, upstream["base"], f"file://{env / 'nowhere'}")
    assert git(clone, "rev-parse", "HEAD") == upstream["base"]


def test_checkout_refuses_a_directory_that_is_not_a_clone(upstream, env):
    plain = env / "plain"
    plain.mkdir()
    (plain / "file.txt").write_text("x")
    with pytest.raises(code_context.CheckoutError, match="neither a git clone nor empty"):
        code_context.fetch_checkout(plain, "vllm-project/vllm", 7, upstream["base"], f"file://{env / 'git'}")


def test_checkout_rejects_a_base_sha_that_is_not_a_commit_id(env):
    with pytest.raises(code_context.CheckoutError, match="not a commit id"):
        code_context.fetch_checkout(env / "c4", "vllm-project/vllm", 7, "--upload-pack=touch x", "file:///nowhere")
    assert not (env / "c4").exists()


def test_checkout_reports_a_moved_head(upstream, replica, capsys, env):
    serve_pull(replica, FakePull(number=7, head_sha="f" * 40, base_sha=upstream["base"]))
    code, out, err = run(replica, capsys, 7, "--checkout", env / "c3")
    assert code == 0
    assert "head moved" in err


def test_git_base_url_follows_the_api_url(monkeypatch):
    monkeypatch.delenv(code_context.GIT_URL_ENV, raising=False)
    assert code_context.git_base_url("https://api.github.com") == "https://github.com"
    assert code_context.git_base_url("https://ghe.example.com/api/v3") == "https://ghe.example.com"
    monkeypatch.setenv(code_context.GIT_URL_ENV, "file:///srv/git/")
    assert code_context.git_base_url("https://api.github.com") == "file:///srv/git"


# --- --sources ---------------------------------------------------------------------------------


SOURCE_FILES = [
    {"filename": "docs/usage.md", "status": "modified", "additions": 1, "deletions": 0, "patch": "@@ -1 +1,2 @@\n a\n+b"},
    {"filename": "vllm/utils/helpers.py", "status": "modified", "additions": 1, "deletions": 0, "patch": "@@ -1 +1,2 @@\n a\n+b"},
    {"filename": "vllm/platforms/rocm.py", "status": "modified", "additions": 1, "deletions": 0, "patch": "@@ -1 +1,2 @@\n a\n+b"},
    {"filename": "vllm/old.py", "status": "removed", "additions": 0, "deletions": 1, "patch": "@@ -1 +0,0 @@\n-a"},
    {"filename": "csrc/rocm/attention.cu", "status": "modified", "additions": 1, "deletions": 0, "patch": "@@ -1 +1,2 @@\n a\n+b"},
]


def serve_contents(replica, head_sha):
    def contents(request, match):
        if request.args.get("ref") != head_sha or "vnd.github.raw" not in request.headers.get("Accept", ""):
            return Reply({"message": "Not Found"}, status=404)
        return Reply(f"head version of {match.group(1)}\n".encode(), content_type="application/vnd.github.raw")

    replica.route("GET", r"/repos/vllm-project/vllm/contents/(.+)", contents)


def test_sources_puts_rocm_and_backbone_files_first_and_respects_the_limit(replica, tmp_path):
    serve_contents(replica, "a" * 40)
    client = GitHubClient(replica.api_url, cache_dir=tmp_path / "cache")
    surface = {
        "markers": {"path": [{"id": "rocm-path", "pattern": r"(^|/)rocm"}], "guards": []},
        "backbone_tiers": [{"tier": 2, "path": "vllm/utils/*.py"}],
    }
    sources, warnings = code_context.download_sources(
        client, "vllm-project/vllm", "a" * 40, SOURCE_FILES, tmp_path / "src", limit=3, surface=surface
    )
    assert sources["fetched"] == ["vllm/utils/helpers.py", "vllm/platforms/rocm.py", "csrc/rocm/attention.cu"]
    assert sources["skipped"] == ["vllm/old.py", "docs/usage.md"]
    assert (tmp_path / "src" / "csrc" / "rocm" / "attention.cu").read_text() == "head version of csrc/rocm/attention.cu\n"
    assert warnings == []
    assert client.requests_made == 3


def test_sources_cli_goes_through_the_conditional_cache(replica, capsys, env):
    pull = FakePull(number=8, files=SOURCE_FILES)
    serve_pull(replica, pull)
    serve_contents(replica, pull.head_sha)
    code, out, err = run(replica, capsys, 8, "--sources", env / "src", "--sources-limit", "2")
    assert code == 0, err
    sources = json.loads(out)["meta"]["sources"]
    assert len(sources["fetched"]) == 2 and len(sources["skipped"]) == 3
    assert sources["dir"] == str((env / "src").resolve())
    contents_seen = replica.seen(r"/repos/vllm-project/vllm/contents/.+")
    code, out, err = run(replica, capsys, 8, "--sources", env / "src", "--sources-limit", "2")
    again = replica.seen(r"/repos/vllm-project/vllm/contents/.+")[len(contents_seen):]
    assert [entry.status for entry in again] == [304, 304]
    assert json.loads(out)["meta"]["requests"] == 8  # 6 PR requests + 2 sources, all 304


def test_sources_skip_unsafe_paths_and_missing_files(replica, tmp_path):
    serve_contents(replica, "a" * 40)
    files = [
        {"filename": "../escape.py", "status": "added", "additions": 1, "deletions": 0},
        {"filename": "vllm/ok.py", "status": "added", "additions": 1, "deletions": 0},
    ]
    client = GitHubClient(replica.api_url, use_cache=False)
    sources, warnings = code_context.download_sources(client, "vllm-project/vllm", "b" * 40, files, tmp_path / "s", surface={})
    assert sources["fetched"] == [] and sources["skipped"] == ["../escape.py", "vllm/ok.py"]
    assert "not found (404)" in warnings[0]
    assert not (tmp_path / "escape.py").exists()


def test_sources_that_cannot_be_saved_become_a_warning(replica, tmp_path):
    serve_contents(replica, "a" * 40)
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "vllm").write_text("a file where a directory is needed")
    files = [{"filename": "vllm/ok.py", "status": "added", "additions": 1, "deletions": 0},
             {"filename": "docs/x.md", "status": "added", "additions": 1, "deletions": 0}]
    client = GitHubClient(replica.api_url, use_cache=False)
    sources, warnings = code_context.download_sources(client, "vllm-project/vllm", "a" * 40, files, tmp_path / "s", surface={})
    assert sources["fetched"] == [] and sources["skipped"] == ["vllm/ok.py", "docs/x.md"]
    assert warnings == [f"source vllm/ok.py not saved: {tmp_path / 's' / 'vllm'}: is a file, not a directory; "
                        f"check --sources {tmp_path / 's'}"]


def test_priority_comes_from_the_surface_file():
    surface = code_context.load_priority_surface()
    if not surface or not (surface["markers"].get("path") or surface["backbone_tiers"]):
        pytest.skip("references/rocm-surface.yaml has no markers.path or backbone_tiers yet")
    ordered = code_context.prioritize_paths(["docs/usage.md", "vllm/platforms/rocm.py"], surface)
    assert ordered == ["vllm/platforms/rocm.py", "docs/usage.md"]


def test_no_surface_keeps_the_pr_order():
    assert code_context.prioritize_paths(["b", "a"], None) == ["b", "a"]
