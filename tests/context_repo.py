"""A small vLLM-shaped git repository (base, an unrelated commit, the PR head with a rename) and its PR document.

Import the fixtures `small_repo` and `small_pr_path` into a test module to use them.
"""

import json
import textwrap

import pytest

from git_pr import git
from git_pr import pr_document

# Unchanged methods that keep the renamed layer file similar enough for git to see a rename.
LAYER_TAIL = '''

            def describe(self):
                return "layer"

            def extra_repr(self):
                return "scale=2"

            def reset(self):
                self.weight = None

            def state(self):
                return {"weight": self.weight}
        '''

BASE_FILES = {
    "vllm/envs.py": '''
        import os
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            VLLM_USE_FOO: bool = False
            VLLM_OLD_KNOB: int = 4
            VLLM_LEVEL: int = 1

        environment_variables = {
            "VLLM_USE_FOO": lambda: os.getenv("VLLM_USE_FOO", "0") == "1",
            "VLLM_OLD_KNOB": lambda: int(os.getenv("VLLM_OLD_KNOB", "4")),
            "VLLM_LEVEL": lambda: int(os.getenv("VLLM_LEVEL", "1")),
        }
        ''',
    "vllm/v1/attention/backends/alpha.py": '''
        class AlphaBackend(AttentionBackend):
            @staticmethod
            def get_kv_cache_shape(num_blocks, block_size):
                return (2, num_blocks, block_size)
        ''',
    "vllm/v1/attention/backends/beta.py": '''
        class BetaBackend(AttentionBackend):
            supports_sinks = False

            @staticmethod
            def get_kv_cache_shape(num_blocks, block_size):
                return (2, num_blocks, block_size)
        ''',
    "vllm/v1/attention/backends/gamma.py": '''
        class GammaBackend(AttentionBackend):
            @staticmethod
            def get_kv_cache_shape(num_blocks, block_size):
                return (num_blocks, 2, block_size)
        ''',
    "vllm/layers/old_name.py": '''
        import torch


        class Layer:
            def forward(self, x):
                return self._compute(x)

            def _compute(self, x):
                return x * 2
        ''' + LAYER_TAIL,
    "vllm/nested.py": '''
        class Outer:
            class Inner:
                def method(self, a):
                    return a
        ''',
    "vllm/ops.py": '''
        import torch

        from vllm.utils import direct_register_custom_op


        def my_op_impl(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
            out.copy_(x)
            return x


        def my_op_fake(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
            return torch.empty_like(x)


        direct_register_custom_op(op_name="my_op", op_func=my_op_impl, mutates_args=["out"], fake_impl=my_op_fake)
        ''',
    "vllm/user.py": '''
        from vllm.nested import Outer


        def use():
            return Outer.Inner().method(1)
        ''',
    "tests/kernels/test_alpha.py": '''
        def test_alpha():
            assert True
        ''',
    ".buildkite/test-amd.yaml": '''
        steps:
        - label: Kernels Alpha
          agent_pool: mi325_1
          working_dir: "/vllm-workspace/tests"
          commands:
          - pytest -v -s kernels/test_alpha.py
        ''',
    ".buildkite/test_areas/attention.yaml": '''
        group: Attention
        steps:
        - label: V1 attention
          commands:
          - pytest -v -s v1/attention
          mirror:
            amd:
              device: mi300_1
        - label: CUDA only
          commands:
          - pytest -v -s misc
        ''',
}

