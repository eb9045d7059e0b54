"""references/rocm-surface.yaml: its schema, its paths against vLLM main, and its markers."""

import copy
import json

import pytest

from vllm_cases import load_cases
from vllm_tree import vllm_main_paths

from vllm_rocm_review.core.surface import (
    SurfaceError,
    check_surface_paths,
    compile_pattern,
    entry_matches,
    find_markers,
    glob_matches,
    is_glob,
    is_rocm_tuning_config,
    iter_surface_paths,
    load_surface,
    validate_surface,
)

# The rule-ID set fixed by the team contract; the YAML must carry exactly this set.
FIXED_RULE_IDS = {
    "A1", "A2", "B1", "B2", "B3", "B4", "B5", "B6", "B7", "C1", "C2", "C3", "C4", "C5",
    "D1", "D1b", "D2", "D4", "D5", "D6", "D7", "D8", "D9", "D10", "D11", "D12", "E1", "E2", "E3", "E4", "E5", "E6",
    "F1", "F2", "G1", "G1b", "P1", "P2", "P3", "P4", "P5", "P6", "P7", "HK", "V1", "V2", "V3", "V4", "V5", "V6", "V7",
}

# The seed skill's backbone table, as paths in vLLM main.
SEED_BACKBONE = {
    (1, "vllm/v1/attention/backends/rocm_attn.py"),
    (1, "vllm/v1/attention/backends/rocm_aiter_fa.py"),
    (1, "vllm/v1/attention/backends/rocm_aiter_unified_attn.py"),
    (1, "vllm/v1/attention/backends/mla/rocm_aiter_mla*.py"),
    (1, "vllm/model_executor/kernels/linear/scaled_mm/rocm.py"),
    (1, "vllm/model_executor/kernels/linear/scaled_mm/aiter.py"),
    (1, "vllm/model_executor/kernels/linear/mxfp4/aiter.py"),
    (1, "vllm/model_executor/kernels/linear/mxfp8/rocm_native.py"),
    (1, "vllm/model_executor/layers/fused_moe/experts/rocm_aiter_moe.py"),
    (2, "vllm/platforms/rocm.py"),
    (2, "vllm/_aiter_ops.py"),
    (2, "vllm/kernels/aiter_ops.py"),
    (2, "vllm/model_executor/layers/fused_moe/router/aiter_shared_routed_fused_moe_router.py"),
    (2, "vllm/model_executor/kernels/mhc/aiter.py"),
    (3, "requirements/rocm.txt"),
    (3, "requirements/kv_connectors_rocm.txt"),
    (3, ".buildkite/ci_config_rocm.yaml"),
    (3, "docker/Dockerfile.rocm*"),
}

FUSED_MOE_CONFIGS = "vllm/model_executor/layers/fused_moe/configs/"


@pytest.fixture(scope="module")
def surface():
    return load_surface()


@pytest.fixture(scope="module")
def tree_paths():
    return vllm_main_paths()


def marker_ids(surface, kind, text):
    return {marker["id"] for marker in find_markers(surface, kind, text)}


def strong_ids(surface, kind, text):
    return {marker["id"] for marker in find_markers(surface, kind, text) if marker["strength"] == "strong"}


# --- schema -------------------------------------------------------------------------------


def test_bundled_surface_is_valid(surface):
    assert validate_surface(surface) == []


def test_rule_ids_are_the_fixed_set(surface):
    assert set(surface["rule_ids"]) == FIXED_RULE_IDS
    assert len(surface["rule_ids"]) == len(FIXED_RULE_IDS)


def test_every_rule_id_is_reachable(surface):
    reached = {entry["id"] for entry in surface["judgment_rules"]}
    for pr_type in surface["pr_types"]:
        reached.update(pr_type["rules"])
    assert FIXED_RULE_IDS - reached == set()
    assert reached <= FIXED_RULE_IDS


