"""triage_pr.py --context: the pack's flags as the mechanical check ``context``, and bad pack files."""

import json

import pytest

import context_pack
import triage_pr
from vllm_rocm_review.triage.digest import FLAGGED_SHOWN
from context_repo import small_pr_path  # noqa: F401  (fixtures)
from context_repo import small_repo  # noqa: F401


@pytest.fixture(scope="module")
def pack_path(small_pr_path, tmp_path_factory):
    digest = tmp_path_factory.mktemp("pack") / "pr-7001-context.md"
    assert context_pack.main([str(small_pr_path), "--offline", "--output", str(digest)]) == 0
    return digest.with_suffix(".json")


def test_flags_become_the_context_check(small_pr_path, pack_path, capsys):
    capsys.readouterr()
    assert triage_pr.main([str(small_pr_path), "--context", str(pack_path), "--json"]) == 0
    check = json.loads(capsys.readouterr().out)["checks"]["context"]
    pack = json.loads(pack_path.read_text())
    assert check["status"] == "attention"
    assert [item["code"] for item in check["items"]] == [f["code"] for f in pack["flags"]]
    assert "OP-ALIASING 2" in check["summary"]


def test_digest_lists_the_context_flags(small_pr_path, pack_path, capsys):
    capsys.readouterr()
    assert triage_pr.main([str(small_pr_path), "--context", str(pack_path)]) == 0
    digest = capsys.readouterr().out
    flags = json.loads(pack_path.read_text())["flags"]
    for entry in flags[:FLAGGED_SHOWN]:
        assert f"{entry['code']} {entry['path']}" in digest
    assert f"  … {len(flags) - FLAGGED_SHOWN} more in --json" in digest


def test_scaffold_asks_about_the_context_flags(small_pr_path, pack_path, tmp_path):
    report = tmp_path / "pr-7001-review.md"
    assert triage_pr.main([str(small_pr_path), "--context", str(pack_path), "--scaffold", str(report)]) == 0
    text = report.read_text()
    question = next(line for line in text.splitlines() if "上下文包在" in line)
    assert "逐条核对后哪些成立？" in question and "第 3 节" in question and "context" not in question


def test_without_context_there_is_no_context_check(small_pr_path, capsys):
    capsys.readouterr()
    assert triage_pr.main([str(small_pr_path), "--json"]) == 0
    assert "context" not in json.loads(capsys.readouterr().out)["checks"]


@pytest.mark.parametrize("content, expected", [
    (None, "does not exist"),
    ("{not json", "is not JSON"),
    ('{"pr": {"number": 7001}}', "is not a context pack"),
    ('{"pr": {"number": 12}, "flags": []}', "is the context pack of PR 12, not of PR 7001"),
    ('{"pr": {"number": 7001}, "flags": [{"code": "X"}]}', "flags[0] lacks one of code, path, line, message"),
])
def test_bad_pack_is_one_line_error(small_pr_path, tmp_path, capsys, content, expected):
    path = tmp_path / "pack.json"
    if content is not None:
        path.write_text(content)
    capsys.readouterr()
    assert triage_pr.main([str(small_pr_path), "--context", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and expected in captured.err and captured.err.startswith("error: ")
