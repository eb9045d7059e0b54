"""Pinned AITER code reached from changed functions, one level below it, and in later release tags.

A small AITER with release tags is served by the GitHub replica; the vLLM side is a base and a
head version of one file, whose added lines and changed function come from a real diff of the two.
"""

import difflib
import json
from pathlib import Path

import pytest
from github_env import isolate_github_env
from github_replica import GitHubReplica
from replica_git_contents import RefRepos

from vllm_rocm_review.context.pinned_upstream import build_pinned_upstream
from vllm_rocm_review.context.pinned_upstream import render_pinned_upstream
from vllm_rocm_review.core.surface import load_surface
from vllm_rocm_review.github.client import GitHubClient

DOCKERFILE = "docker/Dockerfile.rocm_base"
PIN = "v0.2.0"
LAYER = "vllm/layers/aiter_linear.py"

INIT = """\
from .ops.quant import *
from .ops.gemm import *
from .ops.attention import *
"""
QUANT = """\
def per_token_quant(out, x, eps: float = 1e-6):
    assert x.dim() == 2, "2-D input only"
    return out
"""
QUANT_LATER = QUANT + """

def fused_new_quant(out):
    return out


def unguarded_new_op(x):
    return x
"""
GEMM = """\
from ..jit.core import compile_ops


@compile_ops("module_gemm_a8w8", fc_name="gemm_a8w8")
def gemm_a8w8_ck(XQ, WQ, x_scale, w_scale, Out, splitK: int = 0): ...
"""
BUILD_CONFIG = json.dumps({"module_gemm_a8w8": {"srcs": [
    "f'{AITER_CSRC_DIR}/pybind/gemm_a8w8_pybind.cu'", "f'{AITER_CSRC_DIR}/ck_gemm_a8w8/gemm_a8w8.cu'"]}})
GEMM_CU = "// splitK must divide K\ntorch::Tensor gemm_a8w8(torch::Tensor XQ, int splitK) { TORCH_CHECK(splitK >= 0); }\n"
ATTENTION = """\
def paged_attention_v1(out, query, key_cache, partition_size: int = 256):
    assert partition_size % 256 == 0, "partition_size must be a multiple of 256"
    return out
"""
TRITON_INIT = """\
_BACKWARD_COMPAT_MAP = {
    "gemm_a16w16": "gemm.basic.gemm_a16w16",
}
"""
TRITON_WRAPPER = """\
from aiter.ops.triton._triton_kernels.gemm.basic.gemm_a16w16 import _gemm_a16w16_kernel, _get_config
from aiter.ops.triton.utils.logger import AiterTritonLogger

_LOGGER = AiterTritonLogger()


def gemm_a16w16(x, w, y=None):
    M, K = x.shape
    config = _get_config(M, w.shape[0], K)
    _gemm_a16w16_kernel[(1,)](x, w, y, **config)
    return y
"""
TRITON_KERNEL = """\
from aiter.ops.triton.utils.gemm_config_utils import get_gemm_config


def _gemm_a16w16_kernel(a, b, c, BLOCK_SIZE_M: int = 64):
    pass


def _get_config(M, N, K):
    return get_gemm_config("GEMM-A16W16", M, N, K)
"""
TUNED = '{"M_LEQ_16": {"BLOCK_SIZE_M": 16}, "any": {"BLOCK_SIZE_M": 64}}\n'


