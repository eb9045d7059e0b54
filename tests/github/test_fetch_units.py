"""The fetch pieces that need no HTTP: PR references, linked issues, diff rebuild, CI summary, schema."""

import copy
import json

import pytest
from conftest import ROOT
from vllm_tree import vllm_main_paths

from vllm_rocm_review.github.ci_checks import build_checks
from vllm_rocm_review.github.diff_rebuild import rebuild_unified_diff
from vllm_rocm_review.github.linked_issues import find_issue_references
from vllm_rocm_review.github.pr_ref import PullRef
from vllm_rocm_review.github.pr_ref import PullRefError
from vllm_rocm_review.github.pr_ref import parse_pr_ref
from vllm_rocm_review.core.pr_schema import validate_pr_document
from vllm_rocm_review.core.skill_paths import EXAMPLE_PR

VLLM = "vllm-project/vllm"

# --- PR references ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "repo", "expected"),
    [
        ("12345", None, PullRef("vllm-project", "vllm", 12345)),
        ("#12345", None, PullRef("vllm-project", "vllm", 12345)),
        (" 12345 ", None, PullRef("vllm-project", "vllm", 12345)),
        ("12345", "ROCm/vllm", PullRef("ROCm", "vllm", 12345)),
        ("ROCm/vllm#7", None, PullRef("ROCm", "vllm", 7)),
        ("https://github.com/vllm-project/vllm/pull/12345", None, PullRef("vllm-project", "vllm", 12345)),
        ("https://github.com/vllm-project/vllm/pull/12345/files", None, PullRef("vllm-project", "vllm", 12345)),
        ("https://github.com/vllm-project/vllm/pull/12345/files#diff-abc", None, PullRef("vllm-project", "vllm", 12345)),
        ("http://github.com/a-b/c.d_e/pull/3?tab=commits", None, PullRef("a-b", "c.d_e", 3)),
        ("https://ghe.example.com/team/vllm/pull/9", None, PullRef("team", "vllm", 9)),
        ("github.com/vllm-project/vllm/pull/12345", None, PullRef("vllm-project", "vllm", 12345)),
        ("www.github.com/ROCm/vllm/pull/8/files", None, PullRef("ROCm", "vllm", 8)),
        ("https://github.com/vllm-project/vllm/pull/5", "vllm-project/vllm", PullRef("vllm-project", "vllm", 5)),
    ],
)
def test_pr_references_parse(text, repo, expected):
    assert parse_pr_ref(text, repo) == expected


@pytest.mark.parametrize(
    ("text", "repo", "message"),
    [
        ("", None, "cannot read PR"),
        ("abc", None, "cannot read PR"),
        ("#", None, "cannot read PR"),
        ("-5", None, "cannot read PR"),
        ("0", None, "must be positive"),
        ("vllm#12", None, "cannot read PR"),
        ("https://github.com/vllm-project/vllm/issues/12", None, "is an issue URL; pass a pull request"),
        ("github.com/vllm-project/vllm/issues/12#issuecomment-1", None, "is an issue URL; pass a pull request"),
        ("ROCm/vllm/pull/12", None, "cannot read PR"),
        ("https://github.com/vllm-project/vllm/pull/", None, "cannot read PR"),
        ("12", "not-a-repo", "is not OWNER/NAME"),
        ("12", "a/b/c", "is not OWNER/NAME"),
        ("ROCm/vllm#7", "vllm-project/vllm", "drop one of them"),
    ],
)
def test_bad_pr_references_are_rejected(text, repo, message):
    with pytest.raises(PullRefError, match=message):
        parse_pr_ref(text, repo)


# --- linked issues ---------------------------------------------------------------------------


def test_closing_keywords_come_first_then_order_of_appearance():
    body = "See #10 and ROCm/aiter#3.\n\nFixes #20, resolves: https://github.com/vllm-project/vllm/issues/30"
    assert find_issue_references(body, VLLM, "github.com", exclude_number=99) == [
        (VLLM, 20), (VLLM, 30), (VLLM, 10), ("ROCm/aiter", 3),
    ]


