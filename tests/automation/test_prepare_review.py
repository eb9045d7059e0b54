"""prepare_review.py: fetch, pack, triage and brief in one call, against the replica and a small git repository.

The repository is context_repo's vLLM-shaped tree: a base commit on main, the PR's first head and a
second push, served as refs/pull/7/head of a bare ``vllm-project/vllm.git`` that --repo fetches
from; the replica serves the PR's REST answers (and, for --sources, the head files).
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

import context_pack
import prepare_review
import triage_pr
from context_repo import BASE_FILES
from context_repo import HEAD_CHANGES
from context_repo import write_files
from git_pr import pr_document
from github_env import isolate_github_env
from github_replica import GitHubReplica
from replica_git_contents import RefRepos
from replica_pull_request import FakePull
from replica_pull_request import serve_pull

from vllm_rocm_review.automation.brief import MAX_LINES
from vllm_rocm_review.core.catalog import load_catalog
from vllm_rocm_review.github import code_context

NUMBER = 7
TITLE = "[ROCm] Switch the attention KV layout and register the new op"
GIT_ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com", "GIT_COMMITTER_NAME": "Test",
           "GIT_COMMITTER_EMAIL": "test@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
CATALOG = load_catalog()


def git(cwd, *args, date=None):
    extra = {"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date} if date else {}
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, **GIT_ENV, **extra})
    return done.stdout.strip()


def commit(work, message, date=None):
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", message, date=date)
    return git(work, "rev-parse", "HEAD")


def build_upstream(root, base_date):
    """A bare vllm-project/vllm.git under ``root`` with main (the base) and refs/pull/7/head (two pushes)."""
    bare = root / "git" / "vllm-project" / "vllm.git"
    bare.mkdir(parents=True)
    git(bare, "init", "--quiet", "--bare", "--initial-branch=main")
    work = root / "author"
    work.mkdir()
    git(work, "init", "--quiet", "-b", "main")
    write_files(work, BASE_FILES)
    base = commit(work, "base", date=base_date)
    git(work, "checkout", "--quiet", "-b", "pr")
    git(work, "mv", "vllm/layers/old_name.py", "vllm/layers/new_name.py")
    write_files(work, HEAD_CHANGES)
    first = commit(work, "the PR")
    write_files(work, {"vllm/nested.py": "class Outer:\n    class Inner:\n        def method(self, a, b=1):\n"
                                         "            return a - b\n"})
    head = commit(work, "second push")
    git(work, "push", "--quiet", str(bare), "main:refs/heads/main", f"pr:refs/pull/{NUMBER}/head")
    return {"work": work, "git_root": root / "git", "base": base, "first": first, "head": head}


@pytest.fixture
def env(monkeypatch, tmp_path):
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    return isolate_github_env(monkeypatch, tmp_path)


def served(env, monkeypatch, replica, base_date="2026-08-20T10:00:00+00:00"):
    """Build the upstream repository, point --repo's fetches at it, and serve the PR on the replica."""
    upstream = build_upstream(env, base_date)
    monkeypatch.setenv(code_context.GIT_URL_ENV, f"file://{upstream['git_root']}")
    document = pr_document(upstream["work"], upstream["base"], upstream["head"], NUMBER)
    pull = FakePull(number=NUMBER, title=TITLE, body="Fixes the layout on MI300.", head_sha=upstream["head"],
                    base_sha=upstream["base"], files=document["files"], diff=document["diff"],
                    check_runs=[("amd-ci / Kernels Alpha (mi325_1)", "completed", "failure", "buildkite")])
    serve_pull(replica, pull)
    return upstream


@pytest.fixture
def replica(httpserver):
    return GitHubReplica(httpserver)


@pytest.fixture
def outputs(env):
    path = env / "outputs"
    path.mkdir()
    return path


def run(replica, capsys, outputs, *args):
    code = prepare_review.main([str(NUMBER), *map(str, args), "--api-url", replica.api_url,
                                "--output-dir", str(outputs)])
    out, err = capsys.readouterr()
    return code, out, err


def files_in(directory):
    return sorted(path.relative_to(directory).as_posix() for path in directory.rglob("*") if path.is_file())


def test_one_call_writes_every_file_and_a_brief_within_the_cap(env, monkeypatch, replica, capsys, outputs):
    upstream = served(env, monkeypatch, replica)
    clone = env / "clone"
    code, out, err = run(replica, capsys, outputs, "--repo", clone)
    assert code == 0, err
    assert files_in(outputs) == ["pr-7-brief.md", "pr-7-code.md", "pr-7-context.json", "pr-7-context.md",
                                 "pr-7-triage.txt", "pr-7.json"]
    brief = (outputs / "pr-7-brief.md").read_text(encoding="utf-8")
    assert out == brief and len(brief.splitlines()) <= MAX_LINES
    assert "pr-7-code.md: " in brief
    assert "prepare: building the context pack" in err and "prepare: triage" in err

    document = json.loads((outputs / "pr-7.json").read_text())
    assert document["meta"]["checkout"]["head_sha"] == upstream["head"]
    assert "checks" in document
    # The pack is what context_pack.py writes, and the triage file what triage_pr.py --context prints.
    again = env / "again"
    again.mkdir()
    assert context_pack.main([str(outputs / "pr-7.json"), "--output", str(again / "pr-7-context.md"),
                              "--api-url", replica.api_url]) == 0
    for name in ("pr-7-context.md", "pr-7-context.json", "pr-7-code.md"):
        written_again = (again / name).read_text(encoding="utf-8").replace(str(again), str(outputs))
        assert written_again == (outputs / name).read_text(encoding="utf-8")
    capsys.readouterr()
    assert triage_pr.main([str(outputs / "pr-7.json"), "--context", str(outputs / "pr-7-context.json")]) == 0
    assert capsys.readouterr().out == (outputs / "pr-7-triage.txt").read_text(encoding="utf-8")


