"""merge_findings.py on hand-written lens files; a scaffold rendered from the merge passes check_report.py."""

import copy
import json

import pytest

import check_report
import merge_findings
import triage_pr
from conftest import ROOT

from vllm_rocm_review.report.findings import FindingsError, merge

EXAMPLE_PR = ROOT / "examples" / "example-pr.json"
BACKEND = "vllm/v1/attention/backends/rocm_aiter_unified_attn.py"


def finding(lens, severity, title, locations, kind="正确性", evidence="已验证", **text):
    return {"severity": severity, "type": kind, "title": title, "locations": locations,
            "problem": text.get("problem", f"{title}，见 `{locations[0]}`。"),
            "impact": text.get("impact", "在 gfx942 上 batch size 256 的纯 decode 批次里结果错误。"),
            "action": text.get("action", "建议作者补上对应分支并加回归测试。"), "evidence": evidence, "lens": lens}


SYNC = finding("memory-graphs-streams", "⚠️", "decode 快路径在前向中做了主机同步", [f"{BACKEND}:238"],
               kind="性能", impact="cudagraph 捕获时 `.item()` 同步会失败；batch size 64 的 decode 每步多一次同步。")
SYNC_DISPATCH = finding("dispatch-and-defaults", "📝", "快路径里的 .item() 调用", [f"{BACKEND}:240"], kind="性能",
                        evidence="推测", problem="`.item()` 会同步。")
SOFTCAP = finding("kernel-contracts", "⚠️", "快路径丢掉了 logits_soft_cap", [f"{BACKEND}:242", f"{BACKEND}:251"],
                  impact="Gemma 模型开启 soft cap 时 decode 结果与 prefill 不一致。")
SOFTCAP_RED = finding("dispatch-and-defaults", "🔴", "logits_soft_cap 在 decode 快路径中被忽略", [f"{BACKEND}:247"],
                      evidence="推测", impact="Gemma-2 在 VLLM_ROCM_AITER_UNIFIED_ATTN_DECODE_FASTPATH=1 时输出错误。")
DEFAULT_ON = finding("dispatch-and-defaults", "⚠️", "新开关默认开启，没有回退说明", ["vllm/envs.py:1340"], kind="兼容性",
                     impact="升级后所有 gfx942 用户默认走新路径。")
TEST_TINY = finding("tests-and-ci", "📝", "测试只覆盖小形状", ["tests/kernels/attention/test_rocm_aiter_unified_attn.py:12"],
                    kind="测试", evidence="推测", impact="head_dim=128 以外的形状没有测试。",
                    action="建议 review 时追问是否在 MI300X 上跑过更大的批次。")
WRONG_LINE = finding("tests-and-ci", "⚠️", "测试容差过宽", ["tests/kernels/attention/test_rocm_aiter_unified_attn.py:30"],
                     kind="测试", impact="atol=1e-1 掩盖了 bf16 的误差。")