def test_references_skip_code_comments_duplicates_and_the_pr_itself():
    body = (
        "<!-- FIX #1111 (link existing issues this PR will resolve) -->\n"
        "Self #99, dup #5 and #5 again, VLLM-Project/vllm#5 too.\n"
        "```\nstep #7 failed\n```\ninline `#8` and an anchor foo#9 and &#38; entity"
    )
    assert find_issue_references(body, VLLM, "github.com", exclude_number=99) == [(VLLM, 5)]


def test_references_are_capped_at_five_and_ignore_other_hosts():
    body = " ".join(f"#{n}" for n in range(1, 9)) + " https://example.com/vllm-project/vllm/issues/77"
    assert [number for _, number in find_issue_references(body, VLLM, "github.com")] == [1, 2, 3, 4, 5]
    assert find_issue_references(None, VLLM, "github.com") == []


# --- diff rebuild ----------------------------------------------------------------------------


def test_rebuilt_diff_headers_for_every_status():
    files = [
        {"filename": "a.py", "status": "modified", "patch": "@@ -1 +1 @@\n-x\n+y"},
        {"filename": "new.py", "status": "added", "patch": "@@ -0,0 +1 @@\n+z"},
        {"filename": "gone.py", "status": "removed", "patch": "@@ -1 +0,0 @@\n-z"},
        {"filename": "b/new_name.py", "previous_filename": "b/old_name.py", "status": "renamed", "patch": "@@ -1 +1 @@\n-p\n+q"},
        {"filename": "c/moved.py", "previous_filename": "c/orig.py", "status": "renamed"},
        {"filename": "img.png", "status": "modified"},
    ]
    assert rebuild_unified_diff(files) == (
        "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"
        "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+z\n"
        "diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n"
        "diff --git a/b/old_name.py b/b/new_name.py\nrename from b/old_name.py\nrename to b/new_name.py\n"
        "--- a/b/old_name.py\n+++ b/b/new_name.py\n@@ -1 +1 @@\n-p\n+q\n"
        "diff --git a/c/orig.py b/c/moved.py\nrename from c/orig.py\nrename to c/moved.py\n"
        "diff --git a/img.png b/img.png\n"
    )


# --- CI summary ------------------------------------------------------------------------------


def test_check_outcomes_cover_every_conclusion_and_state():
    runs = [
        {"name": name, "status": "completed", "conclusion": conclusion, "details_url": None, "app": {"slug": "gha"}}
        for name, conclusion in [
            ("ok", "success"), ("bad", "failure"), ("boot", "startup_failure"), ("n", "neutral"), ("old", "stale"),
            ("skip", "skipped"), ("stop", "cancelled"), ("slow", "timed_out"), ("ask", "action_required"),
        ]
    ] + [{"name": "queued", "status": "queued", "conclusion": None, "app": None}]
    statuses = [{"context": c, "state": s} for c, s in [("k", "success"), ("amd", "error"), ("p", "pending"), ("f", "failure")]]
    checks = build_checks(runs, statuses)
    assert checks["summary"] == {
        "total": 14,
        "by_outcome": {
            "action_required": 1, "cancelled": 1, "error": 1, "failure": 3, "neutral": 2, "pending": 2,
            "skipped": 1, "success": 2, "timed_out": 1,
        },
        "failed": ["bad", "boot", "slow", "amd", "f"],
    }
    assert checks["check_runs"][-1] == {"name": "queued", "status": "queued", "conclusion": None, "details_url": None, "app": None}
    assert checks["statuses"][1] == {"context": "amd", "state": "error", "description": None, "target_url": None}


# --- schema ----------------------------------------------------------------------------------


@pytest.fixture
def example():
    return json.loads(EXAMPLE_PR.read_text(encoding="utf-8"))


def test_example_pr_is_valid_and_small(example):
    assert validate_pr_document(example, strict=True) == []
    assert EXAMPLE_PR.stat().st_size < 40_000
    assert example["checks"]["summary"]["failed"]
    assert example["meta"]["rate_limit"]["reset"]


