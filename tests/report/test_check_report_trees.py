"""check_report.py checks cited vLLM paths against the PR's own trees, and says which tree it used.

The false alarm these tests pin down: a report on an older PR cites a file that exists at the
PR's head and base commits but that vLLM main later moved, so the saved main tree does not have
it. The clone is a small git repository each test builds; the trees API is the GitHub replica.
"""

import json
import os
import subprocess

import check_report
import pytest
from conftest import ROOT
from github_env import isolate_github_env
from github_replica import GitHubReplica
from replica_contents import ServedRepos

REPORTS = ROOT / "tests" / "reports"
GOOD = (REPORTS / "good-report.md").read_text(encoding="utf-8")
PR = json.loads((REPORTS / "pr-41234.json").read_text(encoding="utf-8"))
# Exists at the PR's commits; vLLM main moved it later, so the saved main tree lacks it.
MOVED_LATER = "vllm/attention/ops/legacy_paged_attn.py"
CITES_MOVED = GOOD.replace("`vllm/envs.py` 只在类型声明块", f"`{MOVED_LATER}:88` 只在类型声明块", 1)
CITES_MADE_UP = GOOD.replace("`vllm/envs.py` 只在类型声明块", "`vllm/attention/ops/paged_attn_v9.py` 只在类型声明块", 1)
CITED_LINE = next(n for n, line in enumerate(GOOD.splitlines(), 1) if "只在类型声明块" in line)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd, *args):
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, **GIT_ENV})
    return done.stdout.strip()


def commit_files(work, files, message):
    for path, text in files.items():
        target = work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", message)
    return git(work, "rev-parse", "HEAD")


@pytest.fixture
def clone(tmp_path):
    """A clone whose base commit has the files the good report cites plus MOVED_LATER; head adds the PR's files."""
    work = tmp_path / "vllm"
    work.mkdir()
    git(work, "init", "--quiet", "-b", "main")
    base = commit_files(work, {"vllm/v1/attention/backends/rocm_attn.py": "# backend\n",
                               "vllm/platforms/rocm.py": "# platform\n", MOVED_LATER: "# legacy\n" * 100,
                               "vllm/envs.py": "# envs\n", "vllm/_aiter_ops.py": "# ops\n"}, "base")
    head = commit_files(work, {item["filename"]: "# pr\n" for item in PR["files"]}, "pr head")
    return {"path": work, "base": base, "head": head}


def pr_document(tmp_path, clone, checkout_path=None, record=True):
    document = json.loads(json.dumps(PR))
    document["pr"]["head"]["sha"], document["pr"]["base"]["sha"] = clone["head"], clone["base"]
    if record:
        document["meta"]["checkout"] = {"path": str(checkout_path or clone["path"]), "base_sha": clone["base"],
                                        "head_sha": clone["head"], "merge_base": clone["base"]}
    path = tmp_path / "pr.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def main_tree_file(tmp_path):
    """vLLM main's saved tree: the good report's paths, without MOVED_LATER."""
    paths = ["vllm/v1/attention/backends/rocm_attn.py", "vllm/platforms/rocm.py", "vllm/envs.py",
             "vllm/_aiter_ops.py", *[item["filename"] for item in PR["files"]]]
    path = tmp_path / "vllm-tree.json"
    path.write_text(json.dumps({"commit_sha": "6adad087" + "0" * 32, "paths": paths}), encoding="utf-8")
    return path


def report_file(tmp_path, text):
    path = tmp_path / "pr-41234-review.md"
    path.write_text(text, encoding="utf-8")
    return path


