"""Pinned AITER/mori code against a replica of GitHub's trees and contents APIs (no network)."""

import json
import os
import subprocess
from pathlib import Path

import pytest
from github_env import isolate_github_env
from github_replica import GitHubReplica
from replica_git_contents import RefRepos
from vllm_cases import load_case

from vllm_rocm_review.context.pinned_upstream import build_pinned_upstream
from vllm_rocm_review.context.pinned_upstream import fetch_upstream_file
from vllm_rocm_review.context.pinned_upstream import render_pinned_upstream
from vllm_rocm_review.core.diff_parse import parse_diff
from vllm_rocm_review.github.client import GitHubClient
from vllm_rocm_review.github.client import NotFound

DOCKERFILE = "docker/Dockerfile.rocm_base"
CK_COMMIT = "c" * 40


def dockerfile(aiter, mori):
    return (
        'ARG BASE_IMAGE=rocm/dev-ubuntu-22.04:7.2.3-complete\n'
        f'ARG AITER_BRANCH="{aiter}"\n'
        'ARG AITER_REPO="https://github.com/ROCm/aiter.git"\n'
        f'ARG MORI_BRANCH="{mori}"  # pinned for the EP kernels\n'
        'ARG MORI_REPO="https://github.com/ROCm/mori.git"\n'
    )


AITER_INIT = """\
from .ops.quant import *
from .ops.gemm_op_a8w8 import *
from .fused_moe import fused_moe as fused_moe
"""

AITER_QUANT = """\
import torch

FP8_MAX_FNUZ = 240.0
BLOCK = 128


def dynamic_per_tensor_quant(out, input, scale, eps: float = 1e-10) -> None:
    assert input.is_contiguous(), "input must be contiguous"
    if out.dtype not in (torch.float8_e4m3fnuz, torch.float8_e4m3fn):
        raise ValueError(f"unsupported output dtype {out.dtype}")
    fp8_max = FP8_MAX_FNUZ if out.dtype == torch.float8_e4m3fnuz else 448.0
    scale.fill_(input.abs().max() / fp8_max)


def static_per_tensor_quant(out, input, scale):
    out.copy_(input / scale)
"""

AITER_GEMM = """\
import torch


def gemm_a8w8_CK(XQ, WQ, x_scale, w_scale, bias=None, dtype=torch.bfloat16, splitK: int = 0):
    assert dtype in (torch.bfloat16, torch.float16), f"gemm_a8w8_CK: dtype {dtype} is not supported"
    return XQ
"""

AITER_FUSED_MOE = """\
def fused_moe(hidden_states, w1, w2, topk_weight, topk_ids, expert_mask=None, min_seqlen_q: int = 0):
    if min_seqlen_q < 0:
        raise ValueError("min_seqlen_q must be >= 0")
    return hidden_states
"""

GITMODULES = """\
[submodule "3rdparty/composable_kernel"]
\tpath = 3rdparty/composable_kernel
\turl = https://github.com/ROCm/composable_kernel.git
"""

CK_KERNEL = "// min_seqlen_q below this many rows takes the split path\nconstexpr int kMinSeqlenQ = 64;\n"

# A miniature vllm/_aiter_ops.py with the real structure: a static method calls a registered
# custom op, whose impl imports the AITER function in its body.
AITER_OPS = """\
import torch

from vllm.utils.torch_utils import direct_register_custom_op


def _rocm_aiter_per_tensor_quant_impl(out, x, scale, is_dynamic):
    from aiter.ops.quant import dynamic_per_tensor_quant, static_per_tensor_quant

    if is_dynamic:
        dynamic_per_tensor_quant(out, x, scale)
    else:
        static_per_tensor_quant(out, x, scale)


def _rocm_aiter_per_tensor_quant_fake(out, x, scale, is_dynamic):
    pass


class rocm_aiter_ops:
    @staticmethod
    def register_ops_once() -> None:
        direct_register_custom_op(
            op_name="rocm_aiter_per_tensor_quant",
            op_func=_rocm_aiter_per_tensor_quant_impl,
            mutates_args=["out", "scale"],
            fake_impl=_rocm_aiter_per_tensor_quant_fake,
        )

    @staticmethod
    def per_tensor_quant(out, x, scale, is_dynamic):
        torch.ops.vllm.rocm_aiter_per_tensor_quant(out, x, scale, is_dynamic)
"""

