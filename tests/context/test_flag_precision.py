"""Regression tests for the false flags found on real merged PRs: each repository shape below is the
small form of code that once tripped OP-ALIASING, HOT-PATH-COPY or TWIN-DIVERGES, next to the shape the
flag must still catch."""

import pytest

from context_repo import two_commit_pr
from vllm_rocm_review.context.pack import build_pack
from vllm_rocm_review.core.surface import load_surface

SURFACE = load_surface()
BACKENDS = "vllm/v1/attention/backends"
MOE = "vllm/model_executor/layers/fused_moe"


def backend(name, layout, extra=""):
    return f'''
        from vllm.v1.attention.backend import AttentionImpl


        class {name}Impl(AttentionImpl):
            def forward(self, layer, query, kv_cache):
                key_cache, value_cache = kv_cache.unbind({layout})
                return query

            def do_kv_cache_update(self, layer, key, value, kv_cache):
                key_cache, value_cache = kv_cache.unbind({layout})
                key_cache.copy_(key)
        {extra}'''


CONNECTOR_STATE = '''
    from dataclasses import dataclass


    @dataclass
    class TransferState:
        request_id: str
        block_ids: list
        tp_rank: int = 0

        def describe(self):
            return self.request_id
    '''

BASE = {
    "vllm/ops.py": '''
        import torch

        from vllm.utils import direct_register_custom_op


        def fresh_impl(x: torch.Tensor, scale: float) -> torch.Tensor:
            return x


        def fresh_fake(x: torch.Tensor, scale: float) -> torch.Tensor:
            return torch.empty_like(x)


        direct_register_custom_op(op_name="fresh", op_func=fresh_impl, mutates_args=[], fake_impl=fresh_fake)


        def viewed_impl(x: torch.Tensor) -> torch.Tensor:
            return x


        direct_register_custom_op(op_name="viewed", op_func=viewed_impl, mutates_args=[])


        def scaled_impl(x: torch.Tensor) -> torch.Tensor:
            return x


        direct_register_custom_op(op_name="scaled", op_func=scaled_impl, mutates_args=[])
        ''',
    "vllm/layers/mixer.py": '''
        import torch


        class Mixer:
            def forward(self, x, w):
                return self._mix(x, w)

            def _mix(self, x, w):
                if x.dim() == 3:
                    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
                    return torch.matmul(x, w, out=out)
                return torch.matmul(x, w)


        def mix_fake(x, w):
            return x
        ''',
    f"{BACKENDS}/alpha.py": backend("Alpha", 0),
    f"{BACKENDS}/beta.py": backend("Beta", 0),
    f"{BACKENDS}/gamma.py": backend("Gamma", 0, extra='''

        class GammaHelper:
            def forward(self, x):
                return x
        '''),
    "vllm/distributed/kv_transfer/kv_connector/v1/moriio/common.py": CONNECTOR_STATE,
    "vllm/distributed/kv_transfer/kv_connector/v1/other.py": CONNECTOR_STATE.replace("TransferState", "OtherState"),
}

HEAD = {
    "vllm/ops.py": '''
        import torch

        from vllm.utils import direct_register_custom_op


        def fresh_impl(x: torch.Tensor, scale: float) -> torch.Tensor:
            x = torch.empty_like(x)
            x.fill_(scale)
            return x


        def fresh_fake(x: torch.Tensor, scale: float) -> torch.Tensor:
            return torch.empty_like(x)


        direct_register_custom_op(op_name="fresh", op_func=fresh_impl, mutates_args=[], fake_impl=fresh_fake)


        def viewed_impl(x: torch.Tensor) -> torch.Tensor:
            x = x.view(-1)
            return x


        direct_register_custom_op(op_name="viewed", op_func=viewed_impl, mutates_args=[])


        def scaled_impl(x: torch.Tensor) -> torch.Tensor:
            x *= 2
            return x


        direct_register_custom_op(op_name="scaled", op_func=scaled_impl, mutates_args=[])
        ''',
    "vllm/layers/mixer.py": '''
        import torch


        class Mixer:
            def forward(self, x, w):
                return self._mix(x, w)

            def _mix(self, x, w):
                product = torch.matmul(x, w)
                gathered = torch.cat([product, x], dim=-1).contiguous()
                scratch = torch.empty(x.shape[0], device=x.device)
                turned = x.transpose(0, 1).contiguous()
                return product.contiguous() + gathered + turned, scratch


        def mix_fake(x, w):
            out = torch.zeros(x.shape, dtype=x.dtype, device=x.device)
            return out.contiguous()
        ''',
    f"{BACKENDS}/alpha.py": backend("Alpha", 1),
    f"{BACKENDS}/beta.py": backend("Beta", 1),
    f"{BACKENDS}/gamma.py": backend("Gamma", 0, extra='''

        class GammaHelper:
            def forward(self, x):
                return x + 0
        '''),
    f"{BACKENDS}/delta.py": backend("Delta", 1),
    "vllm/distributed/kv_transfer/kv_connector/v1/moriio/common.py": CONNECTOR_STATE.replace(
        "tp_rank: int = 0", "tp_rank: int = 1").replace("return self.request_id", "return self.request_id + '!'"),
    "vllm/distributed/kv_transfer/kv_connector/v1/other.py": CONNECTOR_STATE.replace("TransferState", "OtherState")
    + "\n\n    def note():\n        return None\n",
}


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    return build_pack(two_commit_pr(tmp_path_factory.mktemp("precision"), BASE, HEAD, 7100), None,
                      SURFACE["context_pack"], SURFACE)


