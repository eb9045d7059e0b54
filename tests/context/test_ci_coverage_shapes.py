"""AMD CI coverage over the ways vLLM's .buildkite files declare an AMD step: the AMD pipeline
files, `mirror: amd:` blocks, the older `mirror_hardwares: [amd...]` lists, and commands that name
a test as `tests/...`, as a bare directory after pytest, or exclude it with --ignore."""

import pytest

from context_repo import two_commit_pr
from vllm_rocm_review.context.pack import build_pack
from vllm_rocm_review.core.surface import load_surface

SURFACE = load_surface()
TESTS = ["tests/reasoning/test_parser.py", "tests/distributed/test_custom_ar.py", "tests/compile/test_fusion_attn.py",
         "tests/lora/test_skipped.py", "tests/lora/test_kept.py", "tests/misc/test_cuda_only.py"]

PIPELINES = {
    ".buildkite/test-amd.yaml": '''
        steps:
        - label: Utils (CPU)
          agent_pool: mi250_1
          commands:
          - pytest -v -s reasoning --ignore=reasoning/test_other.py
        - label: Distributed
          agent_pool: mi300_2
          commands:
          - pytest -v -s tests/distributed/test_custom_ar.py
        - label: LoRA
          agent_pool: mi300_1
          commands:
          - pytest -v -s lora --ignore=lora/test_skipped.py
        ''',
    ".buildkite/test-pipeline.yaml": '''
        steps:
        - label: PyTorch Compilation Unit Tests
          mirror_hardwares: [amdexperimental]
          commands:
          - pytest -v -s compile/test_fusion_attn.py
        - label: CUDA only
          mirror_hardwares: [intel]
          commands:
          - pytest -v -s misc/test_cuda_only.py
        ''',
}


@pytest.fixture(scope="module")
def coverage(tmp_path_factory):
    tests = {path: "def test_it():\n    assert True\n" for path in TESTS}
    document = two_commit_pr(tmp_path_factory.mktemp("ci-shapes"), PIPELINES, tests, 7200)
    return build_pack(document, None, SURFACE["context_pack"], SURFACE)["ci_coverage"]


def test_bare_directory_after_pytest_covers_its_tests(coverage):
    assert coverage["tests/reasoning/test_parser.py"] == [".buildkite/test-amd.yaml: Utils (CPU) [mi250_1]"]


def test_a_path_written_from_the_repository_root_covers_it(coverage):
    assert coverage["tests/distributed/test_custom_ar.py"] == [".buildkite/test-amd.yaml: Distributed [mi300_2]"]


def test_mirror_hardwares_list_is_an_amd_mirror(coverage):
    assert coverage["tests/compile/test_fusion_attn.py"] == [
        ".buildkite/test-pipeline.yaml: PyTorch Compilation Unit Tests [amdexperimental]"]
    assert coverage["tests/misc/test_cuda_only.py"] == []


def test_an_ignored_test_is_not_covered(coverage):
    assert coverage["tests/lora/test_skipped.py"] == []
    assert coverage["tests/lora/test_kept.py"] == [".buildkite/test-amd.yaml: LoRA [mi300_1]"]
