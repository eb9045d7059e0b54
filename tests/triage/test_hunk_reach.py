"""Hunk reach: the blocks around each changed line, recovered from a diff's hunks alone."""

from vllm_rocm_review.core.diff_parse import parse_patch
from vllm_rocm_review.triage.hunk_reach import changed_lines, is_import

SHARED = "vllm/model_executor/layers/fused_moe/layer.py"


def _lines(patch):
    return {line.text.strip(): line for line in changed_lines(parse_patch(SHARED, patch))}


def test_an_added_line_sees_the_if_and_def_around_it_and_the_hunk_section():
    lines = _lines(
        "@@ -10,4 +10,5 @@ class FusedMoE(CustomOp):\n"
        "     def forward(self, x):\n"
        "         if current_platform.is_cuda():\n"
        "             y = x + 1\n"
        "+            y = y * 2\n"
        "         return y\n")
    assert lines["y = y * 2"].enclosing == (
        "if current_platform.is_cuda():", "def forward(self, x):", "class FusedMoE(CustomOp):")


def test_a_sibling_after_the_branch_is_not_inside_it():
    lines = _lines(
        "@@ -10,4 +10,5 @@ class FusedMoE(CustomOp):\n"
        "     def forward(self, x):\n"
        "         if current_platform.is_cuda():\n"
        "             y = x + 1\n"
        "+        z = x - 1\n"
        "         return y\n")
    assert lines["z = x - 1"].enclosing == ("def forward(self, x):", "class FusedMoE(CustomOp):")


def test_a_top_level_line_has_no_enclosing_block():
    lines = _lines("@@ -1,2 +1,3 @@ import torch\n import os\n+import sys\n x = 1\n")
    assert lines["import sys"].enclosing == ()
    assert is_import(lines["import sys"])


def test_removed_lines_read_the_old_side_and_import_lists_count_as_imports():
    lines = _lines(
        "@@ -1,4 +1,4 @@\n"
        " from vllm.utils.flashinfer import (\n"
        "     has_flashinfer,\n"
        "-    has_flashinfer_moe,\n"
        " )\n"
        "+x = has_flashinfer()\n")
    assert lines["has_flashinfer_moe,"].marker == "-"
    assert lines["has_flashinfer_moe,"].enclosing == ("from vllm.utils.flashinfer import (",)
    assert is_import(lines["has_flashinfer_moe,"])
    assert not is_import(lines["x = has_flashinfer()"])


def test_docstrings_open_after_a_header_and_a_hunk_starting_inside_one_counts_as_code():
    lines = _lines(
        "@@ -1,2 +1,7 @@\n"
        "     # end of an earlier docstring\n"
        '     """\n'
        "+def has_aiter() -> bool:\n"
        '+    """Whether aiter is importable.\n'
        "+    Used by the MoE tests.\n"
        '+    """\n'
        '+    return _has_module("aiter")\n')
    assert [lines[text].in_docstring for text in ("def has_aiter() -> bool:", '"""Whether aiter is importable.',
                                                   "Used by the MoE tests.", '"""',
                                                   'return _has_module("aiter")')] == [False, True, True, True, False]