def test_example_pr_diff_matches_its_file_list(example):
    from vllm_cases import split_diff

    sections = {f["filename"]: f["patch"] for f in split_diff(example["diff"])}
    assert list(sections) == [f["filename"] for f in example["files"]]
    for entry in example["files"]:
        lines = sections[entry["filename"]].split("\n")
        assert entry["additions"] == sum(1 for line in lines if line.startswith("+"))
        assert entry["deletions"] == sum(1 for line in lines if line.startswith("-"))
        assert "patch" not in entry  # as fetch_pr_data.py writes it: hunks live in diff only
    assert example["pr"]["additions"] == sum(f["additions"] for f in example["files"])


def test_example_pr_paths_exist_in_vllm():
    paths = set(vllm_main_paths())
    example = json.loads(EXAMPLE_PR.read_text(encoding="utf-8"))
    assert {entry["filename"] for entry in example["files"]} <= paths
    assert {comment["path"] for comment in example["review_comments"]} <= paths


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (lambda d: d.pop("diff"), "$: missing 'diff'"),
        (lambda d: d["pr"].update(state="draft"), "$.pr.state: 'draft' is not one of open, closed, merged"),
        (lambda d: d["pr"].update(number="1"), "$.pr.number: expected an integer, got str"),
        (lambda d: d["pr"].update(draft=None), "$.pr.draft: expected bool, got null"),
        (lambda d: d["files"][0].pop("status"), "$.files[0]: missing 'status'"),
        (lambda d: d["review_comments"][0].update(thread_resolved="yes"), "$.review_comments[0].thread_resolved: expected bool"),
        (lambda d: d["meta"].update(diff_source="git"), "$.meta.diff_source: 'git' is not one of api, files"),
        (lambda d: d["meta"].update(number=1), "$.meta.number 1 differs from $.pr.number"),
        (lambda d: d["meta"].update(files_without_patch=["nope.py"]), "'nope.py' is not in $.files"),
        (lambda d: d.update(linked_issues=[d["linked_issues"][0]] * 6), "at most 5 allowed"),
        (lambda d: d["checks"]["summary"]["by_outcome"].update(flaky=1), "unknown outcome 'flaky'"),
        (lambda d: d["checks"]["summary"].update(total=99), "$.checks.summary.total 99 differs"),
        (lambda d: d["issue_comments"].append({"id": True}), "$.issue_comments[2].id: expected an integer, got bool"),
        (lambda d: d.update(files={}), "$.files: expected a list, got dict"),
    ],
)
def test_schema_problems_name_the_path(example, mutate, problem):
    broken = copy.deepcopy(example)
    mutate(broken)
    problems = validate_pr_document(broken)
    assert any(problem in line for line in problems), problems


def test_strict_mode_flags_unknown_keys_and_lenient_mode_accepts_them(example):
    example["pr"]["user"] = {"login": "x", "url": "https://api.github.com/users/x"}
    assert validate_pr_document(example) == []
    assert validate_pr_document(example, strict=True) == ["$.pr: unexpected key 'user'"]


def test_non_object_documents_are_rejected():
    assert validate_pr_document([]) == ["$: expected an object, got list"]


def test_documents_built_from_real_cases_are_valid():
    from vllm_cases import build_pr_document
    from vllm_cases import case_ids

    numbers = case_ids()
    if not numbers:
        pytest.skip("../shared/vllm-cases is absent")
    for number in numbers:
        assert validate_pr_document(build_pr_document(number), strict=True) == [], number


def test_skill_paths_point_at_the_example():
    assert EXAMPLE_PR == ROOT / "examples" / "example-pr.json"


# --- output layout ---------------------------------------------------------------------------


def test_layout_round_trips_and_puts_each_list_entry_on_one_line(example):
    from vllm_rocm_review.core.json_layout import dump_json

    text = dump_json(example)
    assert json.loads(text) == example
    assert text.endswith("}\n")
    file_lines = [line for line in text.splitlines() if line.startswith('  {"filename": ')]
    assert len(file_lines) == len(example["files"])
    assert dump_json({"a": [], "b": {}, "c": [1, 2]}) == '{\n "a": [],\n "b": {},\n "c": [1, 2]\n}\n'


def test_bundled_example_uses_the_fetch_layout(example):
    from vllm_rocm_review.core.json_layout import dump_json

    assert EXAMPLE_PR.read_text(encoding="utf-8") == dump_json(example)
