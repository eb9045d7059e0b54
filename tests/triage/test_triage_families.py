"""Each diff family fires on a small hand-written diff and stays quiet on a near miss."""

import pytest

from triage_support import CONFIG, family_ids, file_diff, rule_ids, run_triage

ROCM_TITLE = "[ROCm] Adjust the AITER path"
BACKEND = "vllm/v1/attention/backends/rocm_attn.py"
AITER_OPS = "vllm/_aiter_ops.py"
KERNEL = "vllm/v1/attention/ops/chunked_prefill_paged_decode.py"
TWIN_BLOCK = [
    "    scale = layer._k_scale_float",
    "    block_table = attn_metadata.block_table",
    "    seq_lens = attn_metadata.seq_lens",
    "    max_seq_len = attn_metadata.max_seq_len",
    "    query_start_loc = attn_metadata.query_start_loc",
    "    window = self.sliding_window",
]
SIGNATURE = ["def forward(", "    self,", "    query,"]
MLA_BACKEND = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
QUANT_FP8 = "vllm/model_executor/layers/quantization/input_quant_fp8.py"
LAYERNORM = "vllm/model_executor/layers/layernorm.py"
LAYER_UTILS = "vllm/model_executor/layers/utils.py"
MORIIO_COMMON = "vllm/distributed/kv_transfer/kv_connector/v1/moriio/moriio_common.py"