def test_every_pr_type_and_always_entry(surface):
    always = [pr_type for pr_type in surface["pr_types"] if pr_type.get("always")]
    assert [(entry["id"], entry["rules"]) for entry in always] == [("any", ["HK"])]
    by_id = {pr_type["id"]: set(pr_type["rules"]) for pr_type in surface["pr_types"]}
    assert {"V1", "V2"} <= by_id["env-platform"]
    assert {"V3", "E1"} <= by_id["aiter-op"]
    assert {"V4", "C1", "C2"} <= by_id["moe-quant"]
    assert {"D6", "D7", "B3"} <= by_id["compile-custom-op"]
    assert {"E3", "V5"} <= by_id["comm-kv-transfer"]
    assert "V6" in by_id["csrc-hip"]
    assert {"B3", "V2", "E3"} <= by_id["attention"]


def test_backbone_keeps_the_seed_tiers(surface):
    chosen = {(entry["tier"], entry["path"]) for entry in surface["backbone_tiers"]}
    assert SEED_BACKBONE <= chosen
    assert {entry["tier"] for entry in surface["backbone_tiers"]} == {1, 2, 3}


def broken(surface, edit):
    data = copy.deepcopy(surface)
    edit(data)
    return validate_surface(data)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d["markers"]["text"][0].update(pattern="(unclosed"),
         "markers.text[0].pattern '(unclosed' does not compile"),
        (lambda d: d["markers"]["path"][0].update(strength="medium"),
         "markers.path[0].strength must be one of strong, weak, not 'medium'"),
        (lambda d: d["markers"]["guards"][0].update(suppresses=["no-such-marker"]),
         "markers.guards[0].suppresses names 'no-such-marker', which is no marker id"),
        (lambda d: d["markers"]["text"].append(dict(d["markers"]["text"][0])), ".id 'rocm' is repeated"),
        (lambda d: d["backbone_tiers"][0].update(tier=4), "backbone_tiers[0].tier must be 1, 2 or 3, not 4"),
        (lambda d: d["backbone_tiers"][0].update(tier=True), "backbone_tiers[0].tier must be 1, 2 or 3, not True"),
        (lambda d: d["backbone_tiers"][1].pop("why"), "backbone_tiers[1] lacks why"),
        (lambda d: d["backbone_tiers"][0].update(path="/vllm/platforms/rocm.py"),
         "backbone_tiers[0].path '/vllm/platforms/rocm.py' must be a repository-relative file path or glob"),
        (lambda d: d["known_paths"][0].update(moved_to="vllm/platforms/cuda.py"),
         "known_paths[0].moved_to is only allowed with old: true"),
        (lambda d: d["shared_surface"][0].update(exclude="csrc/cpu/*"),
         "shared_surface[0].exclude must be a non-empty list of globs"),
        (lambda d: d["shared_surface"][0].update(owner="someone"), "shared_surface[0] has unknown key 'owner'"),
        (lambda d: d["tuning_configs"].update(amd_device_pattern="device_name=(AMD"),
         "tuning_configs.amd_device_pattern 'device_name=(AMD' does not compile"),
        (lambda d: d["pr_types"][0]["rules"].append("Z9"), "pr_types[0].rules names 'Z9', which is not in rule_ids"),
        (lambda d: d["pr_types"][0].update(paths=[], text=[]),
         "pr_types[0] has neither paths nor text patterns; it can never match"),
        (lambda d: d["pr_types"].append({"id": "again", "label": "x", "always": True, "rules": ["HK"]}),
         "pr_types must hold exactly one always: true entry, found 2"),
        (lambda d: d["judgment_rules"].append({"id": "Q7", "why": "made up"}), ".id 'Q7' is not in rule_ids"),
        (lambda d: d["mori_api"]["mori.io"].append("IOEngine.read()"),
         "mori_api['mori.io']: 'IOEngine.read()' is not a name or Class.member"),
        (lambda d: d.pop("rule_ids"), "missing top-level key 'rule_ids'"),
        (lambda d: d["upstream_pins"]["libraries"][0].update(repo="aiter"),
         "upstream_pins.libraries[0].repo must be OWNER/NAME"),
        (lambda d: d["upstream_pins"]["libraries"][1].update(module="aiter"),
         "upstream_pins.libraries[1].module 'aiter' is repeated"),
        (lambda d: d["upstream_pins"]["libraries"][0].pop("wrapper_class"),
         "upstream_pins.libraries[0]: wrappers and wrapper_class go together"),
        (lambda d: d["upstream_pins"].update(dockerfile="/docker/Dockerfile.rocm_base"),
         "upstream_pins.dockerfile '/docker/Dockerfile.rocm_base' must be a repository-relative"),
        (lambda d: d["context_pack"]["twin_families"][0].update(dir="vllm/v1/attention/backends/"),
         "context_pack.twin_families[0].dir 'vllm/v1/attention/backends/' must be a repository-relative"),
        (lambda d: d["context_pack"]["twin_families"].append(dict(d["context_pack"]["twin_families"][0])),
         "context_pack.twin_families[4].id 'attention-backends' is repeated"),
        (lambda d: d["context_pack"]["env_sets"][0].update(pattern="monkeypatch\\.setenv\\((?P<name>\\w+)"),
         "context_pack.env_sets[0].pattern must capture (?P<name>...) and (?P<value>...)"),
        (lambda d: d["context_pack"].update(hot_entry="(forward"), "context_pack.hot_entry '(forward' does not compile"),
        (lambda d: d["context_pack"]["ci"].update(default_working_dir="/elsewhere"),
         "context_pack.ci.working_dirs must be a mapping that holds default_working_dir"),
        (lambda d: d["context_pack"].pop("callers_per_symbol"), "context_pack lacks callers_per_symbol"),
        (lambda d: d["context_pack"]["code_map"].update(max_lines=-1),
         "context_pack.code_map.max_lines must be a whole number, at least 0"),
        (lambda d: d["context_pack"]["code_map"].update(hunk_globs="*.cu"),
         "context_pack.code_map.hunk_globs must be a list of file-name globs"),
        (lambda d: d["context_pack"]["code_map"].pop("hunk_context"), "context_pack.code_map lacks hunk_context"),
        (lambda d: d["context_pack"]["upstream"].update(max_files=0),
         "context_pack.upstream.max_files must be a positive integer"),
        (lambda d: d["context_pack"]["upstream"]["compiled_ops"][0].update(build_config="/jit/config.json"),
         "context_pack.upstream.compiled_ops[0].build_config '/jit/config.json' must be a repository-relative"),
    ],
)
def test_bad_shapes_are_rejected_precisely(surface, edit, expected):
    problems = broken(surface, edit)
    assert any(expected in problem for problem in problems), problems