def aiter_files(quant):
    return {
        "aiter/__init__.py": INIT,
        "aiter/ops/quant.py": quant,
        "aiter/ops/gemm.py": GEMM,
        "aiter/ops/attention.py": ATTENTION,
        "aiter/jit/__init__.py": "",
        "aiter/jit/core.py": "def compile_ops(module, fc_name=None):\n    return lambda f: f\n",
        "aiter/jit/optCompilerConfig.json": BUILD_CONFIG,
        "csrc/pybind/gemm_a8w8_pybind.cu": "// binds gemm_a8w8\n",
        "csrc/ck_gemm_a8w8/gemm_a8w8.cu": GEMM_CU,
        "aiter/ops/triton/__init__.py": TRITON_INIT,
        "aiter/ops/triton/gemm/__init__.py": "",
        "aiter/ops/triton/gemm/basic/__init__.py": "",
        "aiter/ops/triton/gemm/basic/gemm_a16w16.py": TRITON_WRAPPER,
        "aiter/ops/triton/utils/logger.py": "class AiterTritonLogger:\n    pass\n",
        "aiter/ops/triton/_triton_kernels/gemm/basic/gemm_a16w16.py": TRITON_KERNEL,
        "aiter/ops/triton/configs/gemm/gfx942-GEMM-A16W16.json": TUNED,
        "aiter/ops/triton/configs/gemm/gfx950-GEMM-A16W16.json": TUNED,
        "aiter/ops/triton/configs/gemm/gfx950-GEMM-A16W16-N=128-K=256.json": TUNED,
    }


BASE_LAYER = """\
import aiter as rocm_aiter
from aiter.ops.triton.gemm_a16w16 import gemm_a16w16 as triton_gemm


def apply(x, w, scale, out):
    y = rocm_aiter.gemm_a8w8_ck(x, w, scale, scale, out)
    z = triton_gemm(x, w)
    return y


def untouched(x):
    return rocm_aiter.per_tensor_quant(x)
"""
HEAD_LAYER = """\
import torch
import aiter as rocm_aiter
from aiter.ops.triton.gemm_a16w16 import gemm_a16w16 as triton_gemm

try:
    from aiter import fused_new_quant
except ImportError:
    fused_new_quant = None


def apply(x, w, scale, out):
    y = rocm_aiter.gemm_a8w8_ck(x, w, scale, scale, out)
    z = triton_gemm(x, w, y=out)
    torch.ops.aiter.paged_attention_v1(out, x, w)
    if fused_new_quant is not None:
        fused_new_quant(out)
    rocm_aiter.unguarded_new_op(z)
    return rocm_aiter.per_token_quant(out, y)


def untouched(x):
    return rocm_aiter.per_tensor_quant(x)
"""


def added_lines(base, head):
    """The head line numbers a unified diff of the two texts adds, as the pack receives them."""
    lines = []
    head_lines = head.splitlines()
    for tag, _, _, start, end in difflib.SequenceMatcher(None, base.splitlines(), head_lines).get_opcodes():
        if tag in ("replace", "insert"):
            lines += [{"path": LAYER, "line": number + 1, "text": head_lines[number]} for number in range(start, end)]
    return lines


def dockerfile(aiter):
    return f'ARG AITER_BRANCH="{aiter}"\nARG MORI_BRANCH="v1.1.0"\n'


@pytest.fixture
def replica(httpserver, monkeypatch, tmp_path):
    isolate_github_env(monkeypatch, tmp_path)
    replica = GitHubReplica(httpserver)
    repos = RefRepos(replica)
    repos.put("ROCm/aiter", PIN, aiter_files(QUANT))
    repos.put("ROCm/aiter", "v0.2.0.post1", aiter_files(QUANT))
    repos.put("ROCm/aiter", "v0.2.1", aiter_files(QUANT_LATER.replace("\n\ndef unguarded_new_op(x):\n    return x\n", "")))
    repos.put("ROCm/aiter", "v0.3.0-rc1", aiter_files(QUANT))
    repos.put("ROCm/aiter", "v0.3.0", aiter_files(QUANT_LATER))
    return replica


def limits(**changes):
    return {**load_surface()["context_pack"]["upstream"], **changes}