# family id -> (diff that fires, near-miss diff that must not fire)
CASES = {
    "new-custom-op-without-fake": (
        file_diff(AITER_OPS, added=['direct_register_custom_op(op_name="rocm_x", op_func=_x_impl, mutates_args=[])']),
        file_diff(AITER_OPS, added=['direct_register_custom_op(op_name="rocm_x", op_func=_x_impl,',
                                    "    mutates_args=[], fake_impl=_x_fake)"]),
    ),
    "custom-op-contract": (
        file_diff(AITER_OPS, added=["def _rocm_aiter_x_fake(x):", "    return torch.empty_like(x)"]),
        file_diff(AITER_OPS, added=["def _rocm_aiter_x_helper(x):", "    return x"]),
    ),
    "invariant-removed": (
        file_diff(BACKEND, removed=["    assert block_size % 16 == 0"]),
        # The same assert moved to another file is not a removal.
        file_diff(BACKEND, removed=["    assert block_size % 16 == 0"])
        + file_diff(KERNEL, added=["    assert block_size % 16 == 0"]),
    ),
    "contiguity-removed": (
        file_diff(BACKEND, removed=["    query = query.contiguous()"], added=["    query = query"]),
        file_diff(BACKEND, removed=["    out = kernel(query.contiguous())"], added=["    out = kernel(query.contiguous(), k)"]),
    ),
    "zero-init-removed": (
        file_diff(BACKEND, removed=["    out = torch.zeros(n, device=d)"], added=["    out = torch.empty(n, device=d)"]),
        file_diff(BACKEND, removed=["    out = torch.zeros(n, device=d)"], added=["    out = torch.zeros(m, device=d)"]),
    ),
    "uninitialized-accumulator": (
        file_diff(KERNEL, added=["    acc = torch.empty(n, device=d)"], context=["    tl.atomic_add(acc_ptr + offs, v)"]),
        file_diff(KERNEL, added=["    acc = torch.empty(n, device=d)"], context=["    tl.store(acc_ptr + offs, v)"]),
    ),
    "fp8-constant": (
        file_diff(BACKEND, added=["FP8_MAX = 448.0"]),
        file_diff(BACKEND, added=["MAX_TOKENS = 4480", "TIMEOUT_S = 240", "MAX_TOKENS = 448  # request cap",
                                  '    url = "https://example.com/fp8/240/448.0"']),
    ),
    "fp8-flavour": (
        file_diff(BACKEND, added=["    kv_dtype = torch.float8_e4m3fnuz"]),
        file_diff(BACKEND, added=["    kv_dtype = torch.bfloat16"]),
    ),
    "arch-string": (
        file_diff(BACKEND, added=['    if "gfx950" in arch_name:']),
        file_diff(BACKEND, added=["    if on_gfx950():"]),
    ),
    "arch-gate-change": (
        file_diff(BACKEND, added=["    if on_gfx950():"]),
        file_diff(BACKEND, added=["    if use_cascade:"]),
    ),
    "dispatch-change": (
        file_diff(BACKEND, removed=["    if dtype == torch.float16:"], added=["    if dtype in (torch.float16, torch.bfloat16):"]),
        file_diff(BACKEND, added=["    if num_tokens > 3:"]),
    ),
    "silent-fallback": (
        file_diff(BACKEND, added=['    scale = getattr(layer, "k_scale", None)']),
        file_diff(BACKEND, added=['    scale = getattr(layer, "k_scale")']),
    ),
    "new-env-var": (
        file_diff(BACKEND, added=['    fast = os.environ.get("VLLM_ROCM_FAST", "0") == "1"']),
        file_diff("tests/kernels/attention/test_rocm_attn.py", added=['    os.environ.get("VLLM_ROCM_FAST")'])
        + file_diff(BACKEND, added=["    value = os.environ.get(var_name)", '    devices = os.environ["HIP_VISIBLE_DEVICES"]']),
    ),
    "streams-events": (
        file_diff(BACKEND, added=["    done = torch.cuda.Event()"]),
        file_diff(BACKEND, added=["    done = threading.Event()"])
        + file_diff("csrc/quantization/fused_kernels/layernorm_quant.cu",
                    added=["  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();",
                           "  const at::cuda::OptionalCUDAGuard device_guard(device_of(input));"]),
    ),
    "blocking-wait": (
        file_diff("vllm/distributed/kv_transfer/kv_connector/v1/moriio/moriio_engine.py", added=["    item = self.queue.get()"]),
        file_diff("vllm/distributed/kv_transfer/kv_connector/v1/moriio/moriio_engine.py",
                  added=["    item = self.queue.get(timeout=5.0)"]),
    ),
    "kernel-metadata": (
        file_diff(MLA_BACKEND, added=["        self._num_attention_heads = max(16, self.num_heads)",
                                      "        sizes = get_mla_metadata_info_v1(max_num_reqs, qlen, heads, q_dtype, kv_dtype)"]),
        file_diff(MLA_BACKEND, added=["        self.scale = 1.0 / head_size**0.5"]),
    ),
    "capability-claim": (
        file_diff(BACKEND, context=["    @classmethod", "    def supports_sink(cls) -> bool:"],
                  removed=["        return False"], added=["        return True"]),
        file_diff(BACKEND, context=["    def build(self, common_prefix_len):"],
                  removed=["        return False"], added=["        return True"]),
    ),
    "delegated-numerics": (
        file_diff(QUANT_FP8, added=["            return rocm_aiter_ops.per_token_quant(x, _FP8_DTYPE, scale)"]),
        file_diff(QUANT_FP8, added=["        self.use_aiter = rocm_aiter_ops.is_linear_fp8_enabled()"]),
    ),
    "rocm-forward-change": (
        file_diff(LAYERNORM, context=["    def forward_hip(self, x, residual=None):"],
                  added=["        return rocm_aiter_ops.rms_norm(x, self.weight, self.variance_epsilon)"]),
        file_diff(LAYERNORM, context=["    def forward_cuda(self, x, residual=None):"],
                  added=["        return ops.rms_norm(x, self.weight, self.variance_epsilon)"]),
    ),
    "fusion-pattern": (
        file_diff("vllm/compilation/passes/fusion/rms_quant_fusion.py", added=["        self.matched = 0"]),
        file_diff("vllm/compilation/passes/utility/fix_functionalization.py", added=["        self.matched = 0"]),
    ),
    "custom-op-returns-input": (
        file_diff(AITER_OPS, context=["def _rocm_aiter_rms_norm_impl(", "    x: torch.Tensor, weight: torch.Tensor, eps: float",
                                      ") -> torch.Tensor:", "    if x.numel() == 0:"], added=["        return x"]),
        file_diff(AITER_OPS, context=["def _rocm_aiter_rms_norm_impl(", "    x: torch.Tensor, weight: torch.Tensor, eps: float",
                                      ") -> torch.Tensor:", "    if x.numel() == 0:"], added=["        return x.clone()"]),
    ),
    "workspace-growth": (
        file_diff(MLA_BACKEND, added=["        (buf,) = current_workspace_manager().get_simultaneous(((n, h), torch.float32))"]),
        file_diff(MLA_BACKEND, added=["        buf = torch.empty((n, h), dtype=torch.float32, device=device)"]),
    ),
    "request-field-read": (
        file_diff(MORIIO_COMMON, added=['            remote_dp_rank=kv_transfer_params.get("remote_dp_rank", 0),']),
        file_diff(MORIIO_COMMON, added=["            params = request.kv_transfer_params"]),
    ),
    "hot-path-copy": (
        file_diff(LAYER_UTILS, context=["def rocm_unquantized_gemm_impl(x, weight, bias=None):"],
                  added=["    weight = weight.contiguous()"]),
        file_diff(LAYER_UTILS, context=["def rocm_unquantized_gemm_impl(x, weight, bias=None):"],
                  added=["    x_view = x.reshape(-1, x.size(-1)).contiguous()"])
        + file_diff("vllm/model_executor/layers/quantization/fp8.py",
                    context=["    def process_weights_after_loading(self, layer):"],
                    added=["        layer.weight = layer.weight.t().contiguous()"]),
    ),
    "cudagraph-unsafe": (
        file_diff(BACKEND, added=["    n = int(seq_lens.max().item())"]),
        file_diff("tests/v1/attention/test_rocm_attn.py", added=["    n = int(seq_lens.max().item())"]),
    ),
    "forward-allocation": (
        file_diff(BACKEND, added=["    out = torch.empty_like(query)"], context=["def forward(self, query):"]),
        file_diff(BACKEND, added=["    out = torch.empty_like(query)"], context=["def build(self, query):"]),
    ),
    "cudagraph-support": (
        file_diff(BACKEND, added=["    _cudagraph_support = AttentionCGSupport.UNIFORM_BATCH"]),
        file_diff(BACKEND, added=["    _support = True"]),
    ),
    "triton-kernel": (
        file_diff(KERNEL, added=["    q = tl.load(q_ptr + offs)"]),
        file_diff("tests/kernels/attention/test_x.py", added=["    q = tl.load(q_ptr + offs)"])
        + file_diff(KERNEL, added=["    score_scale = scale * tl.load(q_scale) * tl.load(k_scale)"]),
    ),
    "offset-arithmetic": (
        file_diff("csrc/attention/paged_attention_v1.cu", added=["  const int off = block_id * kv_block_stride + head;"]),
        file_diff("csrc/attention/paged_attention_v1.cu", added=["  const int off = block_id + head;"]),
    ),
    "triton-offset-arithmetic": (
        file_diff(KERNEL, context=["    pid = tl.program_id(0)"], added=["    off = block_id * stride_kv_block + head"]),
        # Plain Python host code (Python ints do not overflow): no Triton in sight.
        file_diff("vllm/distributed/kv_transfer/kv_connector/v1/moriio/moriio_connector.py",
                  added=["        offset_local[w] = sz * (lb * block_stride)"]),
    ),
    "hip-kernel-source": (
        file_diff("csrc/rocm/attention.cu", added=["  int lane = threadIdx.x;"]),
        file_diff("csrc/cpu/attention.cpp", added=["  int lane = 0;"]),
    ),
    "warp-size-assumption": (
        file_diff("csrc/rocm/skinny_gemms.cu", added=["  v += __shfl_xor_sync(0xffffffff, v, 16);"]),
        file_diff("csrc/rocm/skinny_gemms.cu", added=["  v += w;"]),
    ),
    "new-dependency": (
        file_diff("requirements/rocm.txt", added=["amd-aiter==0.1.5"]),
        file_diff("requirements/rocm.txt", added=["# keep this list sorted"]),
    ),
    "rocm-pin": (
        file_diff("docker/Dockerfile.rocm_base", removed=['ARG AITER_BRANCH="v0.1.4"'], added=['ARG AITER_BRANCH="v0.1.5"']),
        file_diff("docker/Dockerfile.cpu", added=["RUN echo cpu"]),
    ),
    "aiter-api-use": (
        file_diff(AITER_OPS, added=["    from aiter import gemm_a8w8_bpreshuffle"]),
        file_diff(BACKEND, added=["    from vllm._aiter_ops import rocm_aiter_ops"]),
    ),
    "aiter-probe-outside-wrapper": (
        file_diff("vllm/model_executor/layers/fused_moe/layer.py", added=["    if envs.VLLM_ROCM_USE_AITER_MOE:"]),
        file_diff(AITER_OPS, added=["    if envs.VLLM_ROCM_USE_AITER_MOE:"]),
    ),
    "aiter-wrapper-change": (
        file_diff(AITER_OPS, removed=["    def fused_moe(x, w):"], added=["    def fused_moe(x, w, policy):"]),
        file_diff(BACKEND, removed=["    def fused_moe(x, w):"], added=["    def fused_moe(x, w, policy):"]),
    ),
    "mori-api-use": (
        file_diff("vllm/distributed/device_communicators/all2all.py", added=["    import mori"]),
        file_diff("docker/Dockerfile.rocm_base", added=['ARG MORI_REPO="https://github.com/ROCm/mori.git"']),
    ),
    "backend-selection": (
        file_diff("vllm/platforms/rocm.py", added=["        backends.append(AttentionBackendEnum.ROCM_ATTN)"]),
        file_diff("vllm/platforms/rocm.py", added=["        backends.append(extra)"]),
    ),
    "adhoc-rocm-branch": (
        file_diff("vllm/model_executor/layers/quantization/fp8.py", added=["        if current_platform.is_rocm():"]),
        file_diff("vllm/model_executor/layers/fused_moe/oracle/fp8.py", added=["        if current_platform.is_rocm():"]),
    ),
    "kv-layout": (
        file_diff(BACKEND, added=["    def get_kv_cache_shape(num_blocks, block_size):"]),
        file_diff(BACKEND, added=["    def get_block_size():"]),
    ),
    "weight-copy": (
        file_diff(AITER_OPS, added=["    layer.w13_shuffled = shuffle_weight(layer.w13_weight)"]),
        file_diff(AITER_OPS, added=["    layer.w13_weight = layer.w13_weight.t()"]),
    ),
    "dtype-hardcoded": (
        file_diff(BACKEND, added=["    out = torch.empty(n, dtype=torch.bfloat16)"]),
        file_diff(BACKEND, added=["    out = torch.empty(n, dtype=query.dtype)"]),
    ),
    "defaulted-param": (
        file_diff(BACKEND, added=["    use_fast_path: bool = False,"]),
        file_diff(BACKEND, added=["    use_fast_path = False"]),
    ),
    "signature-change": (
        file_diff(BACKEND, removed=["def forward(self, query):"], added=["def forward(self, query, key):"]),
        file_diff(BACKEND, added=["def brand_new(self, query):", "    return query"]),
    ),
    "conditional-binding": (
        file_diff(BACKEND, added=["    if on_gfx950():", "        tile = 256", "    launch(tile)"]),
        file_diff(BACKEND, added=["    if on_gfx950():", "        tile = 256", "    else:", "        tile = 128",
                                  "    launch(tile)"]),
    ),
    "twin-blocks": (
        file_diff(BACKEND, added=TWIN_BLOCK) + file_diff("vllm/v1/attention/backends/rocm_aiter_fa.py", added=TWIN_BLOCK),
        file_diff(BACKEND, added=TWIN_BLOCK) + file_diff("vllm/v1/attention/backends/rocm_aiter_fa.py", added=TWIN_BLOCK[:5]),
    ),
    "untouched-siblings": (
        file_diff(BACKEND, added=["    x = 1"]),
        file_diff(BACKEND, added=["    x = 1"]) + file_diff("vllm/v1/attention/backends/rocm_aiter_fa.py", added=["    x = 1"])
        + file_diff("vllm/v1/attention/backends/rocm_aiter_unified_attn.py", added=["    x = 1"]),
    ),
    "shared-surface": (
        file_diff("vllm/platforms/interface.py", added=["    def supports_x(cls):"]),
        file_diff("vllm/reasoning/qwen3_reasoning_parser.py", added=["    x = 1"]),
    ),
    "amd-tuning-config": (
        file_diff("vllm/model_executor/layers/fused_moe/configs/E=64,N=128,device_name=AMD_Instinct_MI300X.json",
                  added=['{"1": {"BLOCK_SIZE_M": 16}}'], new=True),
        file_diff("vllm/model_executor/layers/fused_moe/configs/E=64,N=128,device_name=NVIDIA_H100.json",
                  added=['{"1": {"BLOCK_SIZE_M": 16}}'], new=True),
    ),
    "code-without-tests": (
        file_diff(BACKEND, added=[f"    x{index} = {index}" for index in range(30)]),
        file_diff(BACKEND, added=[f"    x{index} = {index}" for index in range(30)])
        + file_diff("tests/v1/attention/test_rocm_attn.py", added=["def test_x():", "    assert True"]),
    ),
    "leftovers": (
        file_diff(BACKEND, added=["    print(query.shape)"]),
        file_diff("tests/v1/attention/test_rocm_attn.py", added=["    print(query.shape)"]),
    ),
    "scratch-files": (
        file_diff("tmp_debug_rocm.py", added=["print(1)"], new=True),
        file_diff("vllm/v1/attention/backends/rocm_new.py", added=["X = 1"], new=True),
    ),
}


