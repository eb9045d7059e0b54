"""Small, schema-valid PR documents built from hand-written diffs, for the triage tests."""

from vllm_cases import split_diff

from vllm_rocm_review.core.catalog import load_catalog
from vllm_rocm_review.github.ci_checks import build_checks
from vllm_rocm_review.core.diff_parse import parse_diff
from vllm_rocm_review.triage.triage import triage
from vllm_rocm_review.triage.config import load_triage_config

CONFIG = load_triage_config()
CATALOG = load_catalog()


def file_diff(path, added=(), removed=(), context=(), after=(), new=False):
    """A one-hunk git diff of ``path``: context lines, removed lines, added lines, then ``after`` context."""
    old_count = len(context) + len(removed) + len(after)
    new_count = len(context) + len(added) + len(after)
    header = [f"diff --git a/{path} b/{path}"]
    if new:
        header += ["new file mode 100644", "--- /dev/null"]
    else:
        header += [f"--- a/{path}"]
    header += [f"+++ b/{path}", f"@@ -{0 if new else 10},{old_count} +10,{new_count} @@ def host_function():"]
    body = [f" {line}" for line in context] + [f"-{line}" for line in removed] + [f"+{line}" for line in added]
    body += [f" {line}" for line in after]
    return "\n".join(header + body) + "\n"


def make_document(diff, title="Change something", body="", number=4242, checks=None, issue_comments=(),
                  reviews=(), review_comments=(), linked_issues=()):
    """A PR document in fetch_pr_data.py's schema around ``diff``."""
    files = []
    parsed = {entry.path: entry for entry in parse_diff(diff)}
    for entry in split_diff(diff):
        item = {"filename": entry["filename"], "status": entry["status"],
                "additions": len(parsed[entry["filename"]].added), "deletions": len(parsed[entry["filename"]].removed)}
        if entry["patch"] is not None:
            item["patch"] = entry["patch"]
        if entry["previous_filename"]:
            item["previous_filename"] = entry["previous_filename"]
        files.append(item)
    document = {
        "pr": {
            "number": number, "title": title, "body": body, "author": "someone", "state": "open", "draft": False,
            "labels": [], "created_at": "2026-08-01T10:00:00Z", "updated_at": "2026-08-02T10:00:00Z",
            "merged_at": None, "additions": sum(f["additions"] for f in files),
            "deletions": sum(f["deletions"] for f in files), "changed_files": len(files), "commits": 1,
            "head": {"ref": "feature", "sha": "a" * 40, "repo": "someone/vllm"},
            "base": {"ref": "main", "sha": "b" * 40},
            "html_url": f"https://github.com/vllm-project/vllm/pull/{number}",
        },
        "diff": diff,
        "files": files,
        "issue_comments": [{"id": index, "author": author, "body": text, "created_at": "2026-08-02T10:00:00Z",
                            "html_url": "https://github.com/x"} for index, (author, text) in enumerate(issue_comments)],
        "review_comments": [{"id": index, "author": author, "body": text, "created_at": "2026-08-02T10:00:00Z",
                             "html_url": "https://github.com/x", "path": path, "line": 1, "original_line": 1,
                             "side": "RIGHT", "diff_hunk": None, "in_reply_to_id": None, "commit_id": None,
                             "original_commit_id": None} for index, (author, path, text) in enumerate(review_comments)],
        "reviews": [{"id": index, "author": author, "body": text, "submitted_at": None, "html_url": "https://github.com/x",
                     "state": "COMMENTED", "commit_id": None} for index, (author, text) in enumerate(reviews)],
        "linked_issues": [{"number": number_, "title": "issue", "state": "open", "body": text,
                           "html_url": "https://github.com/x"} for number_, text in linked_issues],
        "meta": {
            "fetched_at": "2026-08-02T10:00:00Z", "api_url": "https://api.github.com", "repo": "vllm-project/vllm",
            "number": number, "requests": 0, "rate_limit": {"remaining": None, "reset": None}, "diff_source": "api",
            "files_without_patch": [f["filename"] for f in files if "patch" not in f], "files_truncated": False,
            "pages_capped": [],
        },
    }
    if checks is not None:
        runs, statuses = checks
        document["checks"] = build_checks(runs, statuses)
    return document


def run_triage(diff, snapshot_path=None, **fields):
    """Triage a hand-written diff with the bundle's surface file and catalog."""
    return triage(make_document(diff, **fields), CONFIG, CATALOG, snapshot_path=snapshot_path)


def family_ids(result):
    return [family["id"] for family in result["families"]]


def rule_ids(result):
    return [rule["id"] for rule in result["rules"]]
