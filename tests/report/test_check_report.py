"""check_report.py: the report contract, one rule per test, on a good report and broken copies of it."""

import json
import re

import pytest

import check_report
import triage_pr
from conftest import ROOT
from vllm_tree import vllm_main_paths

from vllm_rocm_review.report import report_format as fmt
from vllm_rocm_review.report.path_trees import main_tree
from vllm_rocm_review.report.report_check import check_report as run_checks
from vllm_rocm_review.report.report_check import parse_report, prose_language_units, rule_ids_in

REPORTS = ROOT / "tests" / "reports"
EXAMPLE_PR = ROOT / "examples" / "example-pr.json"
GOOD = (REPORTS / "good-report.md").read_text(encoding="utf-8")
GOOD_EN = (REPORTS / "good-report-en.md").read_text(encoding="utf-8")
PR_JSON = REPORTS / "pr-41234.json"
PR = json.loads(PR_JSON.read_text(encoding="utf-8"))
# Paths of vLLM main the good report may cite beyond the PR's own files.
VLLM_PATHS = ["vllm/v1/attention/backends/rocm_attn.py", "vllm/platforms/rocm.py", *[f["filename"] for f in PR["files"]]]
VLLM_TREE = main_tree(VLLM_PATHS, "6adad087", "tree.json")


def line_of(text, needle):
    """1-based line of the first line containing ``needle``."""
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in text")


def edit(text, old, new, count=1):
    assert text.count(old) >= 1, f"{old!r} not in the good report"
    return text.replace(old, new, count)


def errors(text, **kwargs):
    return sorted((f.code, f.line) for f in run_checks(text, **kwargs) if f.level == "error")


def warnings(text, **kwargs):
    return sorted((f.code, f.line) for f in run_checks(text, **kwargs) if f.level == "warning")


def block(text, start_marker, end_marker):
    """The lines from the one holding start_marker up to (not including) the one holding end_marker."""
    lines = text.splitlines(keepends=True)
    start, end = line_of(text, start_marker) - 1, line_of(text, end_marker) - 1
    return "".join(lines[start:end])


# --- the good reports ----------------------------------------------------------

def test_good_report_passes_without_warnings():
    assert run_checks(GOOD, pr_document=PR, vllm_tree=VLLM_TREE) == []


def test_good_english_report_passes_with_lang_en():
    assert run_checks(GOOD_EN, pr_document=PR, lang="en") == []


def test_scaffold_header_is_what_the_checker_expects():
    header = "\n".join(fmt.render_header_lines(PR, "full"))
    assert GOOD.startswith(header + "\n")


def test_scaffold_summary_table_is_what_the_checker_expects():
    table = "\n".join(fmt.render_summary_table({"🔴": 1, "⚠️": 3, "📝": 2}))
    assert table + "\n" in GOOD


def test_expected_header_converts_the_date_to_utc():
    document = json.loads(json.dumps(PR))
    document["pr"]["created_at"] = "2026-07-08T22:30:00-05:00"
    document["pr"]["labels"] = []
    header = fmt.expected_header(document)
    assert header["Date"] == "2026-07-09"
    assert header["Labels"] == "—"


def test_parser_finds_six_findings_and_the_table():
    parsed = parse_report(GOOD)
    assert [f.severity for f in parsed.findings] == ["🔴", "⚠️", "⚠️", "⚠️", "📝", "📝"]
    assert [row.key for row in parsed.summary_table.rows] == ["🔴 必须修复", "⚠️ 建议修复", "📝 建议/备注"]


# --- header ----------------------------------------------------------------------

def test_header_title_must_be_pr_number_and_title():
    broken = edit(GOOD, "# PR #41234:", "# PR 41234:")
    assert errors(broken) == [("HEADER-TITLE", 1)]


def test_header_field_missing():
    broken = edit(GOOD, " | **Labels**: rocm, v1", "")
    assert errors(broken) == [("HEADER-FIELD", 5)]


def test_missing_header_field_fix_shows_the_whole_line_to_write():
    broken = edit(GOOD, " | **Labels**: rocm, v1", "")
    [missing] = run_checks(broken, pr_document=PR, vllm_tree=VLLM_TREE)
    assert missing.fix == "add it to the header line that reads '> **Branch**: `aiter-unified-decode` → `main` | " \
                          "**Labels**: rocm, v1'"
    assert "seed" not in missing.fix