def test_unreachable_rule_is_reported(surface):
    def drop_v6(data):
        for pr_type in data["pr_types"]:
            pr_type["rules"] = [rule for rule in pr_type["rules"] if rule != "V6"] or ["HK"]
        data["judgment_rules"] = [entry for entry in data["judgment_rules"] if entry["id"] != "V6"]

    assert "rule V6 is reachable from no pr_type and no judgment_rules entry" in broken(surface, drop_v6)


def test_load_surface_reports_the_first_problem_on_one_line(tmp_path, surface):
    data = copy.deepcopy(surface)
    data["backbone_tiers"][0]["tier"] = 0
    target = tmp_path / "surface.yaml"
    target.write_text(json.dumps(data), encoding="utf-8")  # JSON is YAML
    with pytest.raises(SurfaceError) as info:
        load_surface(target)
    message = str(info.value)
    assert "\n" not in message
    assert message.endswith("backbone_tiers[0].tier must be 1, 2 or 3, not 0")


# --- path helpers ---------------------------------------------------------------------------


def test_globs_cross_slashes_and_plain_paths_match_exactly():
    paths = ["vllm/models/kimi_k3/amd/ops/kda_decode.py", "vllm/models/kimi_k3/nvidia/model.py", "vllm/models/x.py"]
    assert is_glob("vllm/models/*/amd/*") and not is_glob("vllm/platforms/rocm.py")
    assert glob_matches("vllm/models/*/amd/*", paths) == ["vllm/models/kimi_k3/amd/ops/kda_decode.py"]
    assert glob_matches("vllm/models", paths) == []
    assert glob_matches("vllm/models/x.py", paths) == ["vllm/models/x.py"]
    assert glob_matches("VLLM/models/x.py", paths) == []


