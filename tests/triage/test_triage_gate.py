"""The relevance gate: levels, evidence, and the keyword traps the notes warn about."""

from triage_support import file_diff, run_triage

NVIDIA_UTIL = "vllm/model_executor/layers/quantization/utils/flashinfer_utils.py"
FRONTEND = "vllm/entrypoints/openai/api_server.py"


def test_zen_cpu_pr_that_says_amd_is_not_rocm():
    result = run_triage(file_diff("vllm/platforms/zen_cpu.py", added=["    # AMD CPUs lack fp16 compute", "    x = 1"]),
                        title="[ZenCPU] AMD Zen CPU backend via zentorch")
    assert result["relevance"] == "none"
    suppressed = result["relevance_evidence"]["title"]["suppressed"]
    assert [(hit["marker"], hit["guard"]) for hit in suppressed] == [("amd", "amd-zen-cpu")]


def test_amd_gpu_title_is_full():
    result = run_triage(file_diff(FRONTEND, added=["x = 1"]), title="[AMD] Fix the launcher on MI300X")
    assert result["relevance"] == "full"
    assert {hit["marker"] for hit in result["relevance_evidence"]["title"]["strong"]} == {"amd", "instinct-mi"}


def test_bare_fp8_in_nvidia_code_is_not_rocm():
    result = run_triage(file_diff(NVIDIA_UTIL, added=["    scale = fp8_scale(x)"]),
                        title="[Quantization] FP8 block scaling for FlashInfer", body="Adds fp8 and MXFP4 paths.")
    assert result["relevance"] == "none"
    weak = {hit["marker"] for hit in result["relevance_evidence"]["body"]["weak"]}
    assert weak == {"fp8", "mxfp"}
    assert "weak markers alone do not count" in result["relevance_evidence"]["reason"]


def test_cutlass_kernel_in_csrc_is_carved_out_of_the_shared_surface():
    result = run_triage(file_diff("csrc/quantization/cutlass_w8a8/scaled_mm_c3x.cu", added=["  int x = 0;"]),
                        title="[Kernel] FP8 CUTLASS tweak")
    assert result["relevance"] == "none"


def test_hip_inside_ordinary_words_is_not_a_marker():
    result = run_triage(file_diff(FRONTEND, added=["x = 1"]), title="Fix relationship and membership of chip shipping")
    assert result["relevance"] == "none"
    assert result["relevance_evidence"]["title"]["strong"] == []


def test_hip_as_a_word_is_a_marker():
    result = run_triage(file_diff(FRONTEND, added=["x = 1"]), title="[HIP] Fix graph capture")
    assert result["relevance"] == "full"


def test_generic_refactor_touching_one_rocm_backend_among_many_is_partial():
    diff = file_diff("vllm/v1/attention/backends/rocm_attn.py", added=["    accept_output_buffer = False"])
    for backend in ("flash_attn", "flashinfer", "flex_attention", "tree_attn"):
        diff += file_diff(f"vllm/v1/attention/backends/{backend}.py", added=["    accept_output_buffer = False"])
    result = run_triage(diff, title="[V0 Deprecation] Remove accept_output_buffer")
    assert result["relevance"] == "partial"
    assert [entry["path"] for entry in result["rocm_files"]] == ["vllm/v1/attention/backends/rocm_attn.py"]
    assert result["relevance_evidence"]["rocm_share"] == {"rocm": 1, "counted": 5, "threshold": 0.5}


def test_rocm_files_as_the_majority_make_a_pr_full_without_a_title_marker():
    diff = file_diff("vllm/v1/attention/backends/rocm_attn.py", added=["x = 1"]) \
        + file_diff("tests/v1/attention/test_attention_backends.py", added=["x = 1"])
    result = run_triage(diff, title="Fix sliding window")
    assert result["relevance"] == "full"
    assert result["relevance_evidence"]["rocm_share"]["counted"] == 1  # the test file is not counted


def test_shared_surface_file_alone_is_partial():
    result = run_triage(file_diff("vllm/model_executor/layers/fused_moe/fused_moe.py", added=["    SWAP_AB = True"]),
                        title="[Kernel] Swap AB in fused_moe_kernel")
    assert result["relevance"] == "partial"
    assert result["shared_files"][0]["path"] == "vllm/model_executor/layers/fused_moe/fused_moe.py"
    assert result["shared_files"][0]["why"][0].startswith("shared surface:")
    assert result["flags"]["Q3"]["state"] == "raised"