def test_header_field_malformed_state():
    broken = edit(GOOD, "**State**: OPEN", "**State**: open")
    assert errors(broken) == [("HEADER-FIELD", 3)]


def test_header_must_equal_pr_metadata():
    broken = edit(GOOD, "+28 -0 lines", "+28 -3 lines")
    assert errors(broken) == []
    assert errors(broken, pr_document=PR, vllm_tree=VLLM_TREE) == [("HEADER-MISMATCH", 5)]


def test_header_title_must_equal_pr_title():
    broken = edit(GOOD, "decode-only batches", "decode batches")
    assert errors(broken, pr_document=PR, vllm_tree=VLLM_TREE) == [("HEADER-MISMATCH", 1)]


# --- sections --------------------------------------------------------------------

def test_section_missing():
    broken = edit(GOOD, block(GOOD, "## 4. 现有讨论", "## 5. 结论"), "")
    assert errors(broken) == [("SECTION-MISSING", line_of(broken, "## 5. 结论"))]


def test_sections_out_of_order():
    discussion = block(GOOD, "## 4. 现有讨论", "## 5. 结论")
    broken = edit(GOOD, discussion, "") + "\n" + discussion
    assert errors(broken) == [("SECTION-ORDER", line_of(broken, "## 4. 现有讨论"))]


def test_section_heading_must_be_exact():
    broken = edit(GOOD, "## 1. 动机 (Motivation)", "## 1. Motivation")
    assert errors(broken) == [("SECTION-HEADING", 7)]


def test_unknown_section():
    broken = GOOD + "\n## 6. 附录\n\n补充说明。\n"
    assert errors(broken) == [("SECTION-EXTRA", line_of(broken, "## 6. 附录"))]


def _without_findings(text, verdict_line):
    findings = block(text, "## 3. Review 意见", "## 4. 现有讨论")
    verdict = text[text.index("## 5. 结论"):]
    return edit(text, findings, "").replace(verdict, f"## 5. 结论 (Verdict)\n\n{verdict_line}\n")


def test_no_findings_section_3_omitted_and_said_so_passes():
    report = _without_findings(GOOD, f"✅ LGTM：{fmt.NO_FINDINGS_SENTENCE}")
    assert run_checks(report) == []


def test_no_findings_must_be_stated_in_verdict():
    broken = _without_findings(GOOD, "✅ LGTM：改动很小，可以合并。")
    assert errors(broken) == [("NO-FINDINGS-UNSTATED", line_of(broken, "## 5. 结论"))]


def test_empty_findings_section_must_be_omitted():
    findings = block(GOOD, "| 意见类型", "## 4. 现有讨论")
    broken = edit(GOOD, findings, "暂无。\n\n")
    broken = edit(broken, "🔴 BLOCK：", "✅ LGTM：")
    assert errors(broken) == [("FINDINGS-EMPTY", line_of(broken, "## 3. Review 意见"))]


# --- summary table ---------------------------------------------------------------

def test_summary_table_count_must_match():
    broken = edit(GOOD, "| ⚠️ 建议修复 | 3 |", "| ⚠️ 建议修复 | 2 |")
    assert errors(broken) == [("SUMMARY-TABLE-COUNT", line_of(GOOD, "| ⚠️ 建议修复 |"))]


def test_summary_table_row_must_be_a_severity_or_type():
    broken = edit(GOOD, "| 📝 建议/备注 | 2 |", "| 📝 建议/备注 | 2 |\n| 其他 | 0 |")
    assert errors(broken) == [("SUMMARY-TABLE-ROW", line_of(broken, "| 其他 |"))]


def test_summary_table_missing():
    table = block(GOOD, "| 意见类型", "**🔴【")
    broken = edit(GOOD, table, "")
    assert errors(broken) == [("SUMMARY-TABLE-MISSING", line_of(broken, "**🔴【"))]


def test_summary_table_by_type_is_accepted_and_checked():
    by_type = "| 意见类型 | 数量 |\n|---|---|\n| 正确性 | 1 |\n| 兼容性 | 1 |\n| 性能 | 1 |\n| 测试 | 1 |\n" \
              "| 注释/文档 | 1 |\n| 可维护性 | 1 |\n| 合计 | 6 |\n"
    report = edit(GOOD, block(GOOD, "| 意见类型", "**🔴【"), by_type + "\n")
    assert run_checks(report) == []
    broken = edit(report, "| 测试 | 1 |", "| 测试 | 2 |")
    assert errors(broken) == [("SUMMARY-TABLE-COUNT", line_of(report, "| 测试 |"))]