def build(replica, tmp_path, **limit_changes):
    base = {DOCKERFILE: dockerfile(PIN), LAYER: BASE_LAYER}
    head = {DOCKERFILE: dockerfile(PIN), LAYER: HEAD_LAYER}
    apply_start = HEAD_LAYER.splitlines().index("def apply(x, w, scale, out):") + 1
    return build_pinned_upstream(
        read_base=base.get, read_head=head.get, added_lines=added_lines(BASE_LAYER, HEAD_LAYER),
        changed_ranges={LAYER: [(apply_start, apply_start + 7)]},
        client=GitHubClient(api_url=replica.api_url, cache_dir=tmp_path / "http"),
        cache_dir=tmp_path / "upstream", save_root=tmp_path / "out" / "pr-1-upstream", offline=False,
        limits=limits(**limit_changes))


def by_symbol(section):
    return {symbol["symbol"]: symbol for symbol in section["symbols"]}


def test_an_aliased_import_reaches_the_definition_through_the_package_reexport(replica, tmp_path):
    quant = by_symbol(build(replica, tmp_path))["aiter.per_token_quant"]
    assert (quant["status"], quant["change"], quant["path"], quant["line"]) == ("found", "added", "aiter/ops/quant.py", 1)
    assert quant["called_at"] == f"{LAYER}:18"
    assert quant["reexported_by"] == ["aiter/__init__.py:1"]
    assert quant["asserts"] == ["L2 assert x.dim() == 2, '2-D input only'"]


def test_a_torch_ops_aiter_call_maps_to_the_function_that_registers_the_op(replica, tmp_path):
    op = by_symbol(build(replica, tmp_path))["aiter.paged_attention_v1"]
    assert (op["status"], op["via"], op["change"]) == ("found", "torch.ops.aiter.paged_attention_v1", "added")
    assert (op["path"], op["line"]) == ("aiter/ops/attention.py", 1)
    assert op["asserts"] == ["L2 assert partition_size % 256 == 0, 'partition_size must be a multiple of 256'"]


def test_an_unchanged_call_inside_a_changed_function_is_found_and_its_compiled_source_saved(replica, tmp_path):
    section = build(replica, tmp_path)
    gemm = by_symbol(section)["aiter.gemm_a8w8_ck"]
    assert (gemm["status"], gemm["change"], gemm["called_at"]) == ("found", "unchanged call", f"{LAYER}:12")
    assert [(item["kind"], item["path"]) for item in gemm["depth"]] == [
        ("source", "ROCm/aiter@v0.2.0:csrc/ck_gemm_a8w8/gemm_a8w8.cu"),
        ("source", "ROCm/aiter@v0.2.0:csrc/pybind/gemm_a8w8_pybind.cu"),
    ]
    assert Path(gemm["depth"][0]["saved"]).read_text() == GEMM_CU
    # a call in a function the PR did not change is not the PR's business
    assert "aiter.per_tensor_quant" not in by_symbol(section)


def test_a_wrapper_leads_to_its_kernel_module_and_tuned_configs_through_a_compatibility_map(replica, tmp_path):
    gemm = by_symbol(build(replica, tmp_path))["aiter.ops.triton.gemm_a16w16.gemm_a16w16"]
    assert (gemm["status"], gemm["change"]) == ("found", "changed call")
    assert gemm["path"] == "aiter/ops/triton/gemm/basic/gemm_a16w16.py"
    assert [(item["kind"], item["path"].split(":", 1)[1]) for item in gemm["depth"]] == [
        ("kernel", "aiter/ops/triton/_triton_kernels/gemm/basic/gemm_a16w16.py"),
        ("config", "aiter/ops/triton/configs/gemm/gfx942-GEMM-A16W16.json"),
        ("config", "aiter/ops/triton/configs/gemm/gfx950-GEMM-A16W16.json"),
    ]
    assert all(Path(item["saved"]).is_file() for item in gemm["depth"])


