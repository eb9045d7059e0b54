"""scripts/triage_pr.py as a command: inputs, outputs, exit codes, the scaffold."""

import json
import re

import pytest

import triage_pr
from conftest import ROOT
from triage_support import file_diff, make_document
from vllm_rocm_review import report_format as fmt
from vllm_rocm_review.report_check import LEVEL_ERROR, check_report

EXAMPLE = ROOT / "examples" / "example-pr.json"
DIFF = file_diff("vllm/v1/attention/backends/rocm_aiter_fa.py", added=["    n = int(seq_lens.max().item())"]) \
    + file_diff("vllm/envs.py", added=["    VLLM_ROCM_FAST: bool = False"])


@pytest.fixture
def pr_json(tmp_path):
    path = tmp_path / "pr-4242.json"
    path.write_text(json.dumps(make_document(DIFF, title="[ROCm] Speed up decode", body="Decode is 2x faster.")),
                    encoding="utf-8")
    return path


def run(argv, capsys):
    code = triage_pr.main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_digest_is_compact_and_names_every_part(pr_json, capsys):
    code, out, err = run([pr_json], capsys)
    assert code == 0 and err == ""
    for heading in ("## Relevance: full", "## PR types and rules", "## Backbone tiers and flags",
                    "## Reading plan: deep", "## Mechanical checks"):
        assert heading in out
    assert "family cudagraph-unsafe -> B3: vllm/v1/attention/backends/rocm_aiter_fa.py:10" in out
    assert "2x in body: [unverified]" in out
    assert len(out.splitlines()) <= 80


def test_json_has_stable_keys_and_is_deterministic(pr_json, capsys):
    first = run([pr_json, "--json"], capsys)[1]
    second = run([pr_json, "--json"], capsys)[1]
    assert first == second
    result = json.loads(first)
    assert list(result) == ["pr", "relevance", "relevance_evidence", "rocm_files", "shared_files", "pr_types",
                            "families", "rules", "judgment_rules", "skipped_rules", "tiers", "flags",
                            "reading_plan", "checks"]
    assert result["relevance"] == "full"
    assert list(result["checks"]) == ["mori-symbols", "env-vars", "magic-constants", "perf-claims", "ci",
                                      "prompt-injection"]


def test_expand_prints_the_planned_catalog_text(pr_json, capsys):
    code, out, _ = run([pr_json, "--expand"], capsys)
    assert code == 0
    assert out.startswith("# Reading plan for PR #4242: deep, ")
    assert '<a id="core-discipline"></a>' in out and '<a id="rule-b3"></a>' in out
    assert "Checklist (apply each" in out
    plain = json.loads(run([pr_json, "--json"], capsys)[1])
    expanded = json.loads(run([pr_json, "--json", "--expand"], capsys)[1])
    assert "text" not in plain["reading_plan"]
    assert '<a id="rule-b3"></a>' in expanded["reading_plan"]["text"]


def test_output_is_written_atomically_and_equals_stdout(pr_json, tmp_path, capsys):
    stdout = run([pr_json], capsys)[1]
    target = tmp_path / "out" / "triage.txt"
    target.parent.mkdir()
    target.write_text("old content\n", encoding="utf-8")
    code, out, err = run([pr_json, "--output", target], capsys)
    assert code == 0 and out == "" and f"wrote {target}" in err
    assert target.read_text(encoding="utf-8") == stdout
    assert [path.name for path in target.parent.iterdir()] == ["triage.txt"]  # no temporary file left