def test_summary_table_matrix_of_type_and_severity():
    matrix = "| 意见类型 | 🔴 | ⚠️ | 📝 |\n|---|---|---|---|\n| 正确性 | 1 | 0 | 0 |\n| 兼容性 | 0 | 1 | 0 |\n" \
             "| 性能 | 0 | 1 | 0 |\n| 测试 | 0 | 1 | 0 |\n| 注释/文档 | 0 | 0 | 1 |\n| 可维护性 | 0 | 0 | 1 |\n"
    report = edit(GOOD, block(GOOD, "| 意见类型", "**🔴【"), matrix + "\n")
    assert run_checks(report) == []
    broken = edit(report, "| 性能 | 0 | 1 | 0 |", "| 性能 | 0 | 0 | 1 |")
    assert errors(broken) == [("SUMMARY-TABLE-COUNT", line_of(report, "| 性能 |"))] * 2


# --- findings ----------------------------------------------------------------------

def test_findings_must_be_sorted_by_severity():
    broken = edit(GOOD, "**⚠️【兼容性】", "**📝【兼容性】")
    broken = edit(broken, "| ⚠️ 建议修复 | 3 |", "| ⚠️ 建议修复 | 2 |")
    broken = edit(broken, "| 📝 建议/备注 | 2 |", "| 📝 建议/备注 | 3 |")
    # Two ⚠️ findings now sit below a 📝 one: one error, at the first, giving the whole order.
    assert errors(broken) == [("FINDING-ORDER", line_of(GOOD, "**⚠️【性能】"))]
    [order] = [f for f in run_checks(broken) if f.code == "FINDING-ORDER"]
    assert order.message == "this ⚠️ finding comes after a 📝 one; findings run 🔴 → ⚠️ → 📝"
    assert order.fix == "reorder the findings as 🔴 ×1, ⚠️ ×2, 📝 ×3"


def test_finding_type_must_be_allowed():
    broken = edit(GOOD, "**⚠️【兼容性】", "**⚠️【风险】")
    assert errors(broken) == [("FINDING-TYPE", line_of(GOOD, "**⚠️【兼容性】"))]


def test_finding_needs_a_verification_tag():
    broken = edit(GOOD, "新分配 workspace** `[推测]`", "新分配 workspace**")
    assert errors(broken) == [("FINDING-TAG", line_of(GOOD, "新分配 workspace**"))]


def test_finding_heading_form():
    broken = edit(GOOD, "**📝【可维护性】开关探测的命名与已有约定不一致** `[已验证]`",
                  "### 📝【可维护性】开关探测的命名与已有约定不一致 `[已验证]`")
    assert errors(broken) == [("FINDING-FORMAT", line_of(GOOD, "📝【可维护性】"))]


def test_finding_needs_all_three_bullets():
    impact = [line for line in GOOD.splitlines() if line.startswith("- **影响**: 运行时访问")][0]
    broken = edit(GOOD, impact + "\n", "")
    assert errors(broken) == [("FINDING-BULLETS", line_of(GOOD, "**⚠️【兼容性】"))]


def test_action_without_a_request_to_the_author_fails():
    broken = edit(GOOD, "- **行动**: 作者应当在 `environment_variables`", "- **行动**: 在 `environment_variables`")
    assert errors(broken) == [("FINDING-ACTION", line_of(GOOD, "- **行动**: 作者应当在 `environment_variables`"))]


def test_red_finding_must_name_a_triggering_input():
    red = block(GOOD, "**🔴【", "**⚠️【兼容性】")
    vague = ("**🔴【正确性】decode 快路径可能漏传参数** `[已验证]`\n- **问题**: 新分支比原有调用少传了几个参数。\n"
             "- **影响**: 部分模型的输出可能不对。\n- **行动**: 作者应当补齐这些参数。\n\n")
    broken = edit(GOOD, red, vague)
    assert errors(broken) == [("RED-NO-TRIGGER", line_of(broken, "**🔴【"))]


