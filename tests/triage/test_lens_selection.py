"""Lens selection: none for quick reviews, 2–4 for deep ones, the cap, the digest and the corpus golden."""

import json

import pytest

import triage_pr
from bless import LENS_SELECTION, render_lens_selection
from conftest import shared_path
from triage_support import file_diff, make_document, run_triage
from vllm_cases import case_ids

from vllm_rocm_review.core.lenses import bundle_lenses
from vllm_rocm_review.triage.digest import render_digest
from vllm_rocm_review.triage.lenses import select_lenses

TIER1 = "vllm/v1/attention/backends/rocm_aiter_fa.py"
TIER1_DIFF = file_diff(TIER1, added=["        output = output.view(num_tokens, -1)"],
                       context=["    def forward(self, query, key, value):"])


def chosen(result):
    return [lens["id"] for lens in result["lenses"]["chosen"]]


def test_corpus_lens_selection_equals_the_golden_table():
    shared_path("upstream", "mori-structure.json")
    numbers = case_ids()
    assert LENS_SELECTION.exists(), "run python3 tests/bless.py"
    assert render_lens_selection(numbers) == LENS_SELECTION.read_text(encoding="utf-8"), \
        "lens selection changed: run python3 tests/bless.py and review git diff tests/golden/"


def test_corpus_deep_reviews_get_two_to_four_lenses_and_quick_ones_none():
    shared_path("vllm-cases")
    for number in case_ids():
        from bless import triage_case
        result = triage_case(number)
        count = len(result["lenses"]["chosen"])
        if result["reading_plan"]["depth"] == "deep":
            assert 2 <= count <= 4, number
        else:
            assert count == 0 and result["lenses"]["extra_cost_tokens"] == 0, number


def test_a_quick_review_runs_no_lens():
    result = run_triage(file_diff("vllm/platforms/rocm.py", added=["    x = 1"]), title="[ROCm] tidy")
    assert result["reading_plan"]["depth"] == "quick"
    assert result["lenses"]["chosen"] == [] and result["lenses"]["cut"] == []
    assert "## Lenses: none (quick review: one pass, no lenses)" in render_digest(result)


def test_a_tier1_change_gets_kernel_contracts_first_then_the_next_best():
    result = run_triage(TIER1_DIFF, title="[ROCm] reshape the output")
    assert result["reading_plan"]["depth"] == "deep"
    lenses = result["lenses"]
    assert chosen(result) == ["kernel-contracts", "host-overhead-and-hot-path", "dispatch-and-defaults"]
    first = lenses["chosen"][0]
    assert first["why"] == ["tier 1 file", "type aiter-op"]
    assert lenses["chosen"][1]["why"] == ["tier 1 file", "type attention"]
    assert lenses["chosen"][2]["why"] == ["family untouched-siblings"]
    assert first["output"] == "outputs/pr-4242-lens-kernel-contracts.json"
    assert first["text"] == "references/review-lenses.md#lens-kernel-contracts"
    assert first["starts_from"] == "outputs/pr-4242-code.md" and first["tool_call_budget"] == 30
    assert lenses["extra_cost_tokens"] == sum(lens["cost_tokens"] for lens in lenses["chosen"]) + \
        bundle_lenses().validator_cost_tokens


@pytest.mark.parametrize("cap, expected", [(0, 0), (1, 1), (2, 2), (9, None)])
def test_the_cap_limits_the_lenses(cap, expected):
    result = run_triage(TIER1_DIFF, title="[ROCm] reshape the output")
    capped = select_lenses(bundle_lenses(), result, cap)
    uncapped = len(result["lenses"]["chosen"])
    assert len(capped["chosen"]) == (uncapped if expected is None else min(expected, uncapped))
    assert capped["cap"] == min(cap, bundle_lenses().max_lenses)
    if cap == 0:
        assert capped["extra_cost_tokens"] == 0


def test_digest_names_each_lens_why_and_the_extra_cost(tmp_path, capsys):
    path = tmp_path / "pr.json"
    path.write_text(json.dumps(make_document(TIER1_DIFF, title="[ROCm] reshape the output")), encoding="utf-8")
    assert triage_pr.main([str(path), "--lenses", "1"]) == 0
    digest = capsys.readouterr().out
    section = digest[digest.index("## Lenses"):digest.index("## Mechanical checks")]
    assert section.splitlines()[0] == (
        "## Lenses: 1, expected extra cost ~120k tokens (validator ~40k included); each starts from "
        "outputs/pr-4242-code.md and writes outputs/pr-4242-lens-<lens>.json; cut by the cap of 1: "
        "host-overhead-and-hot-path, dispatch-and-defaults")
    assert section.splitlines()[1] == "kernel-contracts (~80k tokens, budget 30 tool calls): tier 1 file; type aiter-op"
    assert section.splitlines()[2] == "  asks: " + bundle_lenses().by_id("kernel-contracts").question
    assert triage_pr.main([str(path), "--json", "--lenses", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["lenses"]["chosen"] == []


def test_the_performance_lens_comes_with_forward_path_evidence_not_with_a_quiet_deep_pr():
    forward = file_diff("vllm/model_executor/layers/quantization/quark/quark_moe.py",
                        added=["        w = layer.w13_weight.contiguous()"],
                        context=["    def apply(self, layer, x, topk_weights, topk_ids):"])
    result = run_triage(forward, title="[ROCm] quark moe apply")
    assert result["reading_plan"]["depth"] == "deep"
    perf = next(lens for lens in result["lenses"]["chosen"] if lens["id"] == "host-overhead-and-hot-path")
    assert "family hot-path-copy" in perf["why"] and "type moe-quant" in perf["why"]
    mori = run_triage(file_diff("vllm/distributed/device_communicators/mori_all2all.py", added=["    x = 1"]),
                      title="[ROCm] mori all2all")
    assert mori["reading_plan"]["depth"] == "deep"
    assert "host-overhead-and-hot-path" not in chosen(mori)


def test_the_corpus_golden_gives_the_performance_lens_to_forward_path_prs():
    shared_path("vllm-cases")
    golden = LENS_SELECTION.read_text(encoding="utf-8")
    rows = {line.split(" | ")[0].lstrip("| #"): line for line in golden.splitlines() if line.startswith("| #")}
    for number in ("25507", "33443", "33773", "39125", "41436", "43660", "51011"):
        assert "host-overhead-and-hot-path (" in rows[number], number
    for number in ("29304", "41753", "51877"):
        assert "host-overhead-and-hot-path" not in rows[number], number


@pytest.mark.parametrize("value", ["-1", "two", ""])
def test_a_bad_lens_cap_is_a_usage_error(tmp_path, value, capsys):
    path = tmp_path / "pr.json"
    path.write_text(json.dumps(make_document(TIER1_DIFF)), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        triage_pr.main([str(path), "--lenses", value])
    assert exit_info.value.code == 2
    assert "--lenses: expected a whole number of lenses" in capsys.readouterr().err
