"""False alarms the checker used to raise, each from a sentence a real review wrote, next to the
real violations that must still fail.

Every false-positive test below puts an ordinary review sentence into the good report and
asserts that the check stays silent; every violation test asserts the error or warning.
"""

import json

import check_report
import pytest
from conftest import ROOT

from vllm_rocm_review.report import report_format as fmt
from vllm_rocm_review.report.path_trees import main_tree
from vllm_rocm_review.report.report_check import check_report as run_checks
from vllm_rocm_review.report.report_check import rule_ids_in

REPORTS = ROOT / "tests" / "reports"
GOOD = (REPORTS / "good-report.md").read_text(encoding="utf-8")
PR = json.loads((REPORTS / "pr-41234.json").read_text(encoding="utf-8"))
TREE = main_tree(["vllm/v1/attention/backends/rocm_attn.py", "vllm/platforms/rocm.py",
                  *[item["filename"] for item in PR["files"]]], None, "tree.json")
PROBLEM = "- **问题**: `vllm/envs.py` 只在类型声明块"
ACTION = "- **行动**: 作者应当在 `environment_variables` 中注册该变量（默认值与类型声明一致），并确认它是否需要参与编译缓存的哈希。"
PROBLEM_LINE = next(n for n, line in enumerate(GOOD.splitlines(), 1) if line.startswith(PROBLEM))
ACTION_LINE = next(n for n, line in enumerate(GOOD.splitlines(), 1) if line == ACTION)


def with_problem(sentence):
    """The good report with one 问题 bullet rewritten to start with ``sentence``."""
    assert PROBLEM in GOOD
    return GOOD.replace(PROBLEM, f"- **问题**: {sentence}；`vllm/envs.py` 只在类型声明块", 1)


def with_action(sentence):
    assert ACTION in GOOD
    return GOOD.replace(ACTION, f"- **行动**: {sentence}", 1)


def found(text, **kwargs):
    return [(item.level, item.code, item.line) for item in run_checks(text, pr_document=PR, vllm_tree=TREE, **kwargs)]


# --- rule IDs: only where the text refers to the catalog -------------------------------------

@pytest.mark.parametrize("sentence", [
    "在 MI300X 上 P4→D8 拓扑下，decode 节点的 KV 传输会在首个请求时超时",
    "DeepSeek-R1 与 V3 均受影响，R1 蒸馏模型同样走这条路径",
    "按 P2->D4 与 P4->D8 两种部署分别复现",
    "TP8、EP8 与 DP2 组合下 H100 和 MI355X 的结果一致",
    "见 DeepSeek-V3 配置中的 `kv_lora_rank`",
    "D8 节点数翻倍后 prefill 侧的 P4 实例成为瓶颈",
    "这是 P1 优先级的问题，合入前需要修复",
    "参见 R1 的推理配置，按 TP8 切分",
    "优先级（P1）：合入前修复",
])
def test_rule_id_false_alarms_from_review_prose(sentence):
    assert rule_ids_in(sentence) == []
    assert found(with_problem(sentence)) == []


@pytest.mark.parametrize("sentence, leaked", [
    ("这违反了规则 D8 的要求", ["D8"]), ("缺少复现信息（P4）", ["P4"]), ("per rule A3 this is blocking", ["A3"]),
    ("按 V2 检查 CI 覆盖", ["V2"]), ("（B1、D1b）两条都触发", ["B1", "D1b"]), ("B1、D1b 都适用", ["B1", "D1b"]),
    ("`G1b` 要求写明", ["G1b"]), ("B3 规则要求", ["B3"]),
])
def test_real_rule_id_leaks_still_fail(sentence, leaked):
    assert rule_ids_in(sentence) == leaked
    assert found(with_problem(sentence)) == [("error", "RULE-ID-LEAK", PROBLEM_LINE)] * len(leaked)


def test_a_label_at_the_start_of_a_line_is_a_leak():
    assert rule_ids_in("HK：缺少测试") == ["HK"]
    assert rule_ids_in("- D8: workspace 未预留") == ["D8"]


# --- 行动: any concrete request to the author -------------------------------------------------

@pytest.mark.parametrize("sentence", [
    "请在 `environment_variables` 中注册该变量，并补一条默认值测试。",
    "需要在 decode 路径上补充 sinks 与滑动窗口的对拍测试。",
    "应在 dispatch 条件里先判断权重是否 contiguous，而不是每步调用 `.contiguous()`。",
    "应该把 workspace 的预留提前到锁定之前。",
    "务必在合入前给出 MI355X 上的 gsm8k 精度结果。",
    "必须恢复 fnuz 下原有的 fp8 最大值。",
    "建议补充 FP8 query 与重复 head 的单测。",
    "Please register the variable in `environment_variables`.",
    "The dispatch should check contiguity before copying.",
])
def test_action_false_alarms_any_concrete_request_passes(sentence):
    assert found(with_action(sentence)) == []


