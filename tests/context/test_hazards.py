"""Hazards on added lines (context/hazards.py): for each detector a shape it must flag and the
nearby shape it must leave alone, in one small repository the test builds."""

import pytest

from context_repo import two_commit_pr
from vllm_rocm_review.context.pack import build_pack
from vllm_rocm_review.core.surface import load_surface

SURFACE = load_surface()
EVERY_CODE = {**SURFACE["context_pack"], "flags_off": []}

LAYER = '''
    class Runner:
        def setup(self):
            if self.quant_config is not None:
                self.scale = self.quant_config.scale
            return self

        def run(self, x):
            return x
    '''

TABLES = '''
    from vllm.platforms import current_platform

    if current_platform.is_cuda():
        KERNELS = {"fp8": 1}


    def pick(name):
        if current_platform.is_cuda():
            return KERNELS[name]
        return None


    def other(name):
        if current_platform.is_cuda():
            return name
        return None
    '''

CMAKE_BASE = '''
    set(VLLM_EXT_SRC
      "csrc/cache.cu"
      "csrc/moved.cu"
      "csrc/quiet.cu")

    if(VLLM_GPU_LANG STREQUAL "CUDA")
      list(APPEND VLLM_EXT_SRC
        "csrc/cuda_only.cu")
    endif()
    '''

CMAKE_HEAD = '''
    set(VLLM_EXT_SRC
      "csrc/cache.cu")

    if(VLLM_GPU_LANG STREQUAL "CUDA")
      list(APPEND VLLM_EXT_SRC
        "csrc/moved.cu"
        "csrc/quiet.cu"
        "csrc/cuda_only.cu")
    endif()
    '''

BINDINGS = '''
    #include "ops.h"

    TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
      ops.impl("moved_op", torch::kCUDA, &moved_op);
    #ifndef USE_ROCM
      ops.impl("quiet_op", torch::kCUDA, &quiet_op);
    #endif
    }
    '''

BASE = {
    "vllm/layers/runner.py": LAYER,
    "vllm/layers/guarded.py": LAYER,
    "vllm/kernels/tables.py": TABLES,
    "vllm/kernels/untouched.py": TABLES,
    "vllm/layers/neutral.py": "import torch\n",
    "vllm/platforms/rocm_helpers.py": "import torch\n",
    "vllm/layers/cached.py": "import functools\n",
    "vllm/layers/streams.py": "import torch\n",
    ".buildkite/test-amd.yaml": "steps:\n- label: Kernels\n  commands:\n  - pytest -v -s kernels/test_a.py\n",
    "CMakeLists.txt": CMAKE_BASE,
    "csrc/torch_bindings.cpp": BINDINGS,
    "csrc/moved.cu": "void moved_op(torch::Tensor& out) {\n}\n",
    "csrc/quiet.cu": "void quiet_op(torch::Tensor& out) {\n}\n",
}

HEAD = {
    # (a) bare x.attr.y in a new method; the guarded copy checks it locally
    "vllm/layers/runner.py": LAYER.replace("            return x\n", "            return x * self.quant_config.scale\n"),
    "vllm/layers/guarded.py": LAYER.replace("            return x\n", (
        "            if self.quant_config is None:\n"
        "                return x\n"
        "            return x * self.quant_config.scale\n")),
    # (b) pick() widens its guard and reads KERNELS; other() widens its guard but needs no table
    "vllm/kernels/tables.py": TABLES.replace('''    def pick(name):
        if current_platform.is_cuda():''', '''    def pick(name):
        if current_platform.is_cuda_alike():'''),
    "vllm/kernels/untouched.py": TABLES.replace('''    def other(name):
        if current_platform.is_cuda():''', '''    def other(name):
        if current_platform.is_cuda_alike():'''),
    # (c) module-level platform import in neutral code; a lazy one and one in a platform file
    "vllm/layers/neutral.py": '''
        import torch

        from vllm.platforms.rocm import on_gfx950


        def lazy():
            from vllm.platforms.rocm import on_mi3xx

            return on_mi3xx() and on_gfx950()
        ''',
    "vllm/platforms/rocm_helpers.py": "import torch\n\nfrom vllm.platforms.rocm import on_gfx950\n",
    # (d) a cache on a nested function; a module-level cached function is fine
    "vllm/layers/cached.py": '''
        import functools


        @functools.cache
        def table(n):
            return list(range(n))


        def build(n):
            @functools.lru_cache(maxsize=8)
            def square(k):
                return k * k

            return square(n)
        ''',
    # (f) the raw stream call; the helper is fine, and so is the call inside a comment
    "vllm/layers/streams.py": '''
        import torch

        from vllm.utils.torch_utils import current_stream


        def record():
            raw = torch.cuda.current_stream()
            tracked = current_stream()  # not torch.cuda.current_stream()
            return raw, tracked
        ''',
    # (g) a commented-out command; a plain explanatory comment is fine
    ".buildkite/test-amd.yaml": ("steps:\n- label: Kernels\n  commands:\n  - pytest -v -s kernels/test_a.py\n"
                                 "  # - pytest -v -s kernels/test_flaky.py\n  # flaky on mi300, tracked upstream\n"),
    # (h) moved.cu and quiet.cu move to the CUDA-only block; only moved_op is still registered for ROCm
    "CMakeLists.txt": CMAKE_HEAD,
}


@pytest.fixture(scope="module")
def flags(tmp_path_factory):
    pack = build_pack(two_commit_pr(tmp_path_factory.mktemp("hazards"), BASE, HEAD, 7300), None, EVERY_CODE, SURFACE)
    found = {}
    for entry in pack["flags"]:
        found.setdefault(entry["code"], []).append((entry["path"], entry["line"]))
    return found, pack


def test_optional_attribute_dereferenced_without_a_check(flags):
    found, _ = flags
    assert found["OPTIONAL-DEREF"] == [("vllm/layers/runner.py", 8)]  # not guarded.py, which checks it
    # off by default: it judged under 60% on recent main commits (callers check what the callee does not)
    assert "OPTIONAL-DEREF" in SURFACE["context_pack"]["flags_off"]


def test_widened_guard_over_a_narrow_table(flags):
    found, _ = flags
    assert found["GUARD-WIDENED"] == [("vllm/kernels/tables.py", 8)]  # other() uses no table: no flag


def test_platform_module_imported_at_module_level_in_neutral_code(flags):
    found, _ = flags
    assert found["PLATFORM-IMPORT"] == [("vllm/layers/neutral.py", 3)]  # not the lazy import, not platforms/


def test_cache_on_a_nested_function(flags):
    found, _ = flags
    assert found["NESTED-CACHE"] == [("vllm/layers/cached.py", 10)]  # not the module-level @functools.cache


def test_raw_cuda_stream_but_not_the_helper_or_a_comment(flags):
    found, _ = flags
    assert found["RAW-CUDA-STREAM"] == [("vllm/layers/streams.py", 7)]


def test_commented_out_ci_command_but_not_a_remark(flags):
    found, _ = flags
    assert found["CI-COMMENTED-COMMAND"] == [(".buildkite/test-amd.yaml", 5)]


def test_source_moved_to_cuda_only_while_still_registered_for_rocm(flags):
    found, pack = flags
    assert found["CSRC-ROCM-DROPPED"] == [("CMakeLists.txt", 6)]  # quiet.cu's op is registered under #ifndef USE_ROCM
    message = next(f["message"] for f in pack["flags"] if f["code"] == "CSRC-ROCM-DROPPED")
    assert "csrc/moved.cu" in message and "csrc/torch_bindings.cpp:4" in message and "moved_op" in message
