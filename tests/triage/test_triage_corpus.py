"""The pinned corpus of real vLLM PRs: gate labels, golden results, reading-plan size."""

import functools
import statistics

import pytest

from bless import golden_path, render_golden
from conftest import shared_path
from triage_support import CATALOG, CONFIG
from vllm_cases import build_pr_document, case_ids, load_cases

from vllm_rocm_review.triage.triage import triage

QUICK_MEDIAN_GOAL = 0.25
DEEP_MEDIAN_GOAL = 0.35
PLAN_CEILING = 0.50


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


def test_reading_plans_stay_small_quick_and_deep():
    numbers = case_ids()
    if not numbers:
        pytest.skip("../shared/vllm-cases is absent")
    plans = [_triage(number)["reading_plan"] for number in numbers]
    assert not [plan["missing"] for plan in plans if plan["missing"]], "derived rules without a catalog body"
    quick = [plan["fraction"] for plan in plans if plan["depth"] == "quick"]
    deep = [plan["fraction"] for plan in plans if plan["depth"] == "deep"]
    assert quick and deep
    assert statistics.median(quick) <= QUICK_MEDIAN_GOAL
    assert statistics.median(deep) < DEEP_MEDIAN_GOAL
    assert max(quick + deep) <= PLAN_CEILING


def test_a_deep_plan_cuts_out_type_mandated_bodies_and_lists_the_rest():
    deep = [_triage(number) for number in case_ids() if _triage(number)["reading_plan"]["depth"] == "deep"]
    if not deep:
        pytest.skip("../shared/vllm-cases is absent")
    for result in deep:
        plan = result["reading_plan"]
        cut = {section["anchor"] for section in plan["sections"]}
        listed = {item["id"] for item in plan["checklist"]}
        assert "ai-diagnostic" in cut
        for rule in result["rules"]:
            assert (f"rule-{rule['id'].lower()}" in cut) != (rule["id"] in listed), rule["id"]
        assert set(plan["over_budget"]) <= listed


def test_non_rocm_cases_get_only_housekeeping():
    numbers = [case["pr_number"] for case in load_cases() if case["category"] == "none"]
    for number in numbers:
        result = _triage(number)
        assert [rule["id"] for rule in result["rules"]] == ["HK"]
        assert result["reading_plan"]["depth"] == "quick"


def test_a_tight_budget_demotes_the_least_relevant_type_mandated_bodies_first():
    import types

    from vllm_rocm_review.triage import reading_plan

    numbers = [n for n in case_ids() if _triage(n)["reading_plan"]["depth"] == "deep"]
    if not numbers:
        pytest.skip("../shared/vllm-cases is absent")
    result = _triage(numbers[0])
    document = build_pr_document(numbers[0])
    touched = [entry["filename"] for entry in document["files"]]
    tight = types.SimpleNamespace(checks={**CONFIG.checks,
                                          "reading_plan": {**CONFIG.checks["reading_plan"], "budget": 0.20}})
    args = (CATALOG, result["relevance"], result["rules"], result["judgment_rules"], result["tiers"],
            result["pr_types"], result["families"], result["checks"]["perf-claims"])
    plan = reading_plan.plan(tight, *args, touched_paths=touched)
    assert plan["lines"] <= 0.20 * plan["catalog_lines"] < result["reading_plan"]["lines"]
    assert plan["over_budget"]
    assert set(plan["over_budget"]) <= {item["id"] for item in plan["checklist"]}
    roomy = types.SimpleNamespace(checks={**CONFIG.checks,
                                          "reading_plan": {**CONFIG.checks["reading_plan"], "budget": 1.0}})
    assert reading_plan.plan(roomy, *args, touched_paths=touched)["over_budget"] == []


def test_type_mandated_bodies_kept_name_the_touched_files_at_least_as_often_as_those_demoted():
    import posixpath

    from vllm_rocm_review.core.catalog import rule_anchor

    checked = 0
    for number in case_ids():
        result = _triage(number)
        plan = result["reading_plan"]
        if plan["depth"] != "deep" or not plan["over_budget"]:
            continue
        touched = [entry["filename"] for entry in build_pr_document(number)["files"]]
        type_only = {rule["id"] for rule in result["rules"] if rule["id"] != "HK"
                     and all(source["via"] == "type" for source in rule["sources"])}

        def named(rule_id):
            body = CATALOG.cut(rule_anchor(rule_id))
            return sum(1 for path in touched if path in body or posixpath.basename(path) in body)

        cut = {section["anchor"] for section in plan["sections"]}
        kept = [named(rule) for rule in type_only if rule_anchor(rule) in cut]
        demoted = [named(rule) for rule in type_only if rule in plan["over_budget"]]
        if kept and demoted:
            assert min(kept) >= max(demoted), number
            checked += 1
    if not checked:
        pytest.skip("no corpus case demotes type-mandated bodies")
