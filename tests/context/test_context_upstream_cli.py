"""context_pack.py end to end with section 5: pins from a git repo the test builds, code from the replica."""

import json
import textwrap

import pytest
from git_pr import git
from git_pr import pr_document
from github_env import isolate_github_env
from github_replica import GitHubReplica
from replica_git_contents import RefRepos

import context_pack

DOCKERFILE = "docker/Dockerfile.rocm_base"
QUANT = textwrap.dedent('''\
    FP8_MAX = 240.0


    def per_token_quant(out, x, scale, eps: float = 1e-10):
        assert x.dim() == 2, "2-D input only"
        return out
    ''')


def commit(repo, files, message):
    for path, text in files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture
def pr_path(tmp_path):
    repo = tmp_path / "vllm"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    commit(repo, {DOCKERFILE: 'ARG AITER_BRANCH="v0.1.18"\nARG MORI_BRANCH="v1.1.0"\n',
                  "vllm/layer.py": "def apply(x):\n    return x\n"}, "base")
    commit(repo, {DOCKERFILE: 'ARG AITER_BRANCH="v0.1.19"\nARG MORI_BRANCH="v1.1.0"\n',
                  "vllm/layer.py": """\
                      import aiter


                      def apply(out, x, scale):
                          aiter.per_token_quant(out, x, scale)
                          return aiter.made_up_quant(out)
                      """}, "head")
    path = tmp_path / "pr-7100.json"
    path.write_text(json.dumps(pr_document(repo, "HEAD~1", "HEAD", 7100)), encoding="utf-8")
    return path


@pytest.fixture
def replica(httpserver, monkeypatch, tmp_path):
    isolate_github_env(monkeypatch, tmp_path)
    replica = GitHubReplica(httpserver)
    RefRepos(replica).put("ROCm/aiter", "v0.1.19", {"aiter/__init__.py": "from .ops.quant import *\n",
                                                     "aiter/ops/quant.py": QUANT})
    return replica


def run(replica, pr_path, tmp_path, capsys):
    digest = tmp_path / "out" / "pr-7100-context.md"
    digest.parent.mkdir(exist_ok=True)
    code = context_pack.main([str(pr_path), "--output", str(digest), "--api-url", replica.api_url,
                              "--upstream-cache", str(tmp_path / "upstream-cache")])
    assert code == 0, capsys.readouterr().err
    return code, digest


def test_pins_definitions_and_an_absent_symbol_reach_the_pack(replica, pr_path, tmp_path, capsys):
    code, digest = run(replica, pr_path, tmp_path, capsys)
    assert code == 0
    text = digest.read_text(encoding="utf-8")
    assert "pin aiter: ROCm/aiter@v0.1.18 -> v0.1.19 (bumped by this PR)" in text
    assert ("ROCm/aiter@v0.1.19:aiter/ops/quant.py:4 (re-exported at aiter/__init__.py:1)  "
            "def per_token_quant(out, x, scale, eps: float=1e-10)") in text
    assert "checks: L5 assert x.dim() == 2, '2-D input only'" in text
    saved = tmp_path / "out" / "pr-7100-upstream" / "ROCm" / "aiter@v0.1.19" / "aiter" / "ops" / "quant.py"
    assert saved.read_text(encoding="utf-8") == QUANT
    pack = json.loads(digest.with_suffix(".json").read_text(encoding="utf-8"))
    absent = [flag for flag in pack["flags"] if flag["code"] == "UPSTREAM-SYMBOL-ABSENT"]
    assert [(flag["path"], flag["line"]) for flag in absent] == [("vllm/layer.py", 6)]
    assert pack["meta"]["upstream"].startswith("definitions read at the pinned refs")


def test_a_second_run_costs_no_rate_limit(replica, pr_path, tmp_path, capsys):
    assert run(replica, pr_path, tmp_path, capsys)[0] == 0
    code, digest = run(replica, pr_path, tmp_path, capsys)
    assert code == 0
    assert ", 0 rate-limit units;" in digest.read_text(encoding="utf-8")


def test_offline_reads_the_pins_and_sends_nothing(replica, pr_path, tmp_path, capsys):
    digest = tmp_path / "pr-7100-context.md"
    assert context_pack.main([str(pr_path), "--offline", "--output", str(digest)]) == 0
    text = digest.read_text(encoding="utf-8")
    assert "pin aiter: ROCm/aiter@v0.1.18 -> v0.1.19 (bumped by this PR)" in text
    assert "OFFLINE" in text and not replica.seen(r".*")


def test_offline_with_network_options_is_a_usage_error(pr_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        context_pack.main([str(pr_path), "--offline", "--token", "t"])
    assert exit_info.value.code == 2


def test_the_code_map_shows_the_saved_upstream_definition_inside_its_caller(replica, pr_path, tmp_path, capsys):
    _, digest = run(replica, pr_path, tmp_path, capsys)
    text = (digest.parent / "pr-7100-code.md").read_text(encoding="utf-8")
    caller = text[text.index("### apply [function, modified]"):]
    assert "upstream aiter.per_token_quant ← vllm/layer.py:5: ROCm/aiter@v0.1.19:aiter/ops/quant.py:4" in caller
    assert '    5      assert x.dim() == 2, "2-D input only"' in caller
    assert "upstream aiter.made_up_quant ← vllm/layer.py:6: absent-at-pin" in caller

