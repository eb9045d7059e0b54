"""The case loader itself: every real diff splits into exactly the files cases.jsonl lists."""

import pytest

from vllm_cases import build_pr_document, case_ids, load_case, split_diff


@pytest.mark.parametrize("number", case_ids() or [pytest.param(0, marks=pytest.mark.skip("../shared/vllm-cases absent"))])
def test_split_diff_matches_case_stats(number):
    case, diff, _ = load_case(number)
    split = split_diff(diff)
    assert sorted(f["filename"] for f in split) == sorted(f["filename"] for f in case["files"])
    for entry in split:
        if entry["patch"] is None:
            continue
        lines = entry["patch"].split("\n")
        stat = next(f for f in case["files"] if f["filename"] == entry["filename"])
        assert sum(1 for l in lines if l.startswith("+")) == stat["additions"]
        assert sum(1 for l in lines if l.startswith("-")) == stat["deletions"]


@pytest.mark.parametrize("number", case_ids()[:1] or [pytest.param(0, marks=pytest.mark.skip("../shared/vllm-cases absent"))])
def test_pr_document_has_fetch_keys(number):
    document = build_pr_document(number)
    assert set(document) >= {"pr", "diff", "files", "issue_comments", "review_comments", "reviews", "linked_issues", "meta"}