def _red_finding_with(trigger):
    red = block(GOOD, "**🔴【", "**⚠️【兼容性】")
    named = (f"**🔴【正确性】decode 快路径可能漏传参数** `[已验证]`\n- **问题**: 在 {trigger} 下新分支少传了参数。\n"
             "- **影响**: 输出错误。\n- **行动**: 作者应当补齐这些参数。\n\n")
    return edit(GOOD, red, named)


@pytest.mark.parametrize("trigger", ["`head_dim=576`", "[B, H, D]", "4096x7168", "gfx950", "MI355X", "TP8",
                                     "`VLLM_ROCM_USE_AITER_MHA=0`", "e4m3fnuz", "mxfp4", "DeepSeek-V3.2",
                                     "长上下文（32k tokens）", "`max_model_len=32768`", "seq_len 8192", "batch size 256",
                                     "128K 上下文", "序列长度 8192", "8192 tokens 的 prefill"])
def test_red_trigger_vocabulary(trigger):
    assert errors(_red_finding_with(trigger)) == []


@pytest.mark.parametrize("vague", ["长上下文", "大 batch", "long sequences", "较大的 seq_len"])
def test_red_trigger_needs_a_number_for_lengths_and_batches(vague):
    broken = _red_finding_with(vague)
    assert errors(broken) == [("RED-NO-TRIGGER", line_of(broken, "**🔴【"))]


def test_finding_count_outside_3_to_10_is_a_warning_only():
    note = block(GOOD, "**📝【可维护性】", "## 4. 现有讨论")
    padded = edit(GOOD, note, note * 6)
    padded = edit(padded, "| 📝 建议/备注 | 2 |", "| 📝 建议/备注 | 7 |")
    assert errors(padded) == []
    assert warnings(padded) == [("FINDING-COUNT", line_of(GOOD, "## 3. Review 意见"))]


# --- verdict -----------------------------------------------------------------------

def test_red_finding_requires_block():
    broken = edit(GOOD, "🔴 BLOCK：", "⚠️ NEEDS WORK：")
    assert errors(broken) == [("VERDICT-MISMATCH", line_of(GOOD, "🔴 BLOCK："))]


def test_block_requires_a_red_finding():
    broken = edit(GOOD, "**🔴【正确性】", "**⚠️【正确性】")
    broken = edit(broken, "| 🔴 必须修复 | 1 |", "| 🔴 必须修复 | 0 |")
    broken = edit(broken, "| ⚠️ 建议修复 | 3 |", "| ⚠️ 建议修复 | 4 |")
    assert errors(broken) == [("VERDICT-MISMATCH", line_of(GOOD, "🔴 BLOCK："))]


def test_only_notes_means_lgtm():
    notes_only = "| 🔴 必须修复 | 0 |\n| ⚠️ 建议修复 | 0 |\n| 📝 建议/备注 | 6 |"
    report = GOOD.replace("**🔴【", "**📝【").replace("**⚠️【", "**📝【")
    report = edit(report, "| 🔴 必须修复 | 1 |\n| ⚠️ 建议修复 | 3 |\n| 📝 建议/备注 | 2 |", notes_only)
    assert errors(edit(report, "🔴 BLOCK：", "✅ LGTM：")) == []
    assert errors(edit(report, "🔴 BLOCK：", "⚠️ NEEDS WORK：")) == [("VERDICT-MISMATCH", line_of(GOOD, "🔴 BLOCK："))]


def test_verdict_missing():
    broken = edit(GOOD, "🔴 BLOCK：", "需要修改：")
    assert errors(broken) == [("VERDICT-MISSING", line_of(GOOD, "## 5. 结论"))]


# --- leaks, placeholders, length, language ---------------------------------------------

def test_rule_id_leak():
    broken = edit(GOOD, "输出静默错误；", "输出静默错误（B1、D1b）；")
    assert errors(broken) == [("RULE-ID-LEAK", line_of(GOOD, "输出静默错误；"))] * 2


def test_rule_id_leak_ignores_the_pr_title():
    document = json.loads(json.dumps(PR))
    document["pr"]["title"] = "[ROCm] Fix the B3 capture path"
    report = GOOD.replace(PR["pr"]["title"], document["pr"]["title"])
    assert errors(report, pr_document=document, vllm_tree=VLLM_TREE) == []