# The PR's changed file at head: lines 6-10 are the added ones.
LAYER = """\
import aiter
import mori
from aiter.ops.quant import brand_new_quant
from vllm._aiter_ops import rocm_aiter_ops

def apply(out, x, scale, a, b):
    rocm_aiter_ops.per_tensor_quant(out, x, scale, True)
    y = aiter.gemm_a8w8_CK(a, b, x, scale)
    brand_new_quant(y)
    mori.shmem.shmem_torch_process_group_init("default")
"""
LAYER_PATH = "vllm/model_executor/layers/quantization/rocm_layer.py"
ADDED = [
    {"path": LAYER_PATH, "line": number, "text": LAYER.splitlines()[number - 1]} for number in range(6, 11)
] + [{"path": DOCKERFILE, "line": 2, "text": 'ARG AITER_BRANCH="v0.1.19"'}]


@pytest.fixture
def env(monkeypatch, tmp_path):
    return isolate_github_env(monkeypatch, tmp_path)


@pytest.fixture
def replica(httpserver):
    replica = GitHubReplica(httpserver)
    repos = RefRepos(replica)
    repos.put("ROCm/aiter", "v0.1.19", {
        "aiter/__init__.py": AITER_INIT,
        "aiter/ops/quant.py": AITER_QUANT,
        "aiter/ops/gemm_op_a8w8.py": AITER_GEMM,
        "aiter/fused_moe.py": AITER_FUSED_MOE,
        ".gitmodules": GITMODULES,
        "README.md": "AITER\n",
    }, submodules={"3rdparty/composable_kernel": CK_COMMIT})
    repos.put("ROCm/composable_kernel", CK_COMMIT, {"include/ck/fmha_fwd.hpp": CK_KERNEL})
    repos.put("ROCm/mori", "v1.1.0", {
        "python/mori/__init__.py": "from . import shmem\n",
        "python/mori/shmem/__init__.py": "from .api import *\n",
        "python/mori/shmem/api.py": "def shmem_torch_process_group_init(group_name: str) -> int:\n    return 0\n",
        "python/mori/io/__init__.py": "from .engine import MemoryDesc\n",
        "python/mori/cpp/__init__.py": "from libmori_pybinds import *\n",
        "python/mori/io/engine.py": "class MemoryDesc:\n    @staticmethod\n    def unpack(data: bytes):\n        assert data, 'empty'\n",
    })
    return replica


def sources(base_pins, head_pins):
    base = {DOCKERFILE: dockerfile(*base_pins), "vllm/_aiter_ops.py": AITER_OPS}
    head = {DOCKERFILE: dockerfile(*head_pins), "vllm/_aiter_ops.py": AITER_OPS, LAYER_PATH: LAYER}
    return base.get, head.get


def build(replica, tmp_path, offline=False, pins=(("v0.1.18", "v9.9.9"), ("v0.1.19", "v9.9.9")), added=ADDED):
    client = None if offline else GitHubClient(api_url=replica.api_url, cache_dir=tmp_path / "http")
    read_base, read_head = sources(*pins)
    return build_pinned_upstream(
        read_base=read_base,
        read_head=read_head,
        added_lines=added,
        client=client,
        cache_dir=tmp_path / "upstream",
        save_root=tmp_path / "outputs" / "pr-1-upstream",
        offline=offline,
    )


def by_symbol(section):
    return {symbol["symbol"]: symbol for symbol in section["symbols"]}


def test_a_pin_bump_inside_the_diff_resolves_symbols_at_the_head_pin(replica, env, tmp_path):
    section = build(replica, tmp_path)
    assert section["pins"]["aiter"] == {"repo": "ROCm/aiter", "base": "v0.1.18", "head": "v0.1.19", "bumped": True}
    assert section["pins"]["mori"] == {"repo": "ROCm/mori", "base": "v9.9.9", "head": "v9.9.9", "bumped": False}
    assert {symbol["ref"] for symbol in section["symbols"] if symbol["repo"] == "ROCm/aiter"} == {"v0.1.19"}
    assert not replica.seen(r".*/v0\.1\.18.*")