def test_rocm_branch_in_changed_code_makes_a_file_shared():
    result = run_triage(file_diff(FRONTEND, added=["    if current_platform.is_rocm():", "        x = 1"]),
                        title="[Frontend] Tune the server")
    assert result["relevance"] == "partial"
    assert result["shared_files"] == [{"path": FRONTEND, "why": ["changed line 10 mentions 'rocm'"]}]


def test_rocm_words_in_docs_or_comments_do_not_make_files_shared():
    diff = file_diff("docs/getting_started/installation/gpu.md", added=["- [AMD ROCm](gpu.md)"]) \
        + file_diff(FRONTEND, added=["    # works on ROCm too", "    x = 1"])
    assert run_triage(diff, title="[Docs] Reorganise installation pages")["relevance"] == "none"


def test_body_marker_alone_is_partial_and_commit_trailers_are_ignored():
    diff = file_diff(FRONTEND, added=["x = 1"])
    assert run_triage(diff, title="Fix a crash", body="Seen on MI300X with TP=8.")["relevance"] == "partial"
    trailer = "Signed-off-by: Jane Doe <jane.doe@amd.com>\nCo-authored-by: Mori Tanaka <mori@example.com>"
    assert run_triage(diff, title="Fix a crash", body=trailer)["relevance"] == "none"


def test_stale_branch_path_is_rocm_and_keeps_its_tier():
    old = "vllm/model_executor/layers/fused_moe/rocm_aiter_fused_moe.py"
    result = run_triage(file_diff(old, added=["x = 1"]), title="Fix MoE")
    assert result["relevance"] == "full"
    assert result["tiers"] == [{"path": old, "tier": 1, "why": result["tiers"][0]["why"],
                                "as": "vllm/model_executor/layers/fused_moe/experts/rocm_aiter_moe.py"}]


def test_tuning_configs_count_only_for_amd_devices():
    folder = "vllm/model_executor/layers/fused_moe/configs/"
    amd = run_triage(file_diff(folder + "E=8,N=14336,device_name=AMD_Instinct_MI300X.json", added=["{}"], new=True),
                     title="Add tuning")
    nvidia = run_triage(file_diff(folder + "E=8,N=14336,device_name=NVIDIA_H200.json", added=["{}"], new=True),
                        title="Add tuning")
    assert amd["relevance"] == "full" and amd["tiers"][0]["tier"] == 3
    assert nvidia["relevance"] == "none" and nvidia["tiers"] == []


def test_flags_q1_follows_rocm_ci_evidence():
    diff = file_diff("vllm/v1/attention/backends/rocm_aiter_fa.py", added=["x = 1"])
    unknown = run_triage(diff, title="[ROCm] Fix")
    passed = run_triage(diff, title="[ROCm] Fix", checks=([], [_status("buildkite/amd-ci", "success")]))
    failed = run_triage(diff, title="[ROCm] Fix", checks=([], [_status("buildkite/amd-ci", "failure")]))
    cuda_only = run_triage(diff, title="[ROCm] Fix", checks=([], [_status("buildkite/ci", "success")]))
    assert unknown["flags"]["Q1"]["state"] == "unknown"
    assert passed["flags"]["Q1"]["state"] == "clear"
    assert failed["flags"]["Q1"]["state"] == "raised"
    assert cuda_only["flags"]["Q1"]["state"] == "raised"
    quiet = run_triage(file_diff("vllm/platforms/rocm.py", added=["x = 1"]), title="[ROCm] Fix")
    assert quiet["flags"]["Q1"]["state"] == "not-applicable"


def test_flag_q2_comes_from_dispatch_families():
    result = run_triage(file_diff("vllm/platforms/rocm.py", added=['    if "gfx950" in arch:']), title="[ROCm] Fix")
    assert result["flags"]["Q2"]["state"] == "raised"
    assert result["flags"]["Q2"]["evidence"] == ["vllm/platforms/rocm.py:10"]


def _status(context, state):
    return {"context": context, "state": state, "description": None, "target_url": None}


# --- shared files changed only where ROCm never runs ---------------------------------------------

ALL2ALL = "vllm/distributed/device_communicators/all2all.py"


def _hunk(start, section, lines):
    """One hunk of ``lines`` (each starting with "+", "-" or " "), its counts worked out."""
    old = sum(1 for line in lines if line[0] in " -")
    new = sum(1 for line in lines if line[0] in " +")
    return "\n".join([f"@@ -{start},{old} +{start},{new} @@ {section}"] + lines) + "\n"


def _all2all_triage(*hunks):
    diff = f"diff --git a/{ALL2ALL} b/{ALL2ALL}\n--- a/{ALL2ALL}\n+++ b/{ALL2ALL}\n" + "".join(hunks)
    return run_triage(diff, title="[Perf] Faster combine")