@pytest.mark.parametrize("text", [
    "fp8 与 bf16 在 gfx942、gfx950、MI300X、MI355X 上", "对比 H100、A100、B200 与 TP8、EP8", "E4M3 与 e4m3fnuz",
    "提交 9f1c2e7 和 A1B2C3D4", "DeepSeek V3 和 DeepSeek-V3.2", "vLLM V1 引擎", "V1 引擎的调度", "A2A 通信与 D2H 拷贝",
    "参见 https://github.com/ROCm/aiter/pull/B3", "路径 `vllm/v1/attention/backends/rocm_attn.py`",
])
def test_rule_id_leak_ignores_hardware_dtypes_versions_and_shas(text):
    assert rule_ids_in(text) == []


@pytest.mark.parametrize("text, expected", [
    ("违反了 B3 规则", ["B3"]), ("(A1)", ["A1"]), ("HK：缺少测试", ["HK"]), ("`G1b`", ["G1b"]),
    ("规则 V3 要求", ["V3"]), ("per rule V3", ["V3"]), ("违反 P1–P4", ["P1", "P4"]), ("缺少复现信息（P3）", ["P3"]),
    ("见 B1、P2", ["B1", "P2"]), ("(P1, P5)", ["P1", "P5"]), ("参见 P2", ["P2"]), ("（V4）", ["V4"]),
])
def test_rule_id_leak_catches_ids(text, expected):
    assert rule_ids_in(text) == expected


@pytest.mark.parametrize("text", [
    "这是 P1 优先级的问题", "P0 问题", "P1/P2 问题需要先修", "按 P0–P2 排序", "列为 P1，合入前修复", "a P2 bug",
    "(P0–P2)", "V2 版本",
])
def test_rule_id_leak_reads_p_numbers_as_priorities(text):
    assert rule_ids_in(text) == []


def test_placeholder_left_in_report():
    broken = edit(GOOD, "## 2. 代码改动总结 (Change Summary)\n", "## 2. 代码改动总结 (Change Summary)\n\nTODO(agent): 补充\n")
    assert errors(broken) == [("PLACEHOLDER", line_of(broken, "TODO(agent)"))]


def test_length_over_400_lines():
    broken = GOOD + "\n" * (401 - len(GOOD.splitlines()))
    assert len(broken.splitlines()) == 401
    assert errors(broken) == [("LENGTH", 401)]


def test_english_prose_fails_in_chinese_mode():
    assert errors(GOOD_EN, lang="en") == []
    assert ("LANGUAGE", 7) in errors(GOOD_EN)


def test_chinese_prose_fails_in_english_mode():
    assert errors(GOOD, lang="en") == [("LANGUAGE", 7)]


# --- paths -------------------------------------------------------------------------

def test_unknown_path_is_reported_once():
    twice = edit(GOOD, "`vllm/envs.py` 只在类型声明块", "`vllm/envs_rocm.py` 只在类型声明块")
    twice = edit(twice, "`vllm/_aiter_ops.py` 却在运行时", "`vllm/envs_rocm.py` 却在运行时")
    assert warnings(twice, pr_document=PR, vllm_tree=VLLM_TREE) == [("UNKNOWN-PATH", line_of(GOOD, "只在类型声明块"))]


def test_made_up_path_is_a_warning():
    broken = edit(GOOD, "`vllm/envs.py` 只在类型声明块", "`vllm/envs_rocm.py` 只在类型声明块")
    assert errors(broken, pr_document=PR, vllm_tree=VLLM_TREE) == []
    assert warnings(broken, pr_document=PR, vllm_tree=VLLM_TREE) == [("UNKNOWN-PATH", line_of(GOOD, "只在类型声明块"))]


def test_path_outside_the_pr_needs_the_vllm_tree():
    cited = edit(GOOD, "`vllm/envs.py` 只在类型声明块", "`vllm/envs.py`（对照 `mla/rocm_aiter_mla.py`）只在类型声明块")
    line = line_of(GOOD, "只在类型声明块")
    assert warnings(cited, pr_document=PR) == [("UNKNOWN-PATH", line)]
    without_tree = [f for f in run_checks(cited, pr_document=PR) if f.level == "warning"][0]
    assert without_tree.message.endswith("is not in the PR's files, and no vLLM tree is available to check it against")
    assert without_tree.fix.endswith("; pass --repo CLONE or --fetch-tree, or run python3 scripts/update_skill.py "
                                     "--check-vllm-tree to save vLLM main's tree")
    tree = [*VLLM_PATHS, "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"]
    assert warnings(cited, pr_document=PR, vllm_tree=main_tree(tree, None, "tree.json")) == []


