"""The real vLLM PRs in ../shared/vllm-cases, turned into the shapes the tests need.

Each case has a unified diff, a commit message and file stats in cases.jsonl or
more-cases.jsonl (same format; the corpus is both files, in that order). This module
splits a diff into GitHub-style per-file patches and builds a PR document in the schema
that scripts/fetch_pr_data.py writes, so triage and the GitHub replica can use real content.
"""

import json
import re

from conftest import shared_path

DIFF_HEADER = re.compile(r"^diff --git a/(.+?) b/(.+)$")
CASE_FILES = ("cases.jsonl", "more-cases.jsonl")


def _read_cases(folder):
    return [json.loads(line) for name in CASE_FILES if (folder / name).exists()
            for line in (folder / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def load_cases():
    """All cases from the case files, in file order; skips when ../shared is absent."""
    return _read_cases(shared_path("vllm-cases", "cases.jsonl").parent)


def case_ids():
    """Case numbers for parametrization; empty (tests then skip) when ../shared is absent."""
    from conftest import SHARED_DIR

    folder = SHARED_DIR / "vllm-cases"
    if not (folder / "cases.jsonl").exists():
        return []
    return [case["pr_number"] for case in _read_cases(folder)]


def load_case(number):
    """One case record plus its diff text and commit message."""
    for case in load_cases():
        if case["pr_number"] == number:
            folder = shared_path("vllm-cases")
            diff = (folder / case["diff_file"]).read_text(encoding="utf-8")
            message = (folder / case["msg_file"]).read_text(encoding="utf-8")
            return _status_from_diff(case, diff), diff, message
    raise KeyError(number)


def _status_from_diff(case, diff):
    """The case with each file's status taken from its diff header where that shows an add,
    removal or rename (a case's file stats may say "modified" for a file the diff creates)."""
    shown = {entry["filename"]: entry["status"] for entry in split_diff(diff) if entry["status"] != "modified"}
    files = [{**stat, "status": shown.get(stat["filename"], stat["status"])} for stat in case["files"]]
    return {**case, "files": files}


def split_diff(diff_text):
    """Split a unified diff into per-file dicts: filename, status, previous_filename, patch.

    ``patch`` is what GitHub's files endpoint returns: the hunks from the first ``@@`` on,
    without the ``diff --git``/``---``/``+++`` header and without a trailing newline.
    Binary files and pure renames have no patch (None).
    """
    blocks = []
    current = None
    for line in diff_text.split("\n"):
        match = DIFF_HEADER.match(line)
        if match:
            current = {"a": match.group(1), "b": match.group(2), "header": [], "hunks": []}
            blocks.append(current)
        elif current is not None:
            (current["hunks"] if current["hunks"] or line.startswith("@@") else current["header"]).append(line)
    files = []
    for block in blocks:
        header = block["header"]
        status = "modified"
        previous = None
        if any(h.startswith("new file mode") for h in header):
            status = "added"
        elif any(h.startswith("deleted file mode") for h in header):
            status = "removed"
        elif any(h.startswith("rename from") for h in header):
            status = "renamed"
            previous = block["a"]
        hunks = block["hunks"]
        while hunks and hunks[-1] == "":
            hunks.pop()
        files.append({
            "filename": block["b"],
            "status": status,
            "previous_filename": previous,
            "patch": "\n".join(hunks) if hunks else None,
        })
    return files


def build_pr_document(number):
    """A PR document in fetch_pr_data.py's schema, built from a real case."""
    case, diff, message = load_case(number)
    subject, _, body = message.partition("\n")
    title = re.sub(r"\s*\(#\d+\)\s*$", "", subject.strip())
    stats = {f["filename"]: f for f in case["files"]}
    files = []
    for entry in split_diff(diff):
        stat = stats.get(entry["filename"], {})
        item = {
            "filename": entry["filename"],
            "status": stat.get("status", entry["status"]),
            "additions": stat.get("additions", 0),
            "deletions": stat.get("deletions", 0),
        }
        if entry["patch"] is not None:
            item["patch"] = entry["patch"]
        if entry["previous_filename"]:
            item["previous_filename"] = entry["previous_filename"]
        files.append(item)
    login = re.sub(r"[^A-Za-z0-9-]+", "-", case["author"]).strip("-").lower() or "author"
    date = case.get("date", "2026-01-01T00:00:00Z")
    return {
        "pr": {
            "number": number,
            "title": title,
            "body": body.strip(),
            "author": login,
            "state": "merged",
            "draft": False,
            "labels": [],
            "created_at": date,
            "updated_at": date,
            "merged_at": date,
            "additions": case["total_additions"],
            "deletions": case["total_deletions"],
            "changed_files": case["num_files"],
            "commits": 1,
            "head": {"ref": f"pr-{number}", "sha": case["sha"], "repo": f"{login}/vllm"},
            "base": {"ref": "main", "sha": "0" * 40},
            "html_url": case["url"],
        },
        "diff": diff,
        "files": files,
        "issue_comments": [],
        "review_comments": [],
        "reviews": [],
        "linked_issues": [],
        "meta": {
            "fetched_at": date,
            "api_url": "https://api.github.com",
            "repo": "vllm-project/vllm",
            "number": number,
            "requests": 0,
            "rate_limit": {"remaining": None, "reset": None},
            "diff_source": "api",
            "files_without_patch": [f["filename"] for f in files if "patch" not in f],
            "files_truncated": False,
            "pages_capped": [],
        },
    }


def checkout_document(number, clone):
    """The case's PR document with meta.checkout in ``clone`` (head = merge commit, base = its first
    parent), or None when the clone lacks them."""
    import subprocess

    document = build_pr_document(number)
    head = document["pr"]["head"]["sha"]
    found = subprocess.run(["git", "-C", str(clone), "rev-parse", "--verify", "--quiet", f"{head}^"],
                           capture_output=True, text=True, check=False)
    if found.returncode != 0:
        return None
    base = found.stdout.strip()
    document["meta"]["checkout"] = {"path": str(clone), "base_sha": base, "head_sha": head, "merge_base": base}
    return document