def test_output_into_a_directory_fails_cleanly(pr_json, tmp_path, capsys):
    code, out, err = run([pr_json, "--output", tmp_path], capsys)
    assert code == 1 and out == ""
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("content, message", [
    ("{not json", "not JSON"),
    ('{"pr": {}}', "not a PR document"),
    ("[1, 2]", "not a PR document"),
])
def test_bad_input_is_one_line_and_exit_1(tmp_path, capsys, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    code, out, err = run([path], capsys)
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err and "fetch_pr_data.py" in err


def test_missing_input_is_exit_1(tmp_path, capsys):
    code, _, err = run([tmp_path / "nope.json"], capsys)
    assert code == 1 and "no such file" in err


@pytest.mark.parametrize("argv", [["--force"], ["--scaffold", "r.md", "--json"], []])
def test_usage_errors_exit_2(pr_json, capsys, argv):
    with pytest.raises(SystemExit) as raised:
        triage_pr.main(([str(pr_json)] if argv else []) + argv)
    assert raised.value.code == 2


def test_scaffold_refuses_to_overwrite_without_force(pr_json, tmp_path, capsys):
    report = tmp_path / "outputs" / "pr-4242-review.md"
    code, out, _ = run([pr_json, "--scaffold", report], capsys)
    assert code == 0 and out.strip() == str(report)
    report.write_text("my half-written review\n", encoding="utf-8")
    code, out, err = run([pr_json, "--scaffold", report], capsys)
    assert code == 1 and "--force" in err
    assert report.read_text(encoding="utf-8") == "my half-written review\n"
    code, _, _ = run([pr_json, "--scaffold", report, "--force"], capsys)
    assert code == 0 and report.read_text(encoding="utf-8").startswith("# PR #4242: [ROCm] Speed up decode\n")


def test_scaffold_header_is_exact_and_placeholders_are_flagged(pr_json, tmp_path, capsys):
    report = tmp_path / "r.md"
    run([pr_json, "--scaffold", report], capsys)
    text = report.read_text(encoding="utf-8")
    document = json.loads(pr_json.read_text(encoding="utf-8"))
    assert text.splitlines()[:5] == fmt.render_header_lines(document, "full")
    for heading in fmt.SECTION_HEADINGS:
        assert heading in text.splitlines()
    codes = {finding.code for finding in check_report(text, document) if finding.level == LEVEL_ERROR}
    assert "PLACEHOLDER" in codes


def test_filled_scaffold_passes_the_checker(pr_json, tmp_path, capsys):
    report = tmp_path / "r.md"
    run([pr_json, "--scaffold", report], capsys)
    text = fill_placeholders(report.read_text(encoding="utf-8"))
    document = json.loads(pr_json.read_text(encoding="utf-8"))
    errors = [finding for finding in check_report(text, document) if finding.level == LEVEL_ERROR]
    assert errors == []


def test_scaffold_for_a_non_rocm_pr_says_rules_were_skipped(tmp_path, capsys):
    path = tmp_path / "pr.json"
    path.write_text(json.dumps(make_document(file_diff("vllm/entrypoints/cli.py", added=["x = 1"]), title="[CLI] Fix")),
                    encoding="utf-8")
    report = tmp_path / "r.md"
    run([path, "--scaffold", report], capsys)
    text = report.read_text(encoding="utf-8")
    assert "**ROCm 相关性**: 不相关" in text and "AITER/mori-specific rules were skipped" in text


def test_bundled_example_runs(capsys):
    code, out, _ = run([EXAMPLE, "--json"], capsys)
    assert code == 0
    result = json.loads(out)
    assert result["relevance"] == "full"
    assert result["checks"]["ci"]["items"][0]["infrastructure"] is True


FINDING = """**⚠️【正确性】解码快路径在 cudagraph 捕获区内调用 `.item()`** `[推测]`
- **问题**: `vllm/v1/attention/backends/rocm_aiter_fa.py:10` 在 forward 中调用 `seq_lens.max().item()`，这是一次主机同步。
- **影响**: 在 gfx942 上开启 FULL cudagraph 捕获时，这一行会让捕获失败或把第一次的长度固定下来。
- **行动**: 建议作者把最大长度放进 metadata builder 中预先计算，并补一个捕获模式的测试。"""


def fill_placeholders(text):
    """What an agent does with the scaffold: every TODO(agent) line becomes real content."""
    replacements = {
        "## 1.": "该 PR 为 ROCm 注意力后端增加解码快路径，目的是减少纯解码批次的开销。作者认为原有的变长路径在这种批次上做了多余的工作。"
                 "改动通过新的环境变量控制，默认开启。PR 描述没有说明为什么选择默认开启。",
        "## 2.": "- 注意力后端：新增纯解码批次的快路径。\n- 环境变量：新增一个开关，默认开启。",
        "## 3.": FINDING,
        "## 4.": "目前没有评审意见或讨论。",
        "## 5.": "⚠️ NEEDS WORK：快路径在捕获区内做主机同步，需要先确认 cudagraph 下的行为。",
    }
    lines, section, done = [], None, set()
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[:5]
        if fmt.PLACEHOLDER not in line:
            lines.append(line)
            continue
        if line.startswith("|"):
            count = "1" if line.startswith("| ⚠️") else "0"
            lines.append(re.sub(re.escape(fmt.PLACEHOLDER), count, line))
        elif section == "## 3." and "findings sorted" in line:
            lines.append(replacements[section])
        elif section != "## 3." and section not in done:
            done.add(section)
            lines.append(replacements[section])
    return "\n".join(lines) + "\n"