def test_tree_alone_checks_paths_and_says_the_pr_files_are_unknown():
    broken = edit(GOOD, "`vllm/envs.py` 只在类型声明块", "`vllm/envs_rocm.py` 只在类型声明块")
    assert warnings(broken) == []
    [unknown] = [f for f in run_checks(broken, vllm_tree=VLLM_TREE) if f.level == "warning"]
    assert (unknown.code, unknown.line) == ("UNKNOWN-PATH", line_of(GOOD, "只在类型声明块"))
    assert unknown.message == ("vllm/envs_rocm.py is not in vLLM main's saved tree @6adad087 (tree.json) "
                               "(without --pr-json, files the PR adds are unknown)")
    assert unknown.fix.endswith("if the PR adds this file, pass --pr-json too")


# --- unfinished scaffolds: only the placeholders are reported --------------------------

def _scaffold(tmp_path):
    path = tmp_path / "pr-review.md"
    assert triage_pr.main([str(EXAMPLE_PR), "--scaffold", str(path)]) == 0
    return path, path.read_text(encoding="utf-8")


def test_fresh_scaffold_gets_only_placeholder_errors(tmp_path, capsys):
    path, text = _scaffold(tmp_path)
    document = json.loads(EXAMPLE_PR.read_text(encoding="utf-8"))
    placeholder_lines = [number for number, line in enumerate(text.splitlines(), 1) if fmt.PLACEHOLDER in line]
    assert len(placeholder_lines) >= 8
    found = run_checks(text, pr_document=document)
    assert [(f.code, f.line) for f in found] == [("PLACEHOLDER", number) for number in placeholder_lines]
    capsys.readouterr()
    assert check_report.main([str(path), "--pr-json", str(EXAMPLE_PR)]) == 1
    out = capsys.readouterr().out
    assert "omit section 3" not in out and "LANGUAGE" not in out and "VERDICT" not in out


def test_scaffold_comments_do_not_count_as_prose_once_sections_are_written(tmp_path):
    _, text = _scaffold(tmp_path)
    motivation = "这个 PR 为 ROCM_AITER_UNIFIED_ATTN 增加了 decode 快路径，避免纯 decode 批次重复分配 workspace。"
    filled = text.replace("## 1. 动机 (Motivation)\n", f"## 1. 动机 (Motivation)\n\n{motivation}\n", 1)
    assert fmt.PLACEHOLDER in filled
    assert prose_language_units(parse_report(filled)) == prose_language_units(parse_report(f"## 1. x\n\n{motivation}\n"))


def test_english_comments_in_a_chinese_report_are_not_prose():
    comment = "<!-- reviewer notes: " + "the decode path was checked against the unified attention kernel " * 3 + "-->\n"
    multi_line = "<!--\n" + "English notes that never render in the posted report.\n" * 10 + "-->\n"
    report = edit(GOOD, "## 2. 代码改动总结 (Change Summary)\n", "## 2. 代码改动总结 (Change Summary)\n" + comment + multi_line)
    assert run_checks(report, pr_document=PR, vllm_tree=VLLM_TREE) == []
    assert prose_language_units(parse_report(report)) == prose_language_units(parse_report(GOOD))
    uncommented = edit(GOOD, "## 2. 代码改动总结 (Change Summary)\n",
                       "## 2. 代码改动总结 (Change Summary)\n" + multi_line.replace("<!--\n", "").replace("-->\n", ""))
    cjk, words = prose_language_units(parse_report(GOOD))
    assert prose_language_units(parse_report(uncommented)) == (cjk, words + 90)


def test_a_written_verdict_is_still_checked_next_to_a_placeholder():
    broken = edit(GOOD, "🔴 BLOCK：", "<!-- TODO(agent): one sentence more -->\n⚠️ NEEDS WORK：")
    assert errors(broken) == [("PLACEHOLDER", line_of(broken, "TODO(agent)")),
                              ("VERDICT-MISMATCH", line_of(broken, "⚠️ NEEDS WORK："))]