def test_a_wrapper_call_resolves_to_the_aiter_function_its_custom_op_calls(replica, env, tmp_path):
    symbols = by_symbol(build(replica, tmp_path))
    dynamic = symbols["aiter.ops.quant.dynamic_per_tensor_quant"]
    assert dynamic["status"] == "found"
    assert dynamic["via"] == "rocm_aiter_ops.per_tensor_quant"
    assert dynamic["called_at"] == f"{LAYER_PATH}:7"
    assert (dynamic["path"], dynamic["line"]) == ("aiter/ops/quant.py", 7)
    assert dynamic["signature"] == "def dynamic_per_tensor_quant(out, input, scale, eps: float=1e-10) -> None"
    assert dynamic["asserts"] == [
        "L8 assert input.is_contiguous(), 'input must be contiguous'",
        "L10 raise ValueError(f'unsupported output dtype {out.dtype}')",
    ]
    assert dynamic["constants"] == [
        "L3 FP8_MAX_FNUZ = 240.0",
        "L11 fp8_max = FP8_MAX_FNUZ if out.dtype == torch.float8_e4m3fnuz else 448.0",
    ]
    saved = Path(dynamic["saved"])
    assert saved == tmp_path / "outputs" / "pr-1-upstream" / "ROCm" / "aiter@v0.1.19" / "aiter" / "ops" / "quant.py"
    assert saved.read_text() == AITER_QUANT
    assert symbols["aiter.ops.quant.static_per_tensor_quant"]["via"] == "rocm_aiter_ops.per_tensor_quant"


def test_a_package_level_call_follows_the_star_reexport(replica, env, tmp_path):
    gemm = by_symbol(build(replica, tmp_path))["aiter.gemm_a8w8_CK"]
    assert (gemm["status"], gemm["path"], gemm["via"]) == ("found", "aiter/ops/gemm_op_a8w8.py", None)
    assert gemm["signature"].startswith("def gemm_a8w8_CK(XQ, WQ, x_scale, w_scale, bias=None, dtype=torch.bfloat16")
    assert gemm["asserts"][0].startswith("L5 assert dtype in (torch.bfloat16, torch.float16)")


def test_a_symbol_absent_at_the_pin_is_a_flag(replica, env, tmp_path):
    section = build(replica, tmp_path)
    absent = by_symbol(section)["aiter.ops.quant.brand_new_quant"]
    assert absent["status"] == "absent-at-pin"
    assert (absent["path"], absent["signature"]) == (None, None)
    flag = next(flag for flag in section["flags"] if flag["code"] == "UPSTREAM-SYMBOL-ABSENT")
    assert (flag["path"], flag["line"]) == (LAYER_PATH, 9)
    assert "brand_new_quant" in flag["message"] and "ROCm/aiter@v0.1.19" in flag["message"]


def test_a_pin_with_no_such_ref_is_a_flag_at_the_dockerfile_line(replica, env, tmp_path):
    section = build(replica, tmp_path)
    mori = by_symbol(section)["mori.shmem.shmem_torch_process_group_init"]
    assert (mori["status"], mori["repo"], mori["ref"]) == ("ref-not-found", "ROCm/mori", "v9.9.9")
    missing = [flag for flag in section["flags"] if flag["code"] == "UPSTREAM-REF-MISSING"]
    assert missing == [{"code": "UPSTREAM-REF-MISSING", "path": DOCKERFILE, "line": 4,
                        "message": "MORI_BRANCH=v9.9.9 names no ref of ROCm/mori (404 on its tree)"}]


def test_a_file_inside_a_submodule_comes_from_the_recorded_commit(replica, env, tmp_path):
    client = GitHubClient(api_url=replica.api_url, cache_dir=tmp_path / "http")
    saved = fetch_upstream_file(client=client, repo="ROCm/aiter", ref="v0.1.19",
                                path="3rdparty/composable_kernel/include/ck/fmha_fwd.hpp",
                                cache_dir=tmp_path / "upstream", save_root=tmp_path / "out")
    assert Path(saved) == tmp_path / "out" / "ROCm" / f"composable_kernel@{CK_COMMIT}" / "include" / "ck" / "fmha_fwd.hpp"
    assert Path(saved).read_text() == CK_KERNEL
    assert replica.seen(rf"/repos/ROCm/composable_kernel/git/trees/{CK_COMMIT}")
    assert fetch_upstream_file(client=client, repo="ROCm/aiter", ref="v0.1.19", path="3rdparty/composable_kernel/nope.hpp",
                               cache_dir=tmp_path / "upstream", save_root=tmp_path / "out") is None
    with pytest.raises(NotFound):
        fetch_upstream_file(client=client, repo="ROCm/aiter", ref="v0.0.1", path="README.md",
                            cache_dir=tmp_path / "upstream", save_root=tmp_path / "out")


PINNED = (("v0.1.18", "v1.1.0"), ("v0.1.19", "v1.1.0"))


def test_a_mori_symbol_is_found_through_its_package_dir(replica, env, tmp_path):
    mori = by_symbol(build(replica, tmp_path, pins=PINNED))["mori.shmem.shmem_torch_process_group_init"]
    assert (mori["status"], mori["path"], mori["line"]) == ("found", "python/mori/shmem/api.py", 1)
    assert mori["signature"] == "def shmem_torch_process_group_init(group_name: str) -> int"


