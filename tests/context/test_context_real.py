"""The pack on real merged ROCm PRs (../shared/vllm-cases) over a full vLLM clone.

Needs VLLM_ROCM_REVIEW_TEST_CLONE: a clone (bare is fine) that holds each case's merge commit.
The case's merge commit is the PR head and its first parent the base.
"""

import os

import pytest

from bless import CONTEXT_CASES
from bless import context_golden_path
from bless import render_context_golden
from vllm_cases import checkout_document
from vllm_rocm_review.context.code_map import CodeMap
from vllm_rocm_review.context.digest import render_digest
from vllm_rocm_review.context.pack import build_pack
from vllm_rocm_review.context.pack import offline_upstream
from vllm_rocm_review.core.surface import load_surface

CLONE = os.environ.get("VLLM_ROCM_REVIEW_TEST_CLONE")
SURFACE = load_surface()
pytestmark = pytest.mark.skipif(not CLONE, reason="VLLM_ROCM_REVIEW_TEST_CLONE is unset: these tests need a full vLLM clone")


def case_pack(number):
    document = checkout_document(number, CLONE)
    if document is None:
        pytest.skip(f"the clone does not hold case {number}'s merge commit and its parent")
    return build_pack(document, None, SURFACE["context_pack"], SURFACE, offline_upstream(f"outputs/pr-{number}-upstream"))


@pytest.fixture(scope="module")
def packs():
    return {}


def cached(packs, number):
    if number not in packs:
        packs[number] = case_pack(number)
    return packs[number]


def test_43660_rocm_attn_keeps_the_old_rope_cache_update(packs):
    pack = cached(packs, 43660)
    messages = [f["message"] for f in pack["flags"] if f["code"] == "TWIN-DIVERGES"]
    assert any(m.startswith("do_rope_and_kv_cache_update") and "rocm_attn.py:" in m for m in messages)


def test_33443_new_fusion_test_runs_on_amd(packs):
    coverage = cached(packs, 33443)["ci_coverage"]
    assert any("PyTorch Compilation Unit Tests" in step for step in coverage["tests/compile/passes/test_rope_kvcache_fusion.py"])


def test_39125_accept_output_buffer_sweep_is_complete(packs):
    pack = cached(packs, 39125)
    twin = next(t for t in pack["twins"] if t["name"] == "accept_output_buffer")
    assert len(twin["changed_in"]) > 5 and twin["unchanged_twins"] == []
    assert pack["callers"]["accept_output_buffer"]["total"] == 0


@pytest.mark.parametrize("number", CONTEXT_CASES)
def test_digest_fits_and_matches_its_golden(packs, number):
    digest = render_digest(cached(packs, number), f"pr-{number}-context.json")
    assert len(digest.splitlines()) <= 150
    assert digest == render_context_golden(number, CLONE)
    assert digest == context_golden_path(number).read_text(encoding="utf-8"), \
        f"context digest of {number} changed; run VLLM_ROCM_REVIEW_TEST_CLONE=... python3 tests/bless.py and review the diff"


def test_33443_code_map_puts_the_upstream_call_in_the_new_wrapper_and_stays_in_its_cap():
    document = checkout_document(33443, CLONE)
    if document is None:
        pytest.skip("the clone does not hold case 33443's merge commit and its parent")
    code_map = CodeMap("outputs/pr-33443-code.md", 2500)
    pack = build_pack(document, None, SURFACE["context_pack"], SURFACE, offline_upstream("outputs/pr-33443-upstream"),
                      code_map)
    text = code_map.text
    wrapper = text[text.index("### rocm_aiter_ops.triton_rope_and_cache [function, added]"):]
    wrapper = wrapper[:wrapper.index("\n### ")]
    assert "upstream aiter.ops.triton.fused_kv_cache.fused_qk_rope_reshape_and_cache ← vllm/_aiter_ops.py:" in wrapper
    outline = text[text.index("### rocm_aiter_ops [class, modified]"):]
    assert outline.split("\n")[1].startswith("class outline, base→head diff")
    assert len(text.splitlines()) <= 2500 and pack["code_map"]["cut"]