def test_the_brief_holds_the_gate_the_answers_the_plan_and_the_commands(env, monkeypatch, replica, capsys, outputs):
    served(env, monkeypatch, replica)
    code, brief, err = run(replica, capsys, outputs, "--repo", env / "clone")
    assert code == 0, err
    assert brief.startswith(f"# Review brief for PR #{NUMBER}: {TITLE}\n")
    assert "\n## Relevance: full\n" in brief
    assert "完整评审：第 3–8 步。" in brief  # zh instructions by default

    pack = json.loads((outputs / "pr-7-context.json").read_text())
    for flag in pack["flags"][:3]:
        assert f"{flag['code']} {flag['path']}" in brief
    assert "ci attention" in brief and "amd-ci / Kernels Alpha (mi325_1): failure" in brief

    assert triage_pr.main([str(outputs / "pr-7.json"), "--context", str(outputs / "pr-7-context.json"), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["reading_plan"]
    for item in plan["sections"]:
        assert f"◆ {item['title']} (lines {item['start_line']}-{item['end_line']})" in brief
    for item in plan["checklist"]:
        assert f"- [ ] {item['title']} (lines {item['start_line']}-{item['end_line']})" in brief
    assert "mori appendix" not in brief  # no mori code touched

    pr_json, pack_json = outputs / "pr-7.json", outputs / "pr-7-context.json"
    assert (f"python3 scripts/triage_pr.py {pr_json.as_posix()} --context {pack_json.as_posix()} "
            f"--scaffold {(outputs / 'pr-7-review.md').as_posix()}") in brief
    assert f"python3 scripts/check_report.py {(outputs / 'pr-7-review.md').as_posix()} --pr-json {pr_json.as_posix()}\n" in brief
    assert f"clone {(env / 'clone').resolve()}" in brief


def test_english_brief_and_check_command(env, monkeypatch, replica, capsys, outputs):
    served(env, monkeypatch, replica)
    code, brief, err = run(replica, capsys, outputs, "--repo", env / "clone", "--lang", "en")
    assert code == 0, err
    assert "Full review: steps 3-8." in brief and "完整评审" not in brief
    assert "--lang en" in brief.split("## Commands")[1]


def test_version_skew_names_the_catalog_facts_to_recheck(env, monkeypatch, replica, capsys, outputs):
    served(env, monkeypatch, replica, base_date="2026-03-01T10:00:00+00:00")
    code, brief, err = run(replica, capsys, outputs, "--repo", env / "clone")
    assert code == 0, err
    commit, recorded = CATALOG.verified_at()
    skew = brief.split("## Version skew\n")[1].split("\n## ")[0]
    assert f"catalog facts checked at vLLM {commit} ({recorded}); limit 30 days" in skew
    assert "committed 2026-03-01: 166 days older" in skew
    facts = CATALOG.lines_naming(commit, ["core-discipline"])
    assert facts and f"- [ ] core-discipline lines {facts[0][1]}-" in skew  # the verified platform facts
    assert "references/rocm-surface.yaml" in skew


def test_a_base_within_the_limit_keeps_the_facts(env, monkeypatch, replica, capsys, outputs):
    served(env, monkeypatch, replica)
    code, brief, err = run(replica, capsys, outputs, "--repo", env / "clone")
    assert code == 0, err
    skew = brief.split("## Version skew\n")[1].split("\n## ")[0]
    assert "committed 2026-08-20: 6 days newer" in skew and "在 30 天以内" in skew and "- [ ]" not in skew


def test_sources_mode_downloads_the_head_files(env, monkeypatch, replica, capsys, outputs):
    upstream = served(env, monkeypatch, replica)
    document = pr_document(upstream["work"], upstream["base"], upstream["head"], NUMBER)
    head_files = {entry["filename"]: git(upstream["work"], "show", f"{upstream['head']}:{entry['filename']}") + "\n"
                  for entry in document["files"] if entry["status"] != "removed"}
    RefRepos(replica).put("vllm-project/vllm", upstream["head"], head_files)
    code, brief, err = run(replica, capsys, outputs, "--sources")
    assert code == 0, err
    assert sorted(f for f in files_in(outputs) if not f.startswith("pr-7-src/")) == [
        "pr-7-brief.md", "pr-7-code.md", "pr-7-context.json", "pr-7-context.md", "pr-7-triage.txt", "pr-7.json"]
    assert (outputs / "pr-7-src" / "vllm" / "nested.py").read_text() == head_files["vllm/nested.py"]
    assert json.loads((outputs / "pr-7-context.json").read_text())["meta"]["mode"] == "sources"
    assert f"head 版本在 {(outputs / 'pr-7-src').as_posix()}/<path>" in brief
    assert "上下文包未能收集" in brief  # callers, twins and CI coverage need a clone
    skew = brief.split("## Version skew\n")[1].split("\n## ")[0]
    assert "PR base 的提交日期（没有 clone）" in skew and "- [ ] core-discipline lines " in skew


def test_since_lists_the_changes_after_the_reviewed_head(env, monkeypatch, replica, capsys, outputs):
    upstream = served(env, monkeypatch, replica)
    code, brief, err = run(replica, capsys, outputs, "--repo", env / "clone", "--since", upstream["first"][:10])
    assert code == 0, err
    since = brief.split(f"## Since {upstream['first'][:7]}\n")[1].split("\n## ")[0]
    assert "- vllm/nested.py [modified]: " in since and "vllm/ops.py" not in since
    assert f"--since {upstream['first'][:12]} --scaffold" in brief
    assert f"## Since {upstream['first'][:7]}" in (outputs / "pr-7-triage.txt").read_text()


def test_a_failed_fetch_is_one_line_and_writes_nothing(env, replica, capsys, outputs):
    (outputs / "pr-7-brief.md").write_text("an earlier brief\n")
    code, out, err = run(replica, capsys, outputs, "--repo", env / "clone")
    assert code == 1 and out == ""
    talk = [line for line in err.splitlines() if not line.startswith("prepare: ")]
    assert talk == ["error: PR 7 not found in vllm-project/vllm (a private repository needs a token); nothing written"]
    assert files_in(outputs) == ["pr-7-brief.md"]
    assert (outputs / "pr-7-brief.md").read_text() == "an earlier brief\n"
    assert not (env / "clone").exists()


def test_a_failed_checkout_writes_nothing(env, monkeypatch, replica, capsys, outputs):
    served(env, monkeypatch, replica)
    monkeypatch.setenv(code_context.GIT_URL_ENV, f"file://{env / 'nowhere'}")
    code, out, err = run(replica, capsys, outputs, "--repo", env / "clone")
    assert code == 1 and out == ""
    talk = [line for line in err.splitlines() if not line.startswith("prepare: ")]
    assert len(talk) == 1 and talk[0].startswith("error: --checkout skipped: ") and talk[0].endswith("or use --sources")
    assert files_in(outputs) == []


@pytest.mark.parametrize("args, message", [
    (["--repo", ""], "--repo needs a vLLM clone but got an empty value"),
    (["--sources", "--since", "abcdef1"], "--since needs --repo CLONE"),
    (["--repo", "x", "--since", "nothex"], "is not a commit SHA"),
])
def test_usage_errors_exit_2_before_any_request(replica, capsys, env, outputs, args, message):
    code, out, err = run(replica, capsys, outputs, *args)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1
    assert replica.log == []


def test_without_repo_the_sources_are_downloaded(env, monkeypatch, replica, capsys, outputs):
    upstream = served(env, monkeypatch, replica)
    RefRepos(replica).put("vllm-project/vllm", upstream["head"], {"vllm/nested.py": "class Outer:\n    pass\n"})
    code, brief, err = run(replica, capsys, outputs)
    assert code == 0, err
    assert "prepare: no --repo, so the changed files are downloaded (--sources)" in err
    assert (outputs / "pr-7-src" / "vllm" / "nested.py").is_file()


def test_repo_and_sources_exclude_each_other(replica, capsys, env, outputs):
    with pytest.raises(SystemExit) as stop:
        prepare_review.main([str(NUMBER), "--repo", "x", "--sources"])
    assert stop.value.code == 2


def test_a_missing_output_directory_costs_no_request(replica, capsys, env):
    code, out, err = run(replica, capsys, env / "absent", "--sources")
    assert code == 1 and "does not exist" in err and replica.log == []


def test_the_lenses_and_the_writers_name_one_code_map_path(env, monkeypatch, replica, capsys, outputs):
    """triage's lens lines point sub-agents at the file that prepare_review.py and context_pack.py write."""
    from vllm_rocm_review.automation.prepare import output_paths
    from vllm_rocm_review.triage.lenses import code_map_path

    assert output_paths(NUMBER, "outputs")["code_map"] == code_map_path(NUMBER)
    served(env, monkeypatch, replica)
    assert run(replica, capsys, outputs, "--repo", env / "clone")[0] == 0
    again = env / "again"
    again.mkdir()
    assert context_pack.main([str(outputs / "pr-7.json"), "--output", str(again / "pr-7-context.md"), "--offline"]) == 0
    assert (again / Path(code_map_path(NUMBER)).name).is_file()
