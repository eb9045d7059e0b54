"""Citations of AITER code checked against the tree the context pack cached, never against copies."""

import check_report
import pytest
from github_env import isolate_github_env
from github_replica import GitHubReplica
from replica_git_contents import RefRepos
from test_check_report_precision import PR
from test_check_report_precision import TREE
from test_check_report_precision import with_problem

from vllm_rocm_review.github.client import GitHubClient
from vllm_rocm_review.report.report_check import check_report as run_checks
from vllm_rocm_review.upstream.pinned_fetch import CitationTrees
from vllm_rocm_review.upstream.pinned_fetch import PinnedFetcher

GEMM = "aiter/ops/triton/gemm/basic/gemm_a8w8.py"
GEMM_TEXT = "".join(f"# line {number}\n" for number in range(1, 41))


@pytest.fixture
def cached(httpserver, monkeypatch, tmp_path):
    """A replica of ROCm/aiter, and the cache a context pack left after reading one file's tree."""
    isolate_github_env(monkeypatch, tmp_path)
    replica = GitHubReplica(httpserver)
    RefRepos(replica).put("ROCm/aiter", "v0.1.19", {"aiter/ops/quant.py": "def q():\n    pass\n", GEMM: GEMM_TEXT})
    cache = tmp_path / "upstream-cache"
    PinnedFetcher(GitHubClient(api_url=replica.api_url, cache_dir=tmp_path / "http"), cache).tree("ROCm/aiter", "v0.1.19")
    replica.log.clear()
    return replica, cache


def run(tmp_path, capsys, replica, cache, sentence, *options):
    report = tmp_path / "pr-41234-review.md"
    report.write_text(with_problem(sentence), encoding="utf-8")
    code = check_report.main([str(report), "--upstream-cache", str(cache), "--api-url", replica.api_url, *options])
    out = capsys.readouterr().out.splitlines()
    return code, [line.split(": ", 2)[1] for line in out]


def test_a_file_at_the_ref_that_was_not_saved_passes_without_warning(cached, tmp_path, capsys):
    replica, cache = cached
    code, found = run(tmp_path, capsys, replica, cache, f"`ROCm/aiter@v0.1.19:{GEMM}:30` 中 splitK 的下限与 vLLM 不同")
    assert (code, found) == (0, [])
    assert len(replica.seen(rf"/repos/ROCm/aiter/contents/{GEMM}")) == 1  # the line needed the file, once
    assert not replica.seen(r"/repos/ROCm/aiter/git/trees/.*")  # the tree came from the cache
    assert not (tmp_path / "pr-41234-upstream").exists()  # nothing copied


def test_a_path_that_is_not_at_the_ref_warns_with_the_nearest_real_path(cached, tmp_path, capsys):
    replica, cache = cached
    report = tmp_path / "pr-41234-review.md"
    code, found = run(tmp_path, capsys, replica, cache, "`ROCm/aiter@v0.1.19:aiter/ops/triton/gemm_a8w8.py` 中的默认值不同")
    assert (code, found) == (0, ["warning UNKNOWN-UPSTREAM-PATH"])
    out = check_report.main([str(report), "--upstream-cache", str(cache), "--offline", "--json"])
    assert out == 0
    assert f"the nearest is ROCm/aiter@v0.1.19:{GEMM}" in capsys.readouterr().out


def test_a_line_past_the_end_of_the_file_warns(cached, tmp_path, capsys):
    replica, cache = cached
    code, found = run(tmp_path, capsys, replica, cache, f"https://github.com/ROCm/aiter/blob/v0.1.19/{GEMM}#L90 中的默认值不同")
    assert found == ["warning UPSTREAM-LINE"]


def test_offline_leaves_an_uncached_line_unchecked_with_a_note(cached, tmp_path, capsys):
    replica, cache = cached
    code, found = run(tmp_path, capsys, replica, cache, f"`ROCm/aiter@v0.1.19:{GEMM}:90` 中的默认值不同", "--offline")
    assert (code, found) == (0, ["note UPSTREAM-UNCHECKED"])
    assert replica.log == []


def test_a_ref_without_a_cached_tree_is_a_note(cached, tmp_path, capsys):
    replica, cache = cached
    code, found = run(tmp_path, capsys, replica, cache, f"`ROCm/aiter@v0.1.20:{GEMM}:30` 中的默认值不同")
    assert (code, found) == (0, ["note UPSTREAM-UNCHECKED"])
    assert replica.log == []


def test_a_markdown_link_to_the_explicit_form_is_no_bare_path(cached):
    _, cache = cached
    link = (f"[aiter/ops/quant.py](https://github.com/ROCm/aiter/blob/v0.1.19/aiter/ops/quant.py) 与 "
            f"[{GEMM}](ROCm/aiter@v0.1.19:{GEMM}) 中的默认值不同")
    assert run_checks(with_problem(link), pr_document=PR, vllm_tree=TREE, upstream_trees=CitationTrees(cache)) == []
    bare = run_checks(with_problem("`aiter/ops/quant.py` 中的默认值不同"), pr_document=PR, vllm_tree=TREE)
    assert [item.code for item in bare] == ["BARE-UPSTREAM-PATH"]