def test_every_family_in_the_surface_file_has_a_case():
    assert {family.id for family in CONFIG.families} == set(CASES)


@pytest.mark.parametrize("family", sorted(CASES))
def test_family_fires_on_its_trigger(family):
    result = run_triage(CASES[family][0], title=ROCM_TITLE)
    assert family in family_ids(result)
    fired = next(item for item in result["families"] if item["id"] == family)
    assert fired["evidence"], "a family always says where it fired"
    for rule in fired["rules"]:
        assert {"via": "family", "id": family} in next(r["sources"] for r in result["rules"] if r["id"] == rule)


@pytest.mark.parametrize("family", sorted(CASES))
def test_family_stays_quiet_on_the_near_miss(family):
    assert family not in family_ids(run_triage(CASES[family][1], title=ROCM_TITLE))


def test_evidence_names_file_and_new_line_number():
    result = run_triage(file_diff(BACKEND, context=["x = 0", "y = 0"], added=["FP8_MAX = 240.0"]), title=ROCM_TITLE)
    evidence = next(f for f in result["families"] if f["id"] == "fp8-constant")["evidence"]
    assert evidence == [{"path": BACKEND, "line": 12, "text": "FP8_MAX = 240.0"}]


def test_comment_lines_do_not_trigger_code_families():
    result = run_triage(file_diff(BACKEND, added=["    # FP8_MAX = 448.0 on OCP, see below"]), title=ROCM_TITLE)
    assert "fp8-constant" not in family_ids(result)