def test_a_method_call_on_an_imported_class_reads_the_class(replica, env, tmp_path):
    added = [{"path": "vllm/kv.py", "line": 1, "text": "from mori.io import MemoryDesc"},
             {"path": "vllm/kv.py", "line": 2, "text": "desc = MemoryDesc.unpack(blob)"}]
    symbols = by_symbol(build(replica, tmp_path, pins=PINNED, added=added))
    assert symbols["mori.io.MemoryDesc"]["called_at"] == "vllm/kv.py:1"
    method = symbols["mori.io.MemoryDesc.unpack"]
    assert (method["status"], method["path"], method["line"]) == ("found", "python/mori/io/engine.py", 1)
    assert method["signature"] == "class MemoryDesc()"
    assert method["asserts"] == ["L4 assert data, 'empty'"]


def test_a_name_from_a_compiled_extension_is_not_called_absent(replica, env, tmp_path):
    added = [{"path": "vllm/kv.py", "line": 1, "text": "import mori"},
             {"path": "vllm/kv.py", "line": 2, "text": "ok = mori.cpp.TransferStatus().Succeeded()"}]
    section = build(replica, tmp_path, pins=PINNED, added=added)
    status = by_symbol(section)["mori.cpp.TransferStatus"]
    assert (status["status"], status["path"], status["line"]) == ("error", "python/mori/cpp/__init__.py", 1)
    assert section["flags"] == []
    assert "1 symbol(s) lead outside the Python sources" in section["note"]
    assert "- mori.cpp.TransferStatus [added] <- vllm/kv.py:2: ERROR at ROCm/mori@v1.1.0 (imported from outside the Python sources at python/mori/cpp/__init__.py:1)" in render_pinned_upstream(section)


MORI_COMMIT = "2d02c6a9" + "e" * 32


def test_an_abbreviated_commit_pin_is_read_at_its_full_sha(replica, env, tmp_path):
    RefRepos(replica).put("ROCm/mori", MORI_COMMIT, {"python/mori/shmem.py": "def shmem_torch_process_group_init(name):\n    pass\n"})
    pins = (("v0.1.19", "2d02c6a9"), ("v0.1.19", "2d02c6a9"))
    first = build(replica, tmp_path, pins=pins)
    mori = by_symbol(first)["mori.shmem.shmem_torch_process_group_init"]
    assert (mori["status"], mori["ref"], mori["path"]) == ("found", "2d02c6a9", "python/mori/shmem.py")
    assert mori["saved"].endswith("ROCm/mori@2d02c6a9/python/mori/shmem.py")
    assert replica.seen(f"/repos/ROCm/mori/git/trees/{MORI_COMMIT}")
    assert replica.seen(f"/repos/ROCm/mori/contents/python/mori/shmem.py")[0].query == f"ref={MORI_COMMIT}"
    logged = len(replica.log)
    build(replica, tmp_path, pins=pins)
    # the abbreviation, the tree and the file are all kept by commit SHA: no mori request at all
    assert not [seen for seen in replica.log[logged:] if seen.path.startswith("/repos/ROCm/mori")]


def test_a_second_run_costs_no_rate_limit_units(replica, env, tmp_path):
    first = build(replica, tmp_path, pins=PINNED)
    logged = len(replica.log)
    second = build(replica, tmp_path, pins=PINNED)
    # two trees; aiter: __init__, quant, gemm_op_a8w8; mori: shmem/__init__, shmem/api; aiter's tags
    assert (first["requests"], first["units"]) == (8, 8)
    assert (second["requests"], second["units"]) == (3, 0)
    assert {seen.status for seen in replica.log[logged:]} == {304}  # tree and tag-list ETags only
    assert second["symbols"] == first["symbols"]


def test_a_missing_ref_costs_one_unit_per_run(replica, env, tmp_path):
    build(replica, tmp_path)
    assert build(replica, tmp_path)["units"] == 1  # a 404 is not conditional; the tag may appear later