def test_exclude_globs_carve_out_of_an_entry():
    entry = {"path": "csrc/*", "exclude": ["csrc/cpu/*", "*marlin*"], "why": "x"}
    assert entry_matches(entry, "csrc/libtorch_stable/layernorm_kernels.cu")
    assert not entry_matches(entry, "csrc/cpu/attention.cpp")
    assert not entry_matches(entry, "csrc/libtorch_stable/quantization/marlin/marlin.cu")
    assert not entry_matches(entry, "vllm/csrc/x.cu")


def test_iter_surface_paths_covers_every_path_section(surface):
    sections = {section for section, _ in iter_surface_paths(surface)}
    assert sections == {"known_paths", "shared_surface", "backbone_tiers", "tuning_configs", "upstream_pins",
                        "context_pack", "deep_review"}
    pins = [entry["path"] for section, entry in iter_surface_paths(surface) if section == "upstream_pins"]
    assert pins == ["docker/Dockerfile.rocm_base", "vllm/_aiter_ops.py"]
    tuning = [entry["path"] for section, entry in iter_surface_paths(surface) if section == "tuning_configs"]
    assert tuning == surface["tuning_configs"]["globs"]


def test_check_surface_paths_catches_drift():
    small = {
        "known_paths": [
            {"path": "a/gone.py", "old": True, "moved_to": "a/new.py", "why": "x"},
            {"path": "a/back.py", "old": True, "moved_to": "a/nowhere.py", "why": "x"},
        ],
        "shared_surface": [{"path": "b/*.py", "exclude": ["b/zzz*"], "why": "x"}],
        "backbone_tiers": [{"tier": 1, "path": "c/missing.py", "why": "x"}],
        "tuning_configs": {"globs": ["d/*.json"], "amd_device_pattern": "AMD_"},
    }
    problems = check_surface_paths(small, ["a/new.py", "a/back.py", "b/one.py"])
    assert problems == [
        "known_paths: old location a/back.py exists again in the tree",
        "known_paths: a/back.py moved_to a/nowhere.py, which is not in the tree",
        "shared_surface: b/*.py exclude b/zzz* matches no path",
        "backbone_tiers: c/missing.py is not in the tree",
        "tuning_configs: d/*.json matches no path",
    ]


# --- against vLLM main (../shared/vllm-tree) ---------------------------------------------


def test_every_surface_path_matches_vllm_main(surface, tree_paths):
    assert check_surface_paths(surface, tree_paths) == []


def test_old_locations_are_gone_and_their_successors_exist(surface, tree_paths):
    present = set(tree_paths)
    old = [entry for entry in surface["known_paths"] if entry.get("old")]
    assert len(old) >= 4
    for entry in old:
        assert entry["path"] not in present
        if "moved_to" in entry:
            assert entry["moved_to"] in present


def test_every_pr_type_path_regex_matches_a_real_path(surface, tree_paths):
    for pr_type in surface["pr_types"]:
        for pattern in pr_type.get("paths") or []:
            assert any(compile_pattern(pattern).search(path) for path in tree_paths), (pr_type["id"], pattern)


def test_path_markers_only_name_rocm_files(surface, tree_paths):
    """Every strong path-marker hit in vLLM main is a ROCm file; the Zen CPU files are not."""
    hits = [path for path in tree_paths if strong_ids(surface, "path", path)]
    assert "vllm/platforms/rocm.py" in hits and "cmake/hipify.py" in hits
    assert not [path for path in hits if "zen" in path or "cpu" in path.split("/")]
    assert not [path for path in hits if "nvidia" in path.lower()]


def test_amd_share_of_fused_moe_configs(surface, tree_paths):
    configs = [path for path in tree_paths if path.startswith(FUSED_MOE_CONFIGS) and path.endswith(".json")]
    amd = [path for path in configs if is_rocm_tuning_config(surface, path)]
    assert (len(amd), len(configs)) == (75, 328)  # 72 AMD_Instinct_*, 2 AMD_Radeon_R9700, 1 Radeon_8060S