def test_conditional_binding_ignores_keyword_arguments_and_rebinding():
    diff = file_diff(BACKEND, context=["def run(self, device):"], added=[
        "    if self.use_quick_reduce:",
        "        self.qr = QuickReduce(",
        "            device=device,",
        "        )",
        "    launch(device)",
    ])
    assert "conditional-binding" not in family_ids(run_triage(diff, title=ROCM_TITLE))


def test_signature_change_ignores_class_bases_and_new_functions():
    diff = file_diff(BACKEND, context=["class Meta(", "    msgspec.Struct,"], added=["    dict=True,"]) \
        + file_diff(KERNEL, added=["def helper(", "    a: int = 0,", "):", "    return a"])
    assert "signature-change" not in family_ids(run_triage(diff, title=ROCM_TITLE))


def test_parameter_added_to_an_existing_signature_is_a_signature_change():
    diff = file_diff(AITER_OPS, context=SIGNATURE, added=["    policy: int = 0,"], after=[") -> torch.Tensor:"])
    result = run_triage(diff, title=ROCM_TITLE)
    evidence = next(f for f in result["families"] if f["id"] == "signature-change")["evidence"]
    assert evidence[0]["text"] == "forward: policy: int = 0,"


def test_partial_pr_scopes_families_to_exposed_files():
    # A CUDA-only file with a literal 448 next to a shared file: only the shared file counts.
    diff = file_diff("vllm/v1/attention/backends/flashinfer.py", added=["FP8_MAX = 448.0"]) \
        + file_diff("vllm/v1/attention/backends/triton_attn.py", added=["    x = 1"])
    result = run_triage(diff, title="[Attention] Tweak FlashInfer")
    assert result["relevance"] == "partial"
    assert "fp8-constant" not in family_ids(result)
    assert "shared-surface" in family_ids(result)


