"""The catalog records once which vLLM commit its facts were checked at; every other mention agrees."""

import os
import re
import subprocess

import pytest

from conftest import ROOT
from vllm_rocm_review.core.catalog import load_catalog

CLONE_ENV = "VLLM_ROCM_REVIEW_TEST_CLONE"
# A short commit id: 7-12 hex digits with at least one letter and one digit, not a changelog's name@sha.
SHORT_SHA = re.compile(r"(?<![@\w])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,12}(?!\w)")
# Mentions that name another repository's commit (mori's python API was read at its own commit).
OTHER_REPOSITORY = re.compile(r"ROCm/mori|mori@|aiter@|ATOM@")


def vllm_commit_mentions(path, skip_changelog=False):
    """(line number, sha) of every short commit id in ``path`` outside other repositories' mentions."""
    text = path.read_text(encoding="utf-8")
    if skip_changelog:
        text = text.split('<a id="changelog"></a>')[0]
    return [(number, match.group(0)) for number, line in enumerate(text.splitlines(), 1)
            if not OTHER_REPOSITORY.search(line) for match in SHORT_SHA.finditer(line)]


def test_the_catalog_records_a_commit_and_a_date():
    commit, date = load_catalog().verified_at()
    assert re.fullmatch(r"[0-9a-f]{7,40}", commit) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", date)
    # the scanner below sees the record itself, so the agreement test is not vacuous
    assert (5, commit) in vllm_commit_mentions(ROOT / "references/vllm-rocm-review-rules.md", skip_changelog=True)


@pytest.mark.parametrize("name, skip_changelog", [
    ("references/vllm-rocm-review-rules.md", True),
    ("references/rocm-surface.yaml", False),
    ("references/review-lenses.md", False),
    ("SKILL.md", False),
    ("README.md", False),
])
def test_every_other_view_names_the_recorded_commit(name, skip_changelog):
    commit, _ = load_catalog().verified_at()
    others = [(line, sha) for line, sha in vllm_commit_mentions(ROOT / name, skip_changelog)
              if not commit.startswith(sha) and not sha.startswith(commit)]
    assert others == [], f"{name} names vLLM commits other than the catalog's {commit}"


def test_the_recorded_date_is_the_commit_date_in_the_clone():
    clone = os.environ.get(CLONE_ENV)
    if not clone:
        pytest.skip(f"needs a full vLLM clone: set {CLONE_ENV}")
    commit, date = load_catalog().verified_at()
    done = subprocess.run(["git", "--git-dir", clone, "show", "-s", "--format=%cs", commit],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == date