# --- markers and guards -------------------------------------------------------------------


@pytest.mark.parametrize("text", ["ship", "Ship the wheel", "relationship", "chip", "membership", "hippo",
                                  "[CPU] Ship triton-cpu wheel"])
def test_hip_inside_a_word_is_not_a_marker(surface, text):
    assert marker_ids(surface, "text", text) & {"hip", "hip-identifier"} == set()
    assert strong_ids(surface, "path", f"vllm/utils/{text.split()[-1].lower()}.py") == set()


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        ("use hipblaslt for fp8 gemm", "hip-identifier"),
        ("switch to hipBLASLt", "hip-identifier"),
        ("fails with hipErrorLaunchFailure", "hip-identifier"),
        ("torch.ops._C._hip_graph_capture", "hip"),
        ("HIP_VISIBLE_DEVICES is ignored", "hip"),
        ("[HIP] fix atomicAdd", "hip"),
    ],
)
def test_hip_tokens_and_identifiers_are_markers(surface, text, marker):
    assert marker in strong_ids(surface, "text", text)


@pytest.mark.parametrize(
    "path",
    ["vllm/platforms/rocm.py", "cmake/hipify.py", "tests/rocm/aiter/test_aiter_hipb_mm_linear_kernel.py",
     "csrc/quantization/w8a8/fp8/amd/quant_utils.cuh", "tests/evals/gsm8k/configs/DeepSeek-R1-TP_MI325.yaml",
     "vllm/model_executor/layers/fused_moe/prepare_finalize/mori.py"],
)
def test_rocm_paths_carry_a_strong_path_marker(surface, path):
    assert strong_ids(surface, "path", path)


@pytest.mark.parametrize("text", ["AMD Zen CPU backend via zentorch",
                                  "[ZenCPU] AMD Zen CPU Backend with supported dtypes via zentorch weekly",
                                  "[CPU] faster BF16 GEMM on AMD Zen 5", "AMD EPYC 9654 host, ZenDNN kernels"])
def test_amd_zen_cpu_is_not_amd(surface, text):
    assert strong_ids(surface, "text", text) == set()


def test_amd_gpu_wording_is_amd_and_zen_paths_are_not(surface):
    assert "amd" in marker_ids(surface, "text", "[Attention][AMD] Standardize kv layout to blocks first for AMD")
    assert "amd" in marker_ids(surface, "text", "Tested on MI300X; see the AMD/ROCm notes")
    assert strong_ids(surface, "path", "vllm/platforms/zen_cpu.py") == set()
    assert strong_ids(surface, "path", "vllm/platforms/amd_zen_cpu.py") == set()


@pytest.mark.parametrize("text", ["docker build --platform linux/amd64", "Signed-off-by: A B <a.b@amd.com>",
                                  "see https://rocm.docs.amd.com/en/latest"])
def test_amd_outside_gpu_wording_is_not_amd(surface, text):
    assert "amd" not in marker_ids(surface, "text", text)


@pytest.mark.parametrize("text", ["Add fp8 support", "MXFP4 MoE on Blackwell", "mxfp8 linear via CUTLASS",
                                  "Quark nvfp4 checkpoints"])
def test_bare_quant_formats_are_weak(surface, text):
    found = find_markers(surface, "text", text)
    assert found and {marker["strength"] for marker in found} == {"weak"}


def test_fnuz_is_strong(surface):
    assert "fnuz" in strong_ids(surface, "text", "use float8_e4m3fnuz on gfx942")


@pytest.mark.parametrize(("text", "expected"), [("memorize the prompt", set()), ("MoRI-EP all2all", {"mori"}),
                                                ("waiter thread", set()), ("rocm_aiter_ops", {"rocm", "aiter"})])
def test_word_boundaries_of_other_markers(surface, text, expected):
    assert strong_ids(surface, "text", text) == expected


GUARD_SAMPLES = {"amd-zen-cpu": "AMD Zen CPU backend via zentorch"}


