"""SKILL.md and the rule catalog say in the same words when an absent AITER/mori name is no 🔴."""

import re

from conftest import ROOT

OPENING = "An AITER or mori name absent at the pin whose import is guarded"


def sentence_in(path):
    """The sentence that starts with OPENING, with the line breaks and indentation of its file undone."""
    text = " ".join((ROOT / path).read_text(encoding="utf-8").split())
    found = re.findall(re.escape(OPENING) + r"[^.]*\.", text)
    assert len(found) == 1, f"{path} must say it exactly once"
    return found[0]


def test_skill_and_catalog_agree_on_guarded_absent_names():
    catalog = sentence_in("references/vllm-rocm-review-rules.md")
    assert "is not a 🔴 by itself" in catalog
    assert sentence_in("SKILL.md") == catalog