def test_edits_inside_a_flashinfer_class_and_an_import_demote_the_shared_file():
    result = _all2all_triage(
        _hunk(16, "from vllm.utils.flashinfer import (",
              [" )", "+from vllm.utils.func_utils import supports_kw", " from vllm.utils.import_utils import has_mori"]),
        _hunk(690, "class FlashInferNVLinkOneSidedManager(All2AllManagerBase):",
              ["         self.top_k = 0", "+        # combine writes into the caller's buffer",
               "+        self._combine_supports_output = False"]))
    assert result["relevance"] == "none"
    assert result["shared_files"] == []
    [demoted] = result["relevance_evidence"]["demoted"]
    assert demoted["path"] == ALL2ALL
    assert "nvidia-only-definition: class FlashInferNVLinkOneSidedManager" in demoted["why"][-1]


CUDA_BRANCH = ["     def dispatch(self, x):", "         if current_platform.is_cuda():", "             y = x",
               "+            y = y.contiguous()"]


def test_an_edit_inside_a_cuda_only_branch_is_demoted_but_one_outside_it_is_not():
    section = "class MoriAll2AllManager(All2AllManagerBase):"
    assert _all2all_triage(_hunk(10, section, CUDA_BRANCH))["relevance"] == "none"
    assert _all2all_triage(_hunk(10, section, CUDA_BRANCH + ["+        z = x"]))["relevance"] == "partial"
    negated = [line.replace("if current_platform", "if not current_platform") for line in CUDA_BRANCH]
    assert _all2all_triage(_hunk(10, section, negated))["relevance"] == "partial"
    alike = [line.replace("is_cuda()", "is_cuda_alike()") for line in CUDA_BRANCH]
    assert _all2all_triage(_hunk(10, section, alike))["relevance"] == "partial"
    either = [line.replace("is_cuda():", "is_cuda() or current_platform.is_rocm():") for line in CUDA_BRANCH]
    assert _all2all_triage(_hunk(10, section, either))["relevance"] != "none"


def test_a_new_nvidia_named_method_on_a_shared_class_still_counts():
    result = _all2all_triage(_hunk(10, "class All2AllManagerBase:",
                                   ["     x = 1", "+    def deep_gemm_workspace(self):", "+        return None"]))
    assert result["relevance"] == "partial"


def test_comment_and_docstring_only_edits_do_not_make_a_pr_partial():
    result = _all2all_triage(_hunk(10, "class MoriAll2AllManager(All2AllManagerBase):",
                                   ["     def dispatch(self, x):", '+        """Dispatch tokens to their experts."""',
                                    "+        # the handle is cached per shape", "         return x"]))
    assert result["relevance"] == "none"
    assert "comments, docstrings or imports" in result["relevance_evidence"]["demoted"][0]["why"][-1]


def test_a_hipified_csrc_kernel_is_shared_and_says_so_even_at_its_former_path():
    for path in ("csrc/libtorch_stable/moe/topk_softmax_kernels.cu", "csrc/moe/topk_softmax_kernels.cu"):
        result = run_triage(file_diff(path, added=["  int x = 0;"]), title="[Kernel] Faster top-k softmax")
        assert result["relevance"] == "partial", path
        assert result["shared_files"][0]["why"] == ["ROCm builds it: hipified from VLLM_MOE_EXT_SRC in CMakeLists.txt"]


def test_a_cuda_only_csrc_kernel_is_not_rocm():
    result = run_triage(file_diff("csrc/libtorch_stable/moe/grouped_topk_kernels.cu", added=["  int x = 0;"]),
                        title="[Kernel] Optimize grouped topk kernel")
    assert result["relevance"] == "none"


def test_sm_checks_demote_only_capabilities_no_rocm_gpu_reports():
    section = "class MoriAll2AllManager(All2AllManagerBase):"

    def branch(condition):
        return _hunk(10, section, ["     def dispatch(self, x):", f"         if {condition}:", "+            x = x * 2"])

    assert _all2all_triage(branch("current_platform.has_device_capability(100)"))["relevance"] == "none"
    assert _all2all_triage(branch("current_platform.is_device_capability_family(100)"))["relevance"] == "none"
    assert _all2all_triage(branch("has_flashinfer_nvlink_one_sided()"))["relevance"] == "none"
    # MI300 reports capability 9.4, so a ">= 9.0" check is taken on ROCm too
    assert _all2all_triage(branch("current_platform.has_device_capability(90)"))["relevance"] == "partial"
