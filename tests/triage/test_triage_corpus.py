"""The pinned corpus of real vLLM PRs: gate labels, golden results, reading-plan size."""

import functools
import statistics

import pytest

from bless import golden_path, render_golden
from conftest import shared_path
from triage_support import CATALOG, CONFIG
from vllm_cases import build_pr_document, case_ids, load_cases

from vllm_rocm_review.triage.triage import triage

MEDIAN_FRACTION_GOAL = 0.25


@functools.cache
def _triage(number):
    return triage(build_pr_document(number), CONFIG, CATALOG)


@pytest.mark.parametrize("number", case_ids())
def test_relevance_matches_the_label(number):
    case = next(case for case in load_cases() if case["pr_number"] == number)
    assert _triage(number)["relevance"] == case["category"], case["reason"]


@pytest.mark.parametrize("number", case_ids())
def test_result_equals_the_golden_file(number):
    shared_path("upstream", "mori-structure.json")
    expected = golden_path(number)
    assert expected.exists(), f"{expected.name} is missing: run python3 tests/bless.py and review the diff"
    assert render_golden(number) == expected.read_text(encoding="utf-8"), \
        "triage output changed: run python3 tests/bless.py and review git diff tests/golden/"


def test_every_golden_file_is_a_case():
    numbers = case_ids()
    if not numbers:
        pytest.skip("../shared/vllm-cases is absent")
    stored = {path.stem for path in golden_path(0).parent.glob("pr-*.json")}
    assert stored == {f"pr-{number}" for number in numbers}


def test_quick_reading_plan_median_is_at_most_a_quarter_of_the_catalog():
    numbers = case_ids()
    if not numbers:
        pytest.skip("../shared/vllm-cases is absent")
    plans = [_triage(number)["reading_plan"] for number in numbers]
    assert not [plan["missing"] for plan in plans if plan["missing"]], "derived rules without a catalog body"
    assert statistics.median(plan["fraction"] for plan in plans) <= MEDIAN_FRACTION_GOAL


def test_non_rocm_cases_get_only_housekeeping():
    numbers = [case["pr_number"] for case in load_cases() if case["category"] == "none"]
    for number in numbers:
        result = _triage(number)
        assert [rule["id"] for rule in result["rules"]] == ["HK"]
        assert result["reading_plan"]["depth"] == "quick"