def lens_file(tmp_path, lens, findings, number=52318):
    path = tmp_path / f"pr-{number}-lens-{lens}.json"
    path.write_text(json.dumps({"pr": number, "lens": lens, "findings": findings}, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def lens_files(tmp_path):
    return [
        lens_file(tmp_path, "tests-and-ci", [TEST_TINY, WRONG_LINE]),
        lens_file(tmp_path, "kernel-contracts", [SOFTCAP]),
        lens_file(tmp_path, "dispatch-and-defaults", [SYNC_DISPATCH, SOFTCAP_RED, DEFAULT_ON]),
        lens_file(tmp_path, "memory-graphs-streams", [SYNC]),
    ]


VALIDATED = {"pr": 52318, "decisions": [
    {"lens": "dispatch-and-defaults", "index": 0, "action": "merge", "same_as": {"lens": "memory-graphs-streams", "index": 0},
     "reason": "同一次 .item() 调用"},
    {"lens": "dispatch-and-defaults", "index": 1, "action": "keep", "evidence": "已验证"},
    {"lens": "dispatch-and-defaults", "index": 2, "action": "downgrade", "severity": "📝",
     "reason": "开关在 docs 里已说明，可以用环境变量关闭"},
    {"lens": "kernel-contracts", "index": 0, "action": "merge", "same_as": {"lens": "dispatch-and-defaults", "index": 1},
     "reason": "同一处漏传的 logits_soft_cap"},
    {"lens": "memory-graphs-streams", "index": 0, "action": "keep"},
    {"lens": "tests-and-ci", "index": 1, "action": "drop", "reason": "容差与同文件其他 bf16 测试一致"},
]}


def write_validated(tmp_path, decisions=VALIDATED):
    path = tmp_path / "pr-52318-validated.json"
    path.write_text(json.dumps(decisions, ensure_ascii=False), encoding="utf-8")
    return path


def run_merge(argv, capsys):
    code = merge_findings.main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def merged_titles(document):
    return [(item["severity"], item["title"], item["lenses"]) for item in document["findings"]]


def test_duplicates_across_lenses_merge_keeping_the_higher_severity(lens_files, tmp_path, capsys):
    output = tmp_path / "pr-52318-findings.json"
    code, out, err = run_merge([*lens_files, "--validated", write_validated(tmp_path), "--output", output], capsys)
    assert code == 0 and out == ""
    assert err == "7 candidate(s) from 4 lens(es) -> 4 finding(s), 1 dropped; wrote " + str(output) + "\n"
    merged = json.loads(output.read_text(encoding="utf-8"))
    assert merged_titles(merged) == [
        ("🔴", "logits_soft_cap 在 decode 快路径中被忽略", ["dispatch-and-defaults", "kernel-contracts"]),
        ("⚠️", "decode 快路径在前向中做了主机同步", ["dispatch-and-defaults", "memory-graphs-streams"]),
        ("📝", "新开关默认开启，没有回退说明", ["dispatch-and-defaults"]),
        ("📝", "测试只覆盖小形状", ["tests-and-ci"]),
    ]
    red = merged["findings"][0]
    assert red["evidence"] == "已验证"  # the validator confirmed the 🔴 candidate
    assert red["locations"] == [f"{BACKEND}:247", f"{BACKEND}:242", f"{BACKEND}:251"]
    assert "lens" not in red and red["sources"] == [{"lens": "dispatch-and-defaults", "index": 1},
                                                     {"lens": "kernel-contracts", "index": 0}]
    sync = merged["findings"][1]
    assert sync["evidence"] == "已验证" and sync["problem"] == SYNC["problem"]  # the ⚠️ wins over the 📝 with its text
    assert merged["findings"][2]["validation"] == [{"lens": "dispatch-and-defaults", "index": 2, "action": "downgrade",
                                                    "reason": "开关在 docs 里已说明，可以用环境变量关闭"}]
    assert merged["dropped"] == [{"lens": "tests-and-ci", "index": 1, "severity": "⚠️", "title": "测试容差过宽",
                                  "reason": "容差与同文件其他 bf16 测试一致"}]
    assert merged["merge_candidates"] == []


def test_the_order_does_not_depend_on_the_order_of_the_files(lens_files, tmp_path, capsys):
    validated = write_validated(tmp_path)
    first = run_merge([*lens_files, "--validated", validated], capsys)[1]
    second = run_merge([*reversed(lens_files), "--validated", validated], capsys)[1]
    assert first == second and json.loads(first)["pr"] == 52318


def test_severity_may_be_repeated_on_any_decision(lens_files, tmp_path, capsys):
    decisions = [dict(decision) for decision in VALIDATED["decisions"]]
    decisions[1]["severity"] = "🔴"  # keep, equal to the candidate's
    decisions[5]["severity"] = "⚠️"  # drop, equal to the candidate's
    code, out, err = run_merge([*lens_files, "--validated", write_validated(tmp_path, {"pr": 52318, "decisions": decisions})],
                               capsys)
    assert code == 0, err
    assert merged_titles(json.loads(out))[0][0] == "🔴"


def test_findings_of_another_type_or_far_apart_stay_apart(tmp_path):
    near_other_type = finding("kernel-contracts", "⚠️", "另一类问题", [f"{BACKEND}:239"], kind="设计")
    far = finding("kernel-contracts", "⚠️", "远处的同类问题", [f"{BACKEND}:300"], kind="性能")
    documents = [("a.json", {"pr": 1, "lens": "kernel-contracts", "findings": [near_other_type, far]}),
                 ("b.json", {"pr": 1, "lens": "memory-graphs-streams", "findings": [SYNC]})]
    merged = merge(documents)
    assert [item["title"] for item in merged["findings"]] == ["另一类问题", "远处的同类问题", SYNC["title"]]


def test_the_validator_can_merge_findings_the_window_keeps_apart(tmp_path):
    far = finding("kernel-contracts", "⚠️", "同一个根因", ["vllm/_aiter_ops.py:900"], kind="性能")
    documents = [("a.json", {"pr": 1, "lens": "kernel-contracts", "findings": [far]}),
                 ("b.json", {"pr": 1, "lens": "memory-graphs-streams", "findings": [SYNC]})]
    validator = ("v.json", {"pr": 1, "decisions": [
        {"lens": "kernel-contracts", "index": 0, "action": "merge", "same_as": {"lens": "memory-graphs-streams", "index": 0},
         "reason": "同一次 .item() 调用"},
        {"lens": "memory-graphs-streams", "index": 0, "action": "keep"}]})
    merged = merge(documents, validator)
    assert len(merged["findings"]) == 1
    assert merged["findings"][0]["lenses"] == ["kernel-contracts", "memory-graphs-streams"]


@pytest.mark.parametrize("breakage, message", [
    (lambda d: d["findings"][0].update(severity="🔥"),
     "findings[0].severity: '🔥' is not one of 🔴, ⚠️, 📝"),
    (lambda d: d["findings"][0].update(type="风格"), "findings[0].type: '风格' is not one of"),
    (lambda d: d["findings"][0].pop("impact"), "findings[0].impact: missing"),
    (lambda d: d["findings"][0].update(locations=["vllm/envs.py: 12"]),
     "findings[0].locations[0]: 'vllm/envs.py: 12' is not \"path:line\""),
    (lambda d: d["findings"][0].update(action="修一下"), "findings[0].action: must be a concrete request to the author"),
    (lambda d: d["findings"][0].update(lens="other"), "findings[0].lens: 'other' differs from the file's lens"),
    (lambda d: d.pop("pr"), "pr: missing"),
])
def test_a_schema_error_is_one_line_naming_file_and_field(tmp_path, capsys, breakage, message):
    data = {"pr": 52318, "lens": "tests-and-ci", "findings": [copy.deepcopy(TEST_TINY)]}
    breakage(data)
    path = tmp_path / "pr-52318-lens-tests-and-ci.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    output = tmp_path / "out.json"
    code, out, err = run_merge([path, "--output", output], capsys)
    assert code == 1 and out == "" and not output.exists()
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: ") and message in lines[0]
    assert lines[0].endswith("; correct the file (see README, scripts/merge_findings.py) and re-run")


def test_every_error_gets_its_own_line(tmp_path, capsys):
    broken = [dict(TEST_TINY, severity="x"), dict(TEST_TINY, evidence="maybe")]
    path = lens_file(tmp_path, "tests-and-ci", broken)
    code, _, err = run_merge([path], capsys)
    assert code == 1
    assert [line.split(": ", 3)[2] for line in err.splitlines()] == ["findings[0].severity", "findings[1].evidence"]


@pytest.mark.parametrize("decisions, message", [
    ([], "no decision for lens 'dispatch-and-defaults' finding 1 (🔴"),
    ([{"lens": "tests-and-ci", "index": 9, "action": "keep"}], "decisions[0]: no candidate finding 9 in lens 'tests-and-ci'"),
    ([{"lens": "tests-and-ci", "index": 1, "action": "drop"}], "decisions[0].reason: a drop needs the reason"),
    ([{"lens": "kernel-contracts", "index": 0, "action": "downgrade", "severity": "🔴", "reason": "x"}],
     "decisions[0].severity: a downgrade of a ⚠️ finding needs a lower severity"),
    ([{"lens": "kernel-contracts", "index": 0, "action": "merge", "reason": "x"}],
     'decisions[0].same_as: names other candidates as {"lens": "<lens>", "index": <n>} or a list of them '
     "(candidates: dispatch-and-defaults 0-2, kernel-contracts 0-0, memory-graphs-streams 0-0, tests-and-ci 0-1)"),
    ([{"lens": "kernel-contracts", "index": 0, "action": "keep_apart", "apart_from": {"lens": "kernel-contracts"},
       "reason": "x"}], "decisions[0].apart_from: names other candidates as"),
    ([{"lens": "kernel-contracts", "index": 0, "action": "keep", "apart_from": []}],
     "decisions[0].apart_from: names other candidates as"),
    ([{"lens": "kernel-contracts", "index": 0, "action": "keep", "same_as": {"lens": "tests-and-ci", "index": 0}}],
     "decisions[0].same_as: not allowed with keep; it goes with merge"),
    ([{"lens": "tests-and-ci", "index": 1, "action": "drop", "reason": "x",
       "apart_from": {"lens": "tests-and-ci", "index": 0}}],
     "decisions[0].apart_from: not allowed with drop; it goes with keep_apart or keep or downgrade or merge"),
    ([{"lens": "kernel-contracts", "index": 0, "action": "maybe"}],
     "decisions[0].action: 'maybe' is not one of keep, downgrade, drop, merge, keep_apart"),
    ([{"lens": "kernel-contracts", "index": 0, "action": "keep", "severity": "📝"}],
     "decisions[0].severity: a keep keeps the candidate's severity ⚠️; give ⚠️ or omit it; "
     "to lower it use action downgrade with 📝"),
    ([{"lens": "tests-and-ci", "index": 0, "action": "downgrade", "severity": "📝", "reason": "x"}],
     "decisions[0].action: a 📝 finding cannot be downgraded; use keep or drop"),
    ([{"lens": "kernel-contracts", "index": 0, "action": "downgrade", "reason": "x"}],
     "decisions[0].severity: a downgrade of a ⚠️ finding needs a lower severity: 📝"),
    ([{"lens": "kernel-contracts", "index": 0, "action": "keep", "why": "x"}],
     "decisions[0].why: unknown field; a decision has lens, index, action, severity, evidence, reason, same_as, "
     "apart_from"),
    ([{"kernel-contracts": 0, "action": "keep"}],
     'decisions[0]: lens (a name) and index (a number) must say which candidate is decided, e.g. '
     '{"lens": "kernel-contracts", "index": 0, "action": "keep"}'),
])
def test_validator_errors_name_the_decision(lens_files, tmp_path, capsys, decisions, message):
    path = write_validated(tmp_path, {"pr": 52318, "decisions": decisions})
    code, _, err = run_merge([*lens_files, "--validated", path], capsys)
    assert code == 1 and any(line.startswith(f"error: {path}: ") and message in line for line in err.splitlines()), err


def test_a_red_finding_without_a_trigger_must_be_downgraded(tmp_path, capsys):
    vague = finding("kernel-contracts", "🔴", "结果可能不对", [f"{BACKEND}:242"], problem="参数没有传下去。",
                    impact="结果可能不对。")
    code, _, err = run_merge([lens_file(tmp_path, "kernel-contracts", [vague])], capsys)
    assert code == 1 and "a 🔴 must name its trigger" in err and "downgrade it to ⚠️" in err


def test_lens_files_about_different_prs_are_refused(tmp_path, capsys):
    first = lens_file(tmp_path, "tests-and-ci", [TEST_TINY])
    second = lens_file(tmp_path, "kernel-contracts", [SOFTCAP], number=1)
    code, _, err = run_merge([first, second], capsys)
    assert code == 1 and "different PRs (1, 52318)" in err


def test_a_missing_output_directory_fails_before_reading(tmp_path, capsys):
    code, _, err = run_merge([tmp_path / "absent.json", "--output", tmp_path / "no" / "out.json"], capsys)
    assert code == 1 and "directory" in err and "does not exist" in err


# --- proximity proposes, only the validator or a near-duplicate at one location merges ----------

MOE = "vllm/model_executor/layers/fused_moe/experts/rocm_aiter_moe.py"
HASH_ROUTING = finding("dispatch-and-defaults", "🔴", "hash 路由的 topk_ids 没有经过 expert_map", [f"{MOE}:120"],
                       problem="EP>1 时 hash 路由直接把全局专家号交给 AITER fused_moe。",
                       impact="DeepSeek-V3 在 EP=8 时选错专家，输出错误。")
EXPERT_MASK = finding("kernel-contracts", "🔴", "AITER fused_moe 调用漏了 expert_mask", [f"{MOE}:123"],
                      problem="新调用没有把 expert_mask 传给 fused_moe，本地专家以外的 token 也被计算。",
                      impact="EP=8 时每个 rank 都算全部专家，结果被重复累加。")
SOFTCAP_AGAIN = finding("dispatch-and-defaults", "⚠️", "decode 快路径丢掉了 logits_soft_cap", [f"{BACKEND}:242"],
                        problem="快路径调用内核时没有传 logits_soft_cap。")
SOFTCAP_SAME_PLACE = dict(SOFTCAP, title="decode 快路径没有传 logits_soft_cap",
                          problem="快路径调用内核时漏传了 logits_soft_cap。")


def documents(*lenses):
    return [(f"{lens}.json", {"pr": 1, "lens": lens, "findings": list(findings)}) for lens, findings in lenses]


def decisions(*items):
    return ("v.json", {"pr": 1, "decisions": list(items)})


def test_two_defects_on_nearby_lines_stay_two_and_are_proposed():
    merged = merge(documents(("dispatch-and-defaults", [HASH_ROUTING]), ("kernel-contracts", [EXPERT_MASK])))
    assert [item["title"] for item in merged["findings"]] == [HASH_ROUTING["title"], EXPERT_MASK["title"]]
    assert merged["merge_candidates"] == [{
        "candidates": [
            {"lens": "dispatch-and-defaults", "index": 0, "severity": "🔴", "title": HASH_ROUTING["title"],
             "locations": [f"{MOE}:120"]},
            {"lens": "kernel-contracts", "index": 0, "severity": "🔴", "title": EXPERT_MASK["title"],
             "locations": [f"{MOE}:123"]}],
        "type": "正确性", "decide": "merge or keep_apart"}]


def test_the_validator_merge_joins_a_proposed_pair():
    merged = merge(documents(("dispatch-and-defaults", [HASH_ROUTING]), ("kernel-contracts", [EXPERT_MASK])), decisions(
        {"lens": "dispatch-and-defaults", "index": 0, "action": "keep"},
        {"lens": "kernel-contracts", "index": 0, "action": "merge", "same_as": [{"lens": "dispatch-and-defaults", "index": 0}],
         "reason": "同一个根因：expert_map 没有用上"}))
    assert len(merged["findings"]) == 1 and merged["merge_candidates"] == []
    assert merged["findings"][0]["lenses"] == ["dispatch-and-defaults", "kernel-contracts"]


def test_keep_apart_holds_and_settles_the_proposal():
    merged = merge(documents(("dispatch-and-defaults", [HASH_ROUTING]), ("kernel-contracts", [EXPERT_MASK])), decisions(
        {"lens": "dispatch-and-defaults", "index": 0, "action": "keep_apart",
         "apart_from": {"lens": "kernel-contracts", "index": 0}, "reason": "路由与 kernel 参数是两个问题"},
        {"lens": "kernel-contracts", "index": 0, "action": "keep"}))
    assert len(merged["findings"]) == 2 and merged["merge_candidates"] == []
    assert merged["findings"][0]["validation"] == [{"lens": "dispatch-and-defaults", "index": 0, "action": "keep_apart",
                                                    "reason": "路由与 kernel 参数是两个问题"}]


def test_near_duplicates_at_one_location_merge_without_the_validator():
    merged = merge(documents(("dispatch-and-defaults", [SOFTCAP_AGAIN]), ("kernel-contracts", [SOFTCAP])))
    assert len(merged["findings"]) == 1 and merged["merge_candidates"] == []
    assert merged["findings"][0]["lenses"] == ["dispatch-and-defaults", "kernel-contracts"]


def test_a_downgrade_can_keep_apart_too_with_an_entry_copied_from_merge_candidates():
    docs = documents(("dispatch-and-defaults", [HASH_ROUTING]), ("kernel-contracts", [EXPERT_MASK]))
    proposal = merge(docs)["merge_candidates"][0]
    merged = merge(docs, decisions(
        {"lens": "dispatch-and-defaults", "index": 0, "action": "keep"},
        {"lens": "kernel-contracts", "index": 0, "action": "downgrade", "severity": "⚠️", "reason": "只在 EP>1 时",
         "apart_from": proposal["candidates"][0]}))
    assert [item["severity"] for item in merged["findings"]] == ["🔴", "⚠️"] and merged["merge_candidates"] == []


def test_keep_apart_also_holds_against_a_near_duplicate():
    merged = merge(documents(("dispatch-and-defaults", [SOFTCAP_AGAIN]), ("kernel-contracts", [SOFTCAP_SAME_PLACE])),
                   decisions({"lens": "kernel-contracts", "index": 0, "action": "keep_apart",
                              "apart_from": {"lens": "dispatch-and-defaults", "index": 0}, "reason": "两个不同的分支"},
                             {"lens": "dispatch-and-defaults", "index": 0, "action": "keep"}))
    assert len(merged["findings"]) == 2


def test_the_same_sentence_about_two_backends_at_one_line_stays_two():
    selector = "vllm/platforms/rocm.py:412"
    first = finding("dispatch-and-defaults", "⚠️", "ROCM_AITER_FA 后端没有处理 fp8 KV cache 的 k_scale", [selector])
    second = finding("kernel-contracts", "⚠️", "ROCM_ATTN 后端没有处理 fp8 KV cache 的 k_scale", [selector])
    merged = merge(documents(("dispatch-and-defaults", [first]), ("kernel-contracts", [second])))
    assert len(merged["findings"]) == 2 and len(merged["merge_candidates"]) == 1


@pytest.mark.parametrize("first, second, expected", [
    (SOFTCAP_AGAIN, SOFTCAP, True),
    (HASH_ROUTING, EXPERT_MASK, False),
    (finding("a", "⚠️", "TRITON_MLA 后端在 gfx950 上丢了 sink", ["x.py:1"]),
     finding("b", "⚠️", "AITER_MLA 后端在 gfx950 上丢了 sink", ["x.py:1"]), False),
])
def test_the_near_duplicate_test(first, second, expected):
    from vllm_rocm_review.core.lenses import bundle_lenses
    from vllm_rocm_review.report.findings import near_duplicates

    threshold = bundle_lenses().merge.same_text
    assert near_duplicates(first, second, threshold) is expected
    assert near_duplicates(second, first, threshold) is expected


def test_a_keep_apart_that_merges_through_a_third_candidate_is_an_error():
    third = dict(EXPERT_MASK, locations=[f"{MOE}:400"], lens="tests-and-ci", type="测试")
    with pytest.raises(FindingsError) as error:
        merge(documents(("dispatch-and-defaults", [HASH_ROUTING]), ("kernel-contracts", [EXPERT_MASK]),
                        ("tests-and-ci", [third])), decisions(
            {"lens": "dispatch-and-defaults", "index": 0, "action": "merge", "same_as": {"lens": "tests-and-ci", "index": 0},
             "reason": "x"},
            {"lens": "kernel-contracts", "index": 0, "action": "merge", "same_as": {"lens": "tests-and-ci", "index": 0},
             "reason": "y"},
            {"lens": "tests-and-ci", "index": 0, "action": "keep_apart",
             "apart_from": {"lens": "dispatch-and-defaults", "index": 0}, "reason": "z"}))
    assert "are kept apart, but merges join them" in error.value.problems[0]


def test_the_cli_reports_undecided_merge_candidates(tmp_path, capsys):
    paths = [lens_file(tmp_path, "dispatch-and-defaults", [dict(HASH_ROUTING)]),
             lens_file(tmp_path, "kernel-contracts", [dict(EXPERT_MASK)])]
    code, out, err = run_merge(paths, capsys)
    assert code == 0 and len(json.loads(out)["merge_candidates"]) == 1
    assert err.endswith("; 1 merge candidate(s) kept apart until the validator decides (merge or keep_apart)\n")


def test_the_validator_example_in_lens_common_is_accepted(lens_files, tmp_path, capsys):
    import re

    text = (ROOT / "references" / "review-lenses.md").read_text(encoding="utf-8")
    example = re.findall(r"```json\n(.*?)```", text, re.DOTALL)[1]
    path = tmp_path / "pr-52318-validated.json"
    path.write_text(example, encoding="utf-8")
    code, out, err = run_merge([*lens_files, "--validated", path], capsys)
    assert code == 0, err
    assert json.loads(out)["dropped"][0]["title"] == "测试容差过宽"


# --- section 3 rendered from the merge ----------------------------------------------


def filled(text):
    """The scaffold with every placeholder outside section 3 replaced, as the agent would."""
    lines = []
    for line in text.splitlines():
        if "TODO(agent)" in line:
            if "写动机" in line:
                line = "该 PR 为 ROCM_AITER_UNIFIED_ATTN 增加纯 decode 批次的快路径，减少 varlen 开销。它复用现有内核。"
            elif "按模块列改动" in line:
                line = "- `vllm/envs.py`：新增开关。\n- 后端：新增快路径。"
            elif "只摘有实质内容" in line or "没有评论" in line:
                line = "暂无实质性讨论。"
            elif "先写结论" in line:
                line = "🔴 BLOCK：快路径丢掉了 soft cap，必须修复后再合并。"
            else:
                continue
        lines.append(line)
    return "\n".join(lines) + "\n"


def test_scaffold_from_merged_findings_passes_the_checker(lens_files, tmp_path, capsys):
    merged = tmp_path / "pr-52318-findings.json"
    assert run_merge([*lens_files, "--validated", write_validated(tmp_path), "--output", merged], capsys)[0] == 0
    report = tmp_path / "pr-52318-review.md"
    assert triage_pr.main([str(EXAMPLE_PR), "--scaffold", str(report), "--findings", str(merged)]) == 0
    capsys.readouterr()
    text = report.read_text(encoding="utf-8")
    section = text[text.index("## 3. "):text.index("## 4. ")]
    assert "TODO(agent)" not in section
    assert "| 🔴 必须修复 | 1 |" in section and "| 📝 建议/备注 | 2 |" in section
    assert f"**🔴【正确性】logits_soft_cap 在 decode 快路径中被忽略** `[已验证]`" in section
    assert f"见 `{BACKEND}:247`。位置：`{BACKEND}:242`、`{BACKEND}:251`。" in section
    # Only the other sections' placeholders fail the unfilled scaffold.
    assert check_report.main([str(report), "--pr-json", str(EXAMPLE_PR), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert {item["code"] for item in result["violations"] if item["level"] == "error"} == {"PLACEHOLDER"}
    section_start = text[:text.index("## 3. ")].count("\n") + 1
    section_end = text[:text.index("## 4. ")].count("\n") + 1
    assert not [item for item in result["violations"] if section_start <= item["line"] < section_end]
    report.write_text(filled(text), encoding="utf-8")
    assert check_report.main([str(report), "--pr-json", str(EXAMPLE_PR)]) == 0, capsys.readouterr()


def test_section_3_is_compact_two_sentences_per_bullet_and_three_locations():
    from vllm_rocm_review.report.findings_render import render_finding

    long = dict(SOFTCAP, severity="⚠️", problem="第一句说明问题。第二句给出细节。第三句是冗长的推理过程，不该进报告。",
                impact="只影响 Gemma-2。其余模型不受影响。再多一句。", action="作者应当补上参数。并加测试。还有第三句。",
                locations=[f"{BACKEND}:{line}" for line in (242, 251, 260, 270, 280)])
    lines = render_finding({**long, "lenses": ["kernel-contracts"]})
    assert lines[1] == (f"- **问题**: 第一句说明问题。第二句给出细节。位置：`{BACKEND}:242`、`{BACKEND}:251`、`{BACKEND}:260` 等 5 处。")
    assert lines[2] == "- **影响**: 只影响 Gemma-2。其余模型不受影响。"
    assert lines[3] == "- **行动**: 作者应当补上参数。并加测试。"


def test_a_red_finding_keeps_the_sentence_that_names_its_trigger():
    from vllm_rocm_review.report.findings_render import render_finding

    red = dict(SOFTCAP, severity="🔴", title="快路径丢掉了参数", problem="参数没有传下去。内核用默认值。在 gfx942 上 batch size 256 时出错。",
               impact="结果错误。输出不可用。完全不可用。")
    lines = render_finding(red)
    assert "在 gfx942 上 batch size 256 时出错。" in lines[1] and lines[2] == "- **影响**: 结果错误。输出不可用。完全不可用。"


def test_scaffold_reminds_of_undecided_merge_candidates_and_still_passes(tmp_path, capsys):
    paths = [lens_file(tmp_path, "dispatch-and-defaults", [dict(HASH_ROUTING, lens="dispatch-and-defaults")]),
             lens_file(tmp_path, "kernel-contracts", [dict(EXPERT_MASK)])]
    validated = tmp_path / "v.json"
    validated.write_text(json.dumps({"pr": 52318, "decisions": [
        {"lens": "dispatch-and-defaults", "index": 0, "action": "keep"},
        {"lens": "kernel-contracts", "index": 0, "action": "keep"}]}), encoding="utf-8")
    merged = tmp_path / "pr-52318-findings.json"
    assert run_merge([*paths, "--validated", validated, "--output", merged], capsys)[0] == 0
    report = tmp_path / "pr-52318-review.md"
    assert triage_pr.main([str(EXAMPLE_PR), "--scaffold", str(report), "--findings", str(merged)]) == 0
    capsys.readouterr()
    text = report.read_text(encoding="utf-8")
    section = text[text.index("## 3. "):text.index("## 4. ")]
    assert (f"<!-- 位置相近、可能重复的两条意见：「{HASH_ROUTING['title']}」（dispatch-and-defaults #0） 与 "
            f"「{EXPERT_MASK['title']}」（kernel-contracts #0）。是同一个问题就合并成一条，否则保留两条。 -->") in section
    report.write_text(filled(text), encoding="utf-8")
    assert check_report.main([str(report), "--pr-json", str(EXAMPLE_PR)]) == 0, capsys.readouterr()


def test_scaffold_from_empty_findings_leaves_section_3_out(tmp_path, capsys):
    merged = tmp_path / "pr-52318-findings.json"
    merged.write_text(json.dumps({"pr": 52318, "findings": []}), encoding="utf-8")
    report = tmp_path / "report.md"
    assert triage_pr.main([str(EXAMPLE_PR), "--scaffold", str(report), "--findings", str(merged)]) == 0
    assert "## 3. " not in report.read_text(encoding="utf-8")


@pytest.mark.parametrize("content, message", [
    ({"pr": 1, "findings": []}, "is about PR #1, not #52318"),
    ({"pr": 52318, "findings": [dict(TEST_TINY)]}, "findings[0].lenses: missing"),
    ("not json", "not JSON"),
])
def test_a_bad_findings_file_is_one_error_line(tmp_path, capsys, content, message):
    merged = tmp_path / "findings.json"
    merged.write_text(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False), encoding="utf-8")
    report = tmp_path / "report.md"
    assert triage_pr.main([str(EXAMPLE_PR), "--scaffold", str(report), "--findings", str(merged)]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message in err and not report.exists()


def test_findings_without_scaffold_is_a_usage_error(tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        triage_pr.main([str(EXAMPLE_PR), "--findings", str(tmp_path / "f.json")])
    assert exit_info.value.code == 2


def test_merge_raises_with_every_problem():
    with pytest.raises(FindingsError) as error:
        merge([("a.json", {"pr": 1, "lens": "x", "findings": [{}]})])
    assert len(error.value.problems) == len(("severity", "type", "title", "locations", "problem", "impact", "action",
                                              "evidence", "lens"))