def flagged(pack, code):
    return sorted((f["path"], f["line"]) for f in pack["flags"] if f["code"] == code)


def test_op_input_rebound_to_a_fresh_tensor_is_no_alias(pack):
    returned = {op["op"]: op["returns_inputs"] for op in pack["custom_ops"]}
    assert returned == {"fresh": [], "viewed": ["x"], "scaled": ["x"]}
    assert flagged(pack, "OP-ALIASING") == [("vllm/ops.py", 19), ("vllm/ops.py", 27)]


def test_hot_path_flags_only_a_real_copy(pack):
    listed = [(c["line"], c["op"], c["tensor"]) for c in pack["hot_path_copies"]]
    # the fresh cat(...).contiguous(), the product.contiguous() and the fake's zeros are skipped;
    # the empty output buffer is listed, not flagged
    assert listed == [(11, "empty", None), (12, "contiguous", "x.transpose(0, 1)")]
    assert flagged(pack, "HOT-PATH-COPY") == [("vllm/layers/mixer.py", 12)]


def test_moved_allocation_is_not_new(tmp_path):
    mixer = "vllm/layers/mixer.py"
    document = two_commit_pr(tmp_path, {mixer: BASE[mixer]}, {mixer: BASE[mixer].replace(
        '''                if x.dim() == 3:
                    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
                    return torch.matmul(x, w, out=out)
                return torch.matmul(x, w)''', '''                out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
                return torch.matmul(x, w, out=out)''')}, 7101)
    result = build_pack(document, None, SURFACE["context_pack"], SURFACE)
    assert result["hot_path_copies"] == [] and result["flags"] == []


def test_twin_flag_needs_the_same_contract_and_a_sweep(pack):
    twin = {t["name"]: t for t in pack["twins"]}
    # GammaHelper.forward shares the name but not the AttentionImpl contract: no twin
    assert twin["forward"]["unchanged_twins"] == [f"{BACKENDS}/gamma.py:5"]
    # dataclass fields of unrelated connector classes are never twins
    assert twin["tp_rank"]["unchanged_twins"] == []
    messages = {f["message"].split(" ", 1)[0]: f for f in pack["flags"] if f["code"] == "TWIN-DIVERGES"}
    # forward and do_kv_cache_update change in alpha and beta (delta is new): gamma, also edited, is left
    assert sorted(messages) == ["do_kv_cache_update", "forward"]
    assert "in files the PR also edits: vllm/v1/attention/backends/gamma.py:" in messages["forward"]["message"]
    # one changed file with no signature change is no sweep: the connector's describe() raises nothing
    assert "describe" not in messages


def test_twin_flags_are_capped_and_ranked(tmp_path):
    experts = {f"{MOE}/expert_{index:02d}.py": f'''
        from vllm.model_executor.layers.fused_moe import modular_kernel as mk


        class Expert{index:02d}(mk.FusedMoEExpertsModular):
            def apply(self, output, hidden_states):
                output.copy_(hidden_states)
        ''' for index in range(12)}
    grown = {f"{MOE}/expert_00.py": experts[f"{MOE}/expert_00.py"].replace(
        "def apply(self, output, hidden_states):", "def apply(self, output, hidden_states, scale=None):")}
    result = build_pack(two_commit_pr(tmp_path, experts, grown, 7102), None, SURFACE["context_pack"], SURFACE)
    [found] = [f for f in result["flags"] if f["code"] == "TWIN-DIVERGES"]
    assert "its signature changes in" in found["message"] and "not in 11 twin(s)" in found["message"]
    named = found["message"].rsplit(": ", 1)[1].split(", ")
    assert len(named) == 5 and named[0] == f"{MOE}/expert_01.py:5" and found["message"].endswith(" …")