def test_a_failing_github_stops_the_lookups_and_says_why(replica, env, tmp_path):
    replica.fail("GET", r"/repos/ROCm/aiter/contents/.*", 502, times=None)
    client = GitHubClient(api_url=replica.api_url, cache_dir=tmp_path / "http", sleep=lambda seconds: None)
    read_base, read_head = sources(*PINNED)
    section = build_pinned_upstream(read_base=read_base, read_head=read_head, added_lines=ADDED, client=client,
                                    cache_dir=tmp_path / "upstream", save_root=tmp_path / "out", offline=False)
    assert {symbol["status"] for symbol in section["symbols"]} == {"error"}
    assert "stopped early: GET /repos/ROCm/aiter/contents/aiter/ops/quant.py: GitHub answered 502" in section["note"]
    assert not replica.seen(r"/repos/ROCm/mori/.*")  # nothing more is asked once GitHub fails
    assert not (tmp_path / "out").exists()


def test_offline_sends_nothing_and_says_so(replica, env, tmp_path):
    section = build(replica, tmp_path, offline=True)
    assert replica.log == []
    assert section["pins"]["aiter"]["bumped"] is True
    assert {symbol["status"] for symbol in section["symbols"]} == {"offline"}
    assert (section["requests"], section["units"], section["flags"]) == (0, 0, [])
    assert section["note"].startswith("offline")


def test_digest_lines(replica, env, tmp_path):
    lines = render_pinned_upstream(build(replica, tmp_path))
    assert lines[:2] == ["pin aiter: ROCm/aiter@v0.1.18 -> v0.1.19 (bumped by this PR)", "pin mori: ROCm/mori@v9.9.9"]
    assert f"- aiter.ops.quant.dynamic_per_tensor_quant [added] <- {LAYER_PATH}:7 via rocm_aiter_ops.per_tensor_quant" in lines
    assert "  ROCm/aiter@v0.1.19:aiter/ops/quant.py:7  def dynamic_per_tensor_quant(out, input, scale, eps: float=1e-10) -> None" in lines
    assert (f"- aiter.ops.quant.brand_new_quant [added] <- {LAYER_PATH}:9: ABSENT at ROCm/aiter@v0.1.19; "
            "in no later release tag") in lines
    assert lines[-1].startswith("upstream cost: ")
    assert json.loads(json.dumps(lines)) == lines


# --- real vLLM PRs, read from a full clone -----------------------------------------------------


def clone_reader(commit):
    """``path -> text | None`` at ``commit`` of $VLLM_ROCM_REVIEW_TEST_CLONE, or skip."""
    clone = os.environ.get("VLLM_ROCM_REVIEW_TEST_CLONE")
    if not clone:
        pytest.skip("VLLM_ROCM_REVIEW_TEST_CLONE is unset: this test reads a full vLLM clone")
    git = ["git", "-C", clone]  # a work-tree clone or a bare mirror
    if subprocess.run([*git, "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True).returncode:
        pytest.skip(f"the clone lacks commit {commit[:12]}")

    def read(path):
        done = subprocess.run([*git, "show", f"{commit}:{path}"], capture_output=True, text=True)
        return done.stdout if done.returncode == 0 else None

    return read


def offline_case(number):
    case, diff, _ = load_case(number)
    added = [{"path": f.path, "line": line, "text": text} for f in parse_diff(diff) for line, text in f.added]
    section = build_pinned_upstream(
        read_base=clone_reader(case["sha"] + "^"), read_head=clone_reader(case["sha"]), added_lines=added,
        client=None, cache_dir=Path("unused"), save_root=Path(f"outputs/pr-{number}-upstream"), offline=True,
    )
    return section, {(entry["path"], entry["line"]) for entry in added}


def test_real_case_33773_resolves_its_wrappers_at_the_pin():
    section, added = offline_case(33773)
    assert section["pins"]["aiter"] == {"repo": "ROCm/aiter", "base": "v0.1.10.post3", "head": "v0.1.10.post3", "bumped": False}
    symbols = by_symbol(section)
    assert symbols["aiter.gemm_a8w8_CK"]["via"] == "rocm_aiter_ops.w8a8_gemm"
    assert symbols["aiter.gemm_a8w8_CK"]["called_at"] == "vllm/model_executor/kernels/linear/scaled_mm/aiter.py:125"
    assert symbols["aiter.ops.shuffle.shuffle_weight"]["via"] == "rocm_aiter_ops.shuffle_weight"
    assert "aiter.gemm_a8w8_bpreshuffle" in symbols
    for symbol in section["symbols"]:
        path, _, line = symbol["called_at"].rpartition(":")
        assert (path, int(line)) in added


def test_real_case_46904_shows_its_aiter_bump():
    section, _ = offline_case(46904)
    assert section["pins"]["aiter"] == {"repo": "ROCm/aiter", "base": "v0.1.16.post2", "head": "v0.1.16.post3", "bumped": True}