def test_a_placeholder_outside_section_3_does_not_hide_an_empty_section_3():
    findings = block(GOOD, "| 意见类型", "## 4. 现有讨论")
    broken = edit(edit(GOOD, findings, "暂无。\n\n"), "🔴 BLOCK：", "✅ LGTM：")
    broken = edit(broken, "## 1. 动机 (Motivation)\n", "## 1. 动机 (Motivation)\n<!-- TODO(agent): motivation -->\n")
    assert errors(broken) == [("FINDINGS-EMPTY", line_of(broken, "## 3. Review 意见")),
                              ("PLACEHOLDER", line_of(broken, "TODO(agent)"))]


# --- the example report --------------------------------------------------------------

def test_example_report_passes_against_its_pr_document():
    from vllm_cases import build_pr_document

    example = ROOT / "references" / "example-report.md"
    if not example.exists():
        pytest.skip("references/example-report.md is not written yet")
    text = example.read_text(encoding="utf-8")
    number = int(re.match(r"# PR #(\d+):", text).group(1))
    document = build_pr_document(number)
    tree = main_tree(vllm_main_paths(blobs_only=True), None, "vllm-tree.json")
    found = run_checks(text, pr_document=document, vllm_tree=tree)
    assert [f.render("example-report.md") for f in found] == []


# --- CLI -------------------------------------------------------------------------------

def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_cli_good_report_exits_0(capsys):
    assert check_report.main([str(REPORTS / "good-report.md"), "--pr-json", str(PR_JSON),
                              "--vllm-tree", str(REPORTS / "vllm-tree.json")]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"paths checked against vLLM main's saved tree @6adad080 ({REPORTS / 'vllm-tree.json'})\n"
                            f"{REPORTS / 'good-report.md'} passes: 0 error(s), 0 warning(s)\n")