def test_every_guard_removes_a_marker_that_would_otherwise_fire(surface):
    unguarded = copy.deepcopy(surface)
    unguarded["markers"]["guards"] = []
    for guard in surface["markers"]["guards"]:
        sample = GUARD_SAMPLES.get(guard["id"])
        assert sample, f"add a sample text for guard {guard['id']}"
        removed = marker_ids(unguarded, "text", sample) - marker_ids(surface, "text", sample)
        assert removed and removed <= set(guard["suppresses"])


# --- tuning configs -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rocm"),
    [
        ("E=8,N=14336,device_name=AMD_Instinct_MI300X,dtype=fp8_w8a8.json", True),
        ("E=128,N=768,device_name=Radeon_8060S_Graphics,dtype=int4_w4a16.json", True),
        ("E=64,N=768,device_name=AMD_Radeon_R9700,dtype=fp8_w8a8,block_shape=[128,128].json", True),
        ("E=8,N=14336,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8.json", False),
        ("E=8,N=14336,device_name=NVIDIA_H200.json", False),
    ],
)
def test_tuning_configs_count_only_amd_devices(surface, name, rocm):
    assert is_rocm_tuning_config(surface, FUSED_MOE_CONFIGS + name) is rocm


def test_tuning_filter_needs_a_tuning_folder(surface):
    assert not is_rocm_tuning_config(surface, "tests/fixtures/device_name=AMD_Instinct_MI300X.json")
    assert is_rocm_tuning_config(surface, "vllm/kernels/helion/configs/rms_norm_per_block_quant/amd_instinct_mi300x.json")
    assert not is_rocm_tuning_config(surface, "vllm/kernels/helion/configs/rms_norm_per_block_quant/nvidia_h100.json")


# --- the real cases ----------------------------------------------------------------------------


def classify(surface, path):
    if strong_ids(surface, "path", path):
        return "rocm"
    if any(entry_matches(entry, path) for entry in surface["shared_surface"]):
        return "shared"
    if any(entry_matches(entry, path) for entry in surface["known_paths"] if not entry.get("old")):
        return "rocm"
    return "rocm" if is_rocm_tuning_config(surface, path) else None


def test_facts_fit_the_labelled_cases(surface):
    """Full cases carry a strong title marker; partial ones touch ROCm or shared files without one; none touch no
    ROCm file (a shared file there is one the gate demotes from its hunks, which the corpus test checks)."""
    for case in load_cases():
        title = strong_ids(surface, "text", case["subject"])
        kinds = {classify(surface, entry["filename"]) for entry in case["files"]} - {None}
        label = case["category"]
        if label == "full":
            assert title, case["pr_number"]
        elif label == "partial":
            assert not title and kinds, case["pr_number"]
        else:
            assert not title and "rocm" not in kinds, (case["pr_number"], kinds)


# --- csrc sources ROCm builds through hipify ---------------------------------------------------


def test_every_hipified_csrc_source_exists_in_the_vllm_tree(surface):
    paths = set(vllm_main_paths(blobs_only=True))
    listed = [path for paths_ in surface["hipified_csrc"]["lists"].values() for path in paths_]
    assert len(listed) > 30
    assert [path for path in listed if path not in paths] == []


def test_hipified_sources_and_the_csrc_shared_surface_agree(surface):
    """The explicit lists and the csrc/* entry with its CUDA-only carve-outs are two views of one build fact."""
    for paths in surface["hipified_csrc"]["lists"].values():
        for path in paths:
            if not any(entry_matches(entry, path) for entry in surface["known_paths"]):
                assert classify(surface, path) == "shared", path


def test_hipified_csrc_section_is_validated(surface):
    broken = copy.deepcopy(surface)
    broken["hipified_csrc"]["lists"]["VLLM_EXT_SRC"] = ["vllm/not_a_kernel.py"]
    broken["hipified_csrc"]["colour"] = "blue"
    problems = validate_surface(broken)
    assert "hipified_csrc.lists.VLLM_EXT_SRC must be a list of csrc/ paths" in problems
    assert "hipified_csrc has unknown key 'colour'" in problems