@pytest.mark.parametrize("sentence", [
    "在 `environment_variables` 中注册该变量。",  # an instruction with no request word
    "建议。",  # a request with no object
    "对应的代码已经改过。",  # 对应 holds 应 but asks nothing
    "不需要修改。",
    "是否需要参与编译缓存的哈希？",
])
def test_action_that_asks_nothing_still_fails_and_says_which_forms_pass(sentence):
    text = with_action(sentence)
    assert found(text) == [("error", "FINDING-ACTION", ACTION_LINE)]
    [finding] = [item for item in run_checks(text) if item.code == "FINDING-ACTION"]
    assert finding.message == "行动 asks nothing concrete of the author"
    assert finding.fix == f"make it a request with an object: {fmt.ACTION_EXAMPLES}"
    assert all(form in finding.fix for form in ("建议作者", "请", "需要", "应当", "务必", "必须", "Please"))


# --- paths in other repositories ---------------------------------------------------------------

AITER = "ROCm/aiter@v0.1.19:aiter/ops/quant.py"


def saved_upstream(tmp_path, lines=200):
    root = tmp_path / "pr-41234-upstream"
    target = root / "ROCm" / "aiter@v0.1.19" / "aiter" / "ops" / "quant.py"
    target.parent.mkdir(parents=True)
    target.write_text("".join(f"# line {number}\n" for number in range(1, lines + 1)), encoding="utf-8")
    return root


@pytest.mark.parametrize("sentence", [
    f"`{AITER}:120` 中 per_token_quant 的 scale 下限与 vLLM 不同",
    f"{AITER} 中 per_token_quant 的 scale 下限与 vLLM 不同",
    "https://github.com/ROCm/aiter/blob/v0.1.19/aiter/ops/quant.py#L120 中 per_token_quant 的 scale 下限与 vLLM 不同",
])
def test_other_repository_citation_is_not_a_vllm_path(tmp_path, sentence):
    text = with_problem(sentence)
    assert found(text, upstream_dir=saved_upstream(tmp_path)) == []
    notes = found(text, upstream_dir=tmp_path / "nothing-saved")
    assert notes == [("note", "UPSTREAM-UNCHECKED", PROBLEM_LINE)]


def test_a_saved_copy_alone_does_not_make_a_missing_file_a_warning(tmp_path):
    """Without the tree at the ref, a file the pack did not save may still exist there: a note."""
    text = with_problem("`ROCm/aiter@v0.1.19:aiter/ops/quant_v2.py:12` 中 per_token_quant 的 scale 下限与 vLLM 不同")
    [note] = run_checks(text, pr_document=PR, vllm_tree=TREE, upstream_dir=saved_upstream(tmp_path))
    assert (note.level, note.code, note.line) == ("note", "UPSTREAM-UNCHECKED", PROBLEM_LINE)


def test_cited_upstream_line_must_be_within_the_file(tmp_path):
    text = with_problem(f"`{AITER}:120` 中 per_token_quant 的 scale 下限与 vLLM 不同")
    [warning] = run_checks(text, pr_document=PR, vllm_tree=TREE, upstream_dir=saved_upstream(tmp_path, lines=80))
    assert (warning.code, warning.message) == ("UPSTREAM-LINE", f"{AITER}:120: the file has 80 lines")


def test_bare_aiter_path_asks_for_the_explicit_form_instead_of_unknown_path():
    text = with_problem("`aiter/ops/quant.py` 中 per_token_quant 的 scale 下限与 vLLM 不同")
    [warning] = run_checks(text, pr_document=PR, vllm_tree=TREE)
    assert (warning.level, warning.code, warning.line) == ("warning", "BARE-UPSTREAM-PATH", PROBLEM_LINE)
    assert warning.message == "aiter/ops/quant.py is a path in ROCm/aiter, not in vLLM"
    assert warning.fix.startswith("cite it as ROCm/aiter@<ref>:aiter/ops/quant.py")


def test_cli_finds_the_saved_upstream_beside_the_report_and_counts_notes(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("VLLM_ROCM_REVIEW_CACHE", str(tmp_path / "cache"))
    saved_upstream(tmp_path)
    report = tmp_path / "pr-41234-review.md"
    report.write_text(with_problem(f"`{AITER}:120` 与 `ROCm/mori@v1.0:src/ops/dispatch.cpp` 中的 scale 处理不同"),
                      encoding="utf-8")
    assert check_report.main([str(report)]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        f"{report}:{PROBLEM_LINE}: note UPSTREAM-UNCHECKED: ROCm/mori@v1.0 citations are not checked: no cached tree "
        f"of that ref and no saved copy under {tmp_path / 'pr-41234-upstream'} — fix: nothing to fix; context_pack.py "
        "caches the trees of the refs vLLM pins"]
    assert captured.err.splitlines()[-1] == f"{report} passes: 0 error(s), 0 warning(s), 1 note(s)"