def test_cli_broken_report_exits_1_with_one_line_per_violation(tmp_path, capsys):
    report = write(tmp_path, "r.md", edit(GOOD, "🔴 BLOCK：", "⚠️ NEEDS WORK：").replace(" | **Labels**: rocm, v1", ""))
    assert check_report.main([str(report)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{report}:5: error HEADER-FIELD: header field **Labels** is missing — fix: add it to the header line that "
        "reads '> **Branch**: `head` → `base` | **Labels**: label1, label2 (or — for none)'",
        f"{report}:{line_of(GOOD, '🔴 BLOCK：')}: error VERDICT-MISMATCH: verdict is ⚠️ NEEDS WORK but there is a 🔴 "
        "finding, which means 必须修复 — fix: write 🔴 BLOCK, or downgrade the 🔴 finding to ⚠️ if you cannot name "
        "its triggering input",
    ]


def test_cli_reads_a_report_with_a_byte_order_mark(tmp_path, capsys):
    report = tmp_path / "bom.md"
    report.write_bytes(b"\xef\xbb\xbf" + GOOD.encode("utf-8"))
    assert check_report.main([str(report)]) == 0


def test_cli_lang_en(capsys):
    assert check_report.main([str(REPORTS / "good-report-en.md"), "--lang", "en"]) == 0
    assert check_report.main([str(REPORTS / "good-report-en.md")]) == 1
    assert "LANGUAGE" in capsys.readouterr().out


def test_cli_json_output(tmp_path, capsys):
    report = write(tmp_path, "r.md", edit(GOOD, "| ⚠️ 建议修复 | 3 |", "| ⚠️ 建议修复 | 2 |"))
    assert check_report.main([str(report), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] is False and result["errors"] == 1 and result["warnings"] == 0 and result["notes"] == 0
    assert result["paths_checked_against"] is None
    assert result["violations"][0]["code"] == "SUMMARY-TABLE-COUNT"


def test_cli_warning_only_exits_0(tmp_path, capsys):
    report = write(tmp_path, "r.md", edit(GOOD, "`vllm/envs.py` 只在类型声明块", "`vllm/envs_rocm.py` 只在类型声明块"))
    assert check_report.main([str(report), "--pr-json", str(PR_JSON), "--vllm-tree", str(REPORTS / "vllm-tree.json")]) == 0
    assert " warning UNKNOWN-PATH: vllm/envs_rocm.py" in capsys.readouterr().out


def test_cli_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        check_report.main([str(REPORTS / "good-report.md"), "--lang", "fr"])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        check_report.main([])
    assert exit_info.value.code == 2


def test_cli_unreadable_report_is_one_line_exit_1(tmp_path, capsys):
    assert check_report.main([str(tmp_path / "missing.md")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: cannot read report ") and "missing.md" in err[0]


@pytest.mark.parametrize("content, reason", [
    ("{not json", "is not JSON"),
    (json.dumps({"pr": {"number": 1}}), "is not a PR document"),
])
def test_cli_bad_pr_json_is_one_line_exit_1(tmp_path, capsys, content, reason):
    bad = write(tmp_path, "pr.json", content)
    assert check_report.main([str(REPORTS / "good-report.md"), "--pr-json", str(bad)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and reason in lines[0] and "fetch_pr_data.py" in lines[0]


SAVE_TREE = "python3 scripts/update_skill.py --check-vllm-tree saves it as references/upstream/vllm-tree.json"


@pytest.mark.parametrize("content, reason", [
    (json.dumps({"commit_sha": "abc", "paths": "not a list"}), "has no 'paths' list of strings"),
    ("vllm/envs.py\nvllm/platforms/rocm.py\n", "is not JSON (Expecting value at line 1)"),
])
@pytest.mark.parametrize("with_pr", [True, False])
def test_cli_bad_vllm_tree_is_one_line_exit_1(tmp_path, capsys, content, reason, with_pr):
    tree = write(tmp_path, "tree.json", content)
    pr_args = ["--pr-json", str(PR_JSON)] if with_pr else []
    assert check_report.main([str(REPORTS / "good-report.md"), *pr_args, "--vllm-tree", str(tree)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"error: vLLM tree {tree} {reason}; {SAVE_TREE}\n"


def test_cli_missing_vllm_tree_fails_without_pr_json(tmp_path, capsys):
    missing = tmp_path / "nonexistent.json"
    assert check_report.main([str(REPORTS / "good-report.md"), "--vllm-tree", str(missing)]) == 1
    assert capsys.readouterr().err == f"error: cannot read vLLM tree {missing}: no such file; {SAVE_TREE}\n"


def test_cli_vllm_tree_alone_flags_a_made_up_path(tmp_path, capsys):
    report = write(tmp_path, "r.md", edit(GOOD, "`vllm/envs.py` 只在类型声明块", "`vllm/envs_rocm.py` 只在类型声明块"))
    assert check_report.main([str(report)]) == 0
    assert capsys.readouterr().out == ""
    assert check_report.main([str(report), "--vllm-tree", str(REPORTS / "vllm-tree.json")]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        f"{report}:{line_of(GOOD, '只在类型声明块')}: warning UNKNOWN-PATH: vllm/envs_rocm.py is not in vLLM main's "
        f"saved tree @6adad080 ({REPORTS / 'vllm-tree.json'}) (without --pr-json, files the PR adds are unknown) — fix: "
        "cite the real path (check the diff or the PR's head commit); if the PR adds this file, pass --pr-json too"]
    assert captured.err == (f"paths checked against vLLM main's saved tree @6adad080 ({REPORTS / 'vllm-tree.json'})\n"
                            f"{report} passes: 0 error(s), 1 warning(s)\n")


@pytest.mark.parametrize("option", ["--vllm-tree", "--pr-json"])
def test_cli_empty_path_is_a_usage_error(capsys, option):
    with pytest.raises(SystemExit) as exit_info:
        check_report.main([str(REPORTS / "good-report.md"), option, ""])
    assert exit_info.value.code == 2
    assert f"argument {option}: empty path; pass a file" in capsys.readouterr().err


def test_cli_help_documents_vllm_tree_without_pr_json(capsys):
    with pytest.raises(SystemExit):
        check_report.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "Also works without the PR document" in help_text
    assert "python3 scripts/update_skill.py --check-vllm-tree" in help_text


def test_cli_prints_at_most_30_violations_and_says_how_many_more(tmp_path, capsys):
    report = write(tmp_path, "r.md", GOOD + "".join(f"\nTODO(agent): item {index}\n" for index in range(35)))
    assert check_report.main([str(report)]) == 1
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 30
    assert captured.err.splitlines() == ["note: 5 more not shown; fix these and re-run, or pass --json",
                                         f"{report} fails: 35 error(s), 0 warning(s)"]