def test_none_pr_keeps_only_housekeeping_and_names_skipped_rules():
    diff = file_diff("requirements/common.txt", added=["zentorch-weekly==5.2.1"]) \
        + file_diff("vllm/entrypoints/openai/api_server.py", added=['    token = os.environ.get("VLLM_API_KEY")'])
    result = run_triage(diff, title="[Frontend] Add a dependency")
    assert result["relevance"] == "none"
    assert rule_ids(result) == ["HK"]
    assert family_ids(result) == ["new-dependency"]
    assert result["skipped_rules"] == ["E1", "E4"]
    assert result["judgment_rules"] == []


def test_fp8_constant_needs_fp8_context_or_a_float_literal():
    fires = ["    x = x.clamp(-448, 448)", "    fp8_max = 240", "    q_max = 224  # fnuz headroom", "    FP8_MAX = 240.0"]
    for line in fires:
        assert "fp8-constant" in family_ids(run_triage(file_diff(BACKEND, added=[line]), title=ROCM_TITLE)), line
    quiet = ["TIMEOUT_S = 240", "MAX_TOKENS = 448  # request cap", '    logger.info("fp8 max is 448")',
             "    retries = 240  # see https://example.com/fp8/448"]
    for line in quiet:
        assert "fp8-constant" not in family_ids(run_triage(file_diff(BACKEND, added=[line]), title=ROCM_TITLE)), line


