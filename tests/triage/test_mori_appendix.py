"""The reading plan (and so --expand and the brief) carries the mori appendix only when the diff touches mori."""

import json

import pytest

import triage_pr
from triage_support import file_diff
from triage_support import make_document
from triage_support import run_triage

COMMUNICATOR = "vllm/distributed/device_communicators/custom_all_reduce.py"
MORIIO = "vllm/distributed/kv_transfer/kv_connector/v1/moriio/moriio_engine.py"


def sections(result):
    return [section["anchor"] for section in result["reading_plan"]["sections"]]


@pytest.mark.parametrize("diff, title, touched", [
    (file_diff(COMMUNICATOR, added=["        self.buffer_size = size * 2"], removed=["        self.buffer_size = size"]),
     "[ROCm] Grow the all-reduce buffer", False),
    (file_diff(COMMUNICATOR, added=["        self.buffer_size = size * 2"], removed=["        self.buffer_size = size"]),
     "[ROCm] Grow the all-reduce buffer like mori does", False),
    (file_diff(MORIIO, added=["        self.timeout = 30"], removed=["        self.timeout = 10"]),
     "[ROCm] Longer MoRIIO timeout", True),
    (file_diff(COMMUNICATOR, added=["        import mori.shmem", "        mori.shmem.shmem_torch_process_group_init(group)"]),
     "[ROCm] Initialise shmem", True),
])
def test_the_appendix_follows_mori_code_not_the_rule_alone(diff, title, touched):
    result = run_triage(diff, title=title)
    assert "V5" in [rule["id"] for rule in result["rules"]]  # the rule stays on the checklist either way
    assert ("mori-appendix" in sections(result)) == touched


def test_expand_prints_the_appendix_only_for_mori_code(tmp_path, capsys):
    for name, diff, printed in (
            ("plain", file_diff(COMMUNICATOR, added=["        self.buffer_size = size * 2"]), False),
            ("mori", file_diff(MORIIO, added=["        self.timeout = 30"]), True)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(make_document(diff, title="[ROCm] change")), encoding="utf-8")
        capsys.readouterr()
        assert triage_pr.main([str(path), "--expand"]) == 0
        assert ("## mori appendix" in capsys.readouterr().out) == printed