def test_a_name_absent_at_the_pin_names_the_first_release_that_has_it(replica, tmp_path):
    section = build(replica, tmp_path)
    guarded, unguarded = by_symbol(section)["aiter.fused_new_quant"], by_symbol(section)["aiter.unguarded_new_op"]
    assert (guarded["status"], guarded["guarded"], guarded["first_tag"]["tag"]) == ("absent-at-pin", True, "v0.2.1")
    assert (guarded["first_tag"]["path"], guarded["first_tag"]["line"]) == ("aiter/ops/quant.py", 6)
    assert Path(guarded["first_tag"]["saved"]).parent.parent.parent.name == "aiter@v0.2.1"
    assert (unguarded["guarded"], unguarded["first_tag"]["tag"]) == (False, "v0.3.0")  # rc tags are no releases
    messages = {flag["message"] for flag in section["flags"] if flag["code"] == "UPSTREAM-SYMBOL-ABSENT"}
    assert messages == {
        "aiter.fused_new_quant is not defined at ROCm/aiter@v0.2.0: needs AITER ≥ v0.2.1; vLLM pins v0.2.0; "
        "the import is guarded: yes",
        "aiter.unguarded_new_op is not defined at ROCm/aiter@v0.2.0: needs AITER ≥ v0.3.0; vLLM pins v0.2.0; "
        "the import is guarded: no",
    }
    assert len(replica.seen(r"/repos/ROCm/aiter/git/matching-refs/tags")) == 1  # one list for both names


def test_the_digest_says_which_files_were_saved(replica, tmp_path):
    lines = render_pinned_upstream(build(replica, tmp_path))
    assert "pin aiter: ROCm/aiter@v0.2.0" in lines and "pin mori: ROCm/mori@v1.1.0" in lines
    saved = next(index for index, line in enumerate(lines) if line.startswith("files saved: "))
    assert lines[saved].startswith("files saved: 11 under ")
    pinned = lines[saved + 1].removeprefix("  ROCm/aiter@v0.2.0: ").split(", ")
    assert pinned[:4] == ["aiter/ops/gemm.py", "aiter/ops/triton/gemm/basic/gemm_a16w16.py", "aiter/ops/attention.py",
                          "aiter/ops/quant.py"]  # definitions first, in the order of the calls
    assert len(pinned) == 9  # 4 definitions, 1 kernel module, 2 C++ sources, 2 tuned configs
    assert lines[saved + 2:saved + 4] == ["  ROCm/aiter@v0.2.1: aiter/ops/quant.py", "  ROCm/aiter@v0.3.0: aiter/ops/quant.py"]
    assert "  below: kernel aiter/ops/triton/_triton_kernels/gemm/basic/gemm_a16w16.py, config " \
           "aiter/ops/triton/configs/gemm/gfx942-GEMM-A16W16.json, config " \
           "aiter/ops/triton/configs/gemm/gfx950-GEMM-A16W16.json" in lines


def test_the_file_cap_saves_the_first_files_and_lists_the_rest(replica, tmp_path):
    section = build(replica, tmp_path, max_files=2)
    assert len(section["saved_files"]) == 2
    assert len(section["cut_files"]) == 9
    assert "ROCm/aiter@v0.2.0:csrc/ck_gemm_a8w8/gemm_a8w8.cu" in section["cut_files"]
    assert all(symbol["status"] in ("found", "absent-at-pin") for symbol in section["symbols"])
    assert sum(1 for path in (tmp_path / "out").rglob("*") if path.is_file()) == 2
    assert any(line.startswith("  not saved (over the per-PR budget): 9: ") for line in render_pinned_upstream(section))


def test_nothing_saved_says_none(replica, tmp_path):
    empty = {DOCKERFILE: 'ARG AITER_BRANCH="v0.2.0"\n'}
    section = build_pinned_upstream(read_base=empty.get, read_head=empty.get, added_lines=[], client=None,
                                    cache_dir=tmp_path, save_root=tmp_path / "out", offline=True)
    lines = render_pinned_upstream(section)
    assert "pin mori: not pinned" in lines and "files saved: none" in lines


def test_a_second_run_costs_no_rate_limit_units(replica, tmp_path):
    first = build(replica, tmp_path)
    second = build(replica, tmp_path)
    assert first["units"] > 0 and second["units"] == 0
    assert second["symbols"] == first["symbols"]
