"""Review depth: Tier-1 files, the quantized-MoE method files and a large product-code change make it deep."""

import pytest

from bless import triage_case
from conftest import shared_path
from triage_support import CATALOG, CONFIG, file_diff, make_document, run_triage

from vllm_rocm_review.triage.triage import triage

QUARK_MOE = "vllm/model_executor/layers/quantization/quark/quark_moe.py"
FP8_ORACLE = "vllm/model_executor/layers/fused_moe/oracle/fp8.py"
PLAIN_ROCM = "vllm/model_executor/layers/rocm_helpers_for_depth.py"
TITLE = "[ROCm] rework the MoE weights"


def depth(result):
    return result["reading_plan"]["depth"], result["reading_plan"]["deep_reasons"]


def lines(count, text="    value_{} = compute({})"):
    return [text.format(index, index) for index in range(count)]


@pytest.mark.parametrize("path", [QUARK_MOE, FP8_ORACLE, "vllm/model_executor/layers/quantization/fp8.py",
                                  "vllm/model_executor/layers/quantization/mxfp4.py",
                                  "vllm/model_executor/layers/fused_moe/oracle/mxfp4.py"])
def test_a_small_change_to_a_quantized_moe_method_file_is_deep(path):
    kind, reasons = depth(run_triage(file_diff(path, added=["        layer.w13_weight_scale = scale"]), title=TITLE))
    assert kind == "deep"
    assert reasons == [f"quantized-MoE method or oracle file(s): {path}"]


def test_an_unquantized_oracle_alone_stays_quick():
    diff = file_diff("vllm/model_executor/layers/fused_moe/oracle/unquantized.py", added=["    x = 1"])
    assert depth(run_triage(diff, title=TITLE)) == ("quick", [])


def test_product_lines_over_the_threshold_make_it_deep_and_at_the_threshold_do_not():
    threshold = CONFIG.checks["deep_review"]["product_lines"]
    assert threshold == 400
    at = run_triage(file_diff(PLAIN_ROCM, added=lines(threshold), new=True), title=TITLE)
    assert depth(at) == ("quick", [])
    over = run_triage(file_diff(PLAIN_ROCM, added=lines(threshold + 1), new=True), title=TITLE)
    assert depth(over) == ("deep", [f"{threshold + 1} changed product-code lines (over {threshold})"])


def test_tests_and_docs_do_not_count_towards_the_size():
    diff = (file_diff(PLAIN_ROCM, added=lines(100), new=True)
            + file_diff("tests/rocm/test_depth_helpers.py", added=lines(500), new=True)
            + file_diff("docs/features/rocm_depth.md", added=lines(500, "line {} {}"), new=True))
    assert depth(run_triage(diff, title=TITLE)) == ("quick", [])


def test_on_a_partial_pr_only_the_files_rocm_runs_count():
    cuda_only = "".join(file_diff(f"vllm/model_executor/layers/cuda_only_{name}.py", added=lines(300), new=True)
                        for name in ("gemm", "norm"))
    rocm = file_diff(PLAIN_ROCM, added=lines(50), new=True)
    result = run_triage(cuda_only + rocm, title="Add helpers")
    assert result["relevance"] == "partial" and depth(result) == ("quick", [])


def test_github_counts_cover_a_file_without_a_patch():
    """A file too large for GitHub's patch still counts with its additions and deletions."""
    document = make_document(file_diff(PLAIN_ROCM, added=lines(10), new=True), title=TITLE)
    document["files"][0]["additions"] = 900
    assert depth(triage(document, CONFIG, CATALOG)) == ("deep", ["900 changed product-code lines (over 400)"])


def test_no_rocm_relevance_is_never_deep():
    diff = file_diff("vllm/model_executor/layers/cuda_only_helpers.py", added=lines(900), new=True)
    result = run_triage(diff, title="Speed up CUDA helpers")
    assert result["relevance"] == "none" and depth(result) == ("quick", [])


def test_real_case_27883_moves_to_deep_on_its_hipified_kernel_size():
    """#27883 (fused blockwise quant RMS norm): ROCm builds its csrc sources; 627 in-scope product lines."""
    shared_path("vllm-cases")
    kind, reasons = depth(triage_case(27883))
    assert kind == "deep" and reasons == ["627 changed product-code lines (over 400)"]


def test_real_case_41436_is_deep_on_its_quark_moe_file_as_well():
    shared_path("vllm-cases")
    kind, reasons = depth(triage_case(41436))
    assert kind == "deep"
    assert ("quantized-MoE method or oracle file(s): vllm/model_executor/layers/fused_moe/oracle/mxfp4.py, "
            f"{QUARK_MOE}") in reasons


@pytest.mark.parametrize("edit, message", [
    ({"product_lines": 0}, "checks.deep_review.product_lines must be a positive whole number of lines, not 0"),
    ({"product_lines": "400"}, "checks.deep_review.product_lines must be a positive whole number of lines, not '400'"),
    ({"paths": [{"path": QUARK_MOE}]}, "checks.deep_review.paths[0] needs path and why"),
])
def test_a_bad_deep_review_setting_is_named(edit, message):
    import copy

    from vllm_rocm_review.core.surface import load_surface
    from vllm_rocm_review.triage.config import validate_triage_sections

    data = copy.deepcopy(load_surface())
    data["checks"]["deep_review"].update(edit)
    assert message in validate_triage_sections(data)