def test_new_env_var_evidence_quotes_the_new_vllm_name_only():
    diff = file_diff(BACKEND, added=["    value = os.environ.get(var_name)", '    devices = os.environ["HIP_VISIBLE_DEVICES"]',
                                     "    world = os.environ.get(\"WORLD_SIZE\")",
                                     '    knob = os.getenv("VLLM_ROCM_NEW_KNOB", "0") == "1"'])
    evidence = next(f for f in run_triage(diff, title=ROCM_TITLE)["families"] if f["id"] == "new-env-var")["evidence"]
    assert [item["text"] for item in evidence] == ['knob = os.getenv("VLLM_ROCM_NEW_KNOB", "0") == "1"']


def test_new_env_var_ignores_a_reformatted_read_and_reports_a_registry_removal():
    reformat = file_diff("vllm/platforms/rocm.py",
                         removed=['    if os.getenv("VLLM_ROCM_OLD", "0") == "1" and on_gfx9():'],
                         added=["    if (", '        os.getenv("VLLM_ROCM_OLD", "0") == "1" and on_gfx9()', "    ):"])
    assert "new-env-var" not in family_ids(run_triage(reformat, title=ROCM_TITLE))
    removal = file_diff("vllm/envs.py", removed=['    "VLLM_ROCM_OLD": lambda: os.getenv("VLLM_ROCM_OLD", "0") == "1",'],
                        context=["environment_variables = {"])
    evidence = next(f for f in run_triage(removal, title=ROCM_TITLE)["families"] if f["id"] == "new-env-var")["evidence"]
    assert evidence[0]["path"] == "vllm/envs.py" and evidence[0]["text"].startswith('removed: "VLLM_ROCM_OLD"')