HEAD_CHANGES = {
    "vllm/envs.py": '''
        import os
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            VLLM_USE_FOO: bool = False
            VLLM_LEVEL: int = 2

        environment_variables = {
            "VLLM_USE_FOO": lambda: os.getenv("VLLM_USE_FOO", "0") == "1",
            "VLLM_LEVEL": lambda: int(os.getenv("VLLM_LEVEL", "2")),
        }
        ''',
    "vllm/v1/attention/backends/alpha.py": '''
        class AlphaBackend(AttentionBackend):
            @staticmethod
            def get_kv_cache_shape(num_blocks, block_size, cache_layout="NHD"):
                return (num_blocks, 2, block_size)
        ''',
    "vllm/v1/attention/backends/beta.py": '''
        class BetaBackend(AttentionBackend):
            supports_sinks = True

            @staticmethod
            def get_kv_cache_shape(num_blocks, block_size):
                return (2, num_blocks, block_size)
        ''',
    "vllm/layers/new_name.py": '''
        import torch


        class Layer:
            def forward(self, x):
                return self._compute(x)

            def _compute(self, x):
                weight = self.weight.contiguous()
                residual = torch.empty_like(x)
                return x * weight + residual
        ''' + LAYER_TAIL,
    "vllm/nested.py": '''
        class Outer:
            class Inner:
                def method(self, a, b=0):
                    return a + b
        ''',
    "vllm/ops.py": '''
        import torch

        from vllm.utils import direct_register_custom_op


        def my_op_impl(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
            out.copy_(x)
            return x.view(-1)


        def my_op_fake(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
            return torch.empty_like(x)


        direct_register_custom_op(op_name="my_op", op_func=my_op_impl, mutates_args=["out"], fake_impl=my_op_fake)
        ''',
    "vllm/user.py": '''
        from vllm import envs
        from vllm.nested import Outer


        def use():
            if envs.VLLM_NOT_THERE:
                return None
            return Outer.Inner().method(1)
        ''',
    "tests/kernels/test_alpha.py": '''
        def test_alpha(monkeypatch):
            monkeypatch.setenv("VLLM_USE_FOO", "0")
            assert True
        ''',
    "vllm/lib_ops.py": '''
        import torch


        @torch.library.custom_op("vllm::scale_in_place", mutates_args=())
        def scale_in_place(x: torch.Tensor, factor: float) -> torch.Tensor:
            return x[:, :1]
        ''',
    "tests/v1/attention/test_new.py": '''
        def test_new():
            assert True
        ''',
    "tests/misc/test_orphan.py": '''
        def test_orphan():
            assert True
        ''',
    ".buildkite/test-amd.yaml": '''
        steps:
        - label: Kernels Alpha
          agent_pool: mi325_1
          working_dir: "/vllm-workspace/tests"
          source_file_dependencies:
          - tests/nowhere
          commands:
          - pytest -v -s kernels/test_alpha.py
          - pytest -v -s kernels/test_missing.py
        ''',
}


def write_files(root, files):
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def commit(root, message):
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def two_commit_pr(root, base_files, head_files, number):
    """The PR document of a new repository at ``root``: ``base_files`` committed, then ``head_files`` on top."""
    git(root, "init", "-q")
    write_files(root, base_files)
    base = commit(root, "base")
    write_files(root, head_files)
    head = commit(root, "the PR")
    return pr_document(root, base, head, number)


@pytest.fixture(scope="session")
def small_repo(tmp_path_factory):
    """(work tree, base sha, head sha): base, an unrelated commit, then the PR's head commit with a rename."""
    root = tmp_path_factory.mktemp("vllm-small")
    git(root, "init", "-q")
    write_files(root, BASE_FILES)
    base = commit(root, "base")
    write_files(root, {"docs/readme.md": "unrelated\n"})
    commit(root, "unrelated")
    git(root, "mv", "vllm/layers/old_name.py", "vllm/layers/new_name.py")
    write_files(root, HEAD_CHANGES)
    head = commit(root, "the PR")
    return root, base, head


@pytest.fixture(scope="session")
def small_pr_path(small_repo, tmp_path_factory):
    root, base, head = small_repo
    path = tmp_path_factory.mktemp("pr") / "pr-7001.json"
    path.write_text(json.dumps(pr_document(root, base, head, 7001)), encoding="utf-8")
    return path