def run(capsys, *args):
    code = check_report.main([str(arg) for arg in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_path_main_moved_passes_against_the_recorded_checkout(tmp_path, clone, capsys):
    report = report_file(tmp_path, CITES_MOVED)
    code, out, err = run(capsys, report, "--pr-json", pr_document(tmp_path, clone), "--vllm-tree", main_tree_file(tmp_path))
    assert (code, out) == (0, "")
    assert err.splitlines() == [
        f"paths checked against the PR's trees (head {clone['head'][:8]}, base {clone['base'][:8]}) in the clone "
        f"{clone['path']}",
        f"{report} passes: 0 error(s), 0 warning(s)"]


def test_same_path_against_main_alone_is_the_former_false_alarm_and_names_the_remedy(tmp_path, clone, capsys):
    report = report_file(tmp_path, CITES_MOVED)
    document = pr_document(tmp_path, clone, record=False)
    code, out, err = run(capsys, report, "--pr-json", document, "--vllm-tree", main_tree_file(tmp_path))
    assert code == 0
    assert out.splitlines() == [
        f"{report}:{CITED_LINE}: warning UNKNOWN-PATH: {MOVED_LATER} is neither in the PR's files nor in vLLM main's "
        f"saved tree @6adad087 ({tmp_path / 'vllm-tree.json'}) — fix: cite the real path (check the diff or the PR's head "
        "commit); if the file exists at the PR's head, pass --repo CLONE or --fetch-tree to check the PR's own tree"]
    assert err.splitlines()[0] == f"paths checked against vLLM main's saved tree @6adad087 ({tmp_path / 'vllm-tree.json'})"


def test_repo_option_reads_the_trees_at_the_prs_commits(tmp_path, clone, capsys):
    report = report_file(tmp_path, CITES_MOVED)
    document = pr_document(tmp_path, clone, record=False)
    code, out, err = run(capsys, report, "--pr-json", document, "--repo", clone["path"], "--vllm-tree", main_tree_file(tmp_path))
    assert (code, out) == (0, "")
    assert err.startswith(f"paths checked against the PR's trees (head {clone['head'][:8]}, base {clone['base'][:8]})")


def test_made_up_path_still_warns_against_the_clone(tmp_path, clone, capsys):
    report = report_file(tmp_path, CITES_MADE_UP)
    code, out, _ = run(capsys, report, "--pr-json", pr_document(tmp_path, clone))
    assert code == 0
    assert out.startswith(f"{report}:{CITED_LINE}: warning UNKNOWN-PATH: vllm/attention/ops/paged_attn_v9.py is neither "
                          f"in the PR's files nor in the PR's trees (head {clone['head'][:8]}")


def test_a_recorded_clone_that_is_gone_falls_back_to_main_with_a_note(tmp_path, clone, capsys):
    report = report_file(tmp_path, CITES_MOVED)
    document = pr_document(tmp_path, clone, checkout_path=tmp_path / "elsewhere")
    code, out, err = run(capsys, report, "--pr-json", document, "--vllm-tree", main_tree_file(tmp_path))
    assert code == 0 and " warning UNKNOWN-PATH: " in out
    lines = err.splitlines()
    assert lines[0].startswith(f"note: the PR's head commit {clone['head'][:12]} cannot be listed in {tmp_path / 'elsewhere'}")
    assert lines[0].endswith("; pass --repo CLONE to use another clone")
    assert lines[1].startswith("paths checked against vLLM main's saved tree")


def test_repo_without_the_prs_commits_is_one_line_exit_1(tmp_path, clone, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "--quiet")
    code, out, err = run(capsys, report_file(tmp_path, CITES_MOVED), "--pr-json", pr_document(tmp_path, clone, record=False),
                         "--repo", empty)
    assert (code, out) == (1, "")
    assert len(err.splitlines()) == 1
    assert err.startswith(f"error: the PR's head commit {clone['head'][:12]} cannot be listed in {empty}")
    assert err.rstrip().endswith("; run fetch_pr_data.py --checkout CLONE first, or drop --repo")


@pytest.mark.parametrize("option", [["--repo", "somewhere"], ["--fetch-tree"]])
def test_pr_tree_options_need_the_pr_document(tmp_path, capsys, option):
    with pytest.raises(SystemExit) as exit_info:
        check_report.main([str(report_file(tmp_path, GOOD)), *option])
    assert exit_info.value.code == 2
    assert f"{option[0]} needs --pr-json: the PR's commits come from it" in capsys.readouterr().err


@pytest.fixture
def served(httpserver, monkeypatch, tmp_path):
    isolate_github_env(monkeypatch, tmp_path)
    replica = GitHubReplica(httpserver)
    return replica, ServedRepos(replica)


def test_fetch_tree_asks_the_trees_api_once_at_the_head_commit(tmp_path, clone, served, capsys):
    replica, repos = served
    vllm = repos.add("vllm-project/vllm")
    for path in ("vllm/v1/attention/backends/rocm_attn.py", "vllm/platforms/rocm.py", MOVED_LATER):
        vllm.put_file(path, b"# file\n")
    vllm.commit_sha = clone["head"]  # each put_file is a push; the PR's head is the last one
    document = pr_document(tmp_path, clone, record=False)
    report = report_file(tmp_path, CITES_MOVED)
    code, out, err = run(capsys, report, "--pr-json", document, "--fetch-tree", "--api-url", replica.api_url,
                         "--vllm-tree", main_tree_file(tmp_path))
    assert (code, out) == (0, "")
    assert f"paths checked against the PR's head tree {clone['head'][:8]} (git trees API)" in err.splitlines()
    assert [entry.path for entry in replica.seen(r".*/git/trees/.*")] == [f"/repos/vllm-project/vllm/git/trees/{clone['head']}"]
    code, out, _ = run(capsys, report_file(tmp_path, CITES_MADE_UP), "--pr-json", document, "--fetch-tree",
                       "--api-url", replica.api_url)
    assert code == 0 and " warning UNKNOWN-PATH: vllm/attention/ops/paged_attn_v9.py " in out


def test_fetch_tree_failure_is_one_line_exit_1(tmp_path, clone, served, capsys):
    replica, repos = served
    repos.add("vllm-project/vllm", commit_sha="f" * 40)  # the head commit is unknown there: 404
    code, out, err = run(capsys, report_file(tmp_path, CITES_MOVED), "--pr-json", pr_document(tmp_path, clone, record=False),
                         "--fetch-tree", "--api-url", replica.api_url)
    assert (code, out) == (1, "")
    error_lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1 and error_lines[0].startswith("error: --fetch-tree: ")
    assert error_lines[0].endswith("; retry, or drop --fetch-tree to use the saved main tree")