def test_kv_cache_unbind_derives_the_strided_input_rule():
    diff = file_diff("vllm/v1/attention/backends/rocm_aiter_fa.py", removed=["    key_cache, value_cache = kv_cache.unbind(0)"],
                     added=["    key_cache, value_cache = kv_cache.unbind(1)"])
    result = run_triage(diff, title=ROCM_TITLE)
    assert "kv-layout" in family_ids(result)
    assert {"via": "family", "id": "kv-layout"} in next(r["sources"] for r in result["rules"] if r["id"] == "D8")


@pytest.mark.parametrize("line", [
    "    assert (seq_lens >= 0).all()",
    "    if mask.any():",
    "    use_split = bool(torch.any(query_lens > 1))",
])
def test_implicit_host_syncs_derive_the_host_sync_rule(line):
    result = run_triage(file_diff(BACKEND, added=[line]), title=ROCM_TITLE)
    assert "cudagraph-unsafe" in family_ids(result)
    assert {"via": "family", "id": "cudagraph-unsafe"} in next(r["sources"] for r in result["rules"] if r["id"] == "B7")


@pytest.mark.parametrize("line", [
    "    assert num_heads % 16 == 0",
    "    if envs.VLLM_ROCM_USE_AITER:",
    '    fast = bool(int(os.getenv("X", "0")))',
])
def test_host_side_checks_are_not_host_syncs(line):
    assert "cudagraph-unsafe" not in family_ids(run_triage(file_diff(BACKEND, added=[line]), title=ROCM_TITLE))


def test_added_in_function_names_the_enclosing_function_and_skips_nested_defs():
    diff = file_diff(LAYER_UTILS, context=["def rocm_unquantized_gemm_impl(x, weight, bias=None):",
                                           "    def helper(t):", "        return t", "    if bias is not None:"],
                     added=["        bias = bias.contiguous()", "        scale = layer_scale.contiguous()"])
    evidence = next(f for f in run_triage(diff, title=ROCM_TITLE)["families"] if f["id"] == "hot-path-copy")["evidence"]
    assert [item["text"] for item in evidence] == ["in rocm_unquantized_gemm_impl: scale = layer_scale.contiguous()"]


def test_added_in_function_falls_back_to_the_hunk_header():
    # file_diff's hunk header names "def host_function():"; a forward_* name there would fire.
    diff = file_diff(LAYER_UTILS, added=["    weight = weight.contiguous()"])
    assert "hot-path-copy" not in family_ids(run_triage(diff, title=ROCM_TITLE))
    header = diff.replace("@@ def host_function():", "@@ def forward_hip(self, x):")
    assert "hot-path-copy" in family_ids(run_triage(header, title=ROCM_TITLE))


def test_module_level_line_after_a_function_is_outside_it():
    diff = file_diff(LAYER_UTILS, context=["    return x"], added=["WEIGHT = weight.contiguous()"])
    diff = diff.replace("@@ def host_function():", "@@ def forward_hip(self, x):")
    assert "hot-path-copy" not in family_ids(run_triage(diff, title=ROCM_TITLE))


def test_returned_local_tensor_is_not_an_alias_of_an_input():
    diff = file_diff(AITER_OPS, context=["def _rocm_aiter_rms_norm_impl(x: torch.Tensor, eps: float) -> torch.Tensor:",
                                         "    out = torch.empty_like(x)"], added=["    return out", "    return eps"])
    assert "custom-op-returns-input" in family_ids(run_triage(diff, title=ROCM_TITLE))
    quiet = file_diff(AITER_OPS, context=["def _rocm_aiter_rms_norm_impl(x: torch.Tensor) -> torch.Tensor:",
                                          "    out = torch.empty_like(x)"], added=["    return out"])
    assert "custom-op-returns-input" not in family_ids(run_triage(quiet, title=ROCM_TITLE))
    view = file_diff(AITER_OPS, context=["def _rocm_aiter_rms_norm_impl(x: torch.Tensor) -> torch.Tensor:"],
                     added=["    return x.view(-1, x.shape[-1])"])
    assert "custom-op-returns-input" in family_ids(run_triage(view, title=ROCM_TITLE))
