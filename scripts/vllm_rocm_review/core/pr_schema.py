"""The PR document that fetch_pr_data.py writes and triage_pr.py / check_report.py read.

``validate_pr_document(doc)`` returns a list of problems (empty = valid). ``strict=True`` also
flags keys the schema does not know, which keeps fetch_pr_data.py's output slim; readers use the
default so a document with an extra field still loads.

Shape (``?`` = optional key, ``|null`` = may be null):

    pr: number, title, body|null, author, state (open|closed|merged), draft, labels [str],
        created_at, updated_at, merged_at|null, additions, deletions, changed_files, commits,
        head {ref, sha, repo|null}, base {ref, sha}, html_url
    diff: unified diff text
    files[]: filename, status, additions, deletions, previous_filename? (renames), patch? (the
        file's hunks; fetch_pr_data.py leaves it out because ``diff`` holds the same hunks, and
        lists the files GitHub gave no patch for in meta.files_without_patch)
    issue_comments[]: id, author, body|null, created_at, html_url
    review_comments[]: id, author, body|null, created_at, html_url, path, line|null,
        original_line|null, side|null, diff_hunk|null (null on a reply that repeats the hunk of
        the comment it answers), in_reply_to_id|null, commit_id|null, original_commit_id|null,
        thread_resolved? (bool|null), thread_outdated? (bool|null)
    reviews[]: id, author, body|null, submitted_at|null, html_url, state, commit_id|null
    checks? (only with --include-ci; absent = CI unknown):
        check_runs[]: name, status, conclusion|null, details_url|null, app|null
        statuses[]: context, state, description|null, target_url|null
        summary: total, by_outcome {outcome: count}, failed [names]
    linked_issues[] (at most 5): number, title, state, body|null, html_url
    meta: fetched_at, api_url, repo, number, requests, rate_limit {remaining|null, reset|null},
        diff_source (api|files), files_without_patch [str], files_truncated, pages_capped [str],
        checkout? {path, base_sha, head_sha, merge_base|null}, sources? {dir, fetched [str],
        skipped [str]}, warnings? [str]

Authors are login strings ("ghost" when GitHub no longer knows the account).
"""

PR_STATES = ("open", "closed", "merged")
DIFF_SOURCES = ("api", "files")
OUTCOMES = (
    "success",
    "failure",
    "pending",
    "neutral",
    "skipped",
    "cancelled",
    "timed_out",
    "action_required",
    "error",
)
MAX_LINKED_ISSUES = 5  # fetch_pr_data.py follows at most this many references in the body


class _Nullable:
    def __init__(self, kind):
        self.kind = kind


class _ListOf:
    def __init__(self, kind):
        self.kind = kind


class _OneOf:
    def __init__(self, *values):
        self.values = values


class _Object:
    def __init__(self, required, optional=None):
        self.required = required
        self.optional = optional or {}


STR = str
INT = int
BOOL = bool
OPT_STR = _Nullable(str)
OPT_INT = _Nullable(int)
OPT_BOOL = _Nullable(bool)

PR = _Object(
    {
        "number": INT,
        "title": STR,
        "body": OPT_STR,
        "author": STR,
        "state": _OneOf(*PR_STATES),
        "draft": BOOL,
        "labels": _ListOf(STR),
        "created_at": STR,
        "updated_at": STR,
        "merged_at": OPT_STR,
        "additions": INT,
        "deletions": INT,
        "changed_files": INT,
        "commits": INT,
        "head": _Object({"ref": STR, "sha": STR, "repo": OPT_STR}),
        "base": _Object({"ref": STR, "sha": STR}),
        "html_url": STR,
    }
)
FILE = _Object(
    {"filename": STR, "status": STR, "additions": INT, "deletions": INT},
    {"patch": STR, "previous_filename": STR},
)
COMMENT_FIELDS = {"id": INT, "author": STR, "body": OPT_STR, "created_at": STR, "html_url": STR}
ISSUE_COMMENT = _Object(COMMENT_FIELDS)
REVIEW_COMMENT = _Object(
    {
        **COMMENT_FIELDS,
        "path": STR,
        "line": OPT_INT,
        "original_line": OPT_INT,
        "side": OPT_STR,
        "diff_hunk": OPT_STR,
        "in_reply_to_id": OPT_INT,
        "commit_id": OPT_STR,
        "original_commit_id": OPT_STR,
    },
    {"thread_resolved": OPT_BOOL, "thread_outdated": OPT_BOOL},
)
REVIEW = _Object(
    {
        "id": INT,
        "author": STR,
        "body": OPT_STR,
        "submitted_at": OPT_STR,
        "html_url": STR,
        "state": STR,
        "commit_id": OPT_STR,
    }
)
CHECKS = _Object(
    {
        "check_runs": _ListOf(
            _Object({"name": STR, "status": STR, "conclusion": OPT_STR, "details_url": OPT_STR, "app": OPT_STR})
        ),
        "statuses": _ListOf(
            _Object({"context": STR, "state": STR, "description": OPT_STR, "target_url": OPT_STR})
        ),
        "summary": _Object({"total": INT, "by_outcome": dict, "failed": _ListOf(STR)}),
    }
)
LINKED_ISSUE = _Object({"number": INT, "title": STR, "state": STR, "body": OPT_STR, "html_url": STR})
META = _Object(
    {
        "fetched_at": STR,
        "api_url": STR,
        "repo": STR,
        "number": INT,
        "requests": INT,
        "rate_limit": _Object({"remaining": OPT_INT, "reset": OPT_STR}),
        "diff_source": _OneOf(*DIFF_SOURCES),
        "files_without_patch": _ListOf(STR),
        "files_truncated": BOOL,
        "pages_capped": _ListOf(STR),
    },
    {
        "checkout": _Object({"path": STR, "base_sha": STR, "head_sha": STR, "merge_base": OPT_STR}),
        "sources": _Object({"dir": STR, "fetched": _ListOf(STR), "skipped": _ListOf(STR)}),
        "warnings": _ListOf(STR),
    },
)
DOCUMENT = _Object(
    {
        "pr": PR,
        "diff": STR,
        "files": _ListOf(FILE),
        "issue_comments": _ListOf(ISSUE_COMMENT),
        "review_comments": _ListOf(REVIEW_COMMENT),
        "reviews": _ListOf(REVIEW),
        "linked_issues": _ListOf(LINKED_ISSUE),
        "meta": META,
    },
    {"checks": CHECKS},
)


def validate_pr_document(doc, strict=False):
    """Problems with ``doc`` as a PR document, each naming its JSON path; empty when valid."""
    problems = []
    _check(doc, DOCUMENT, "$", problems, strict)
    if not problems:
        problems.extend(_consistency(doc))
    return problems


def _check(value, kind, where, problems, strict):
    if isinstance(kind, _Nullable):
        if value is not None:
            _check(value, kind.kind, where, problems, strict)
    elif isinstance(kind, _OneOf):
        if value not in kind.values:
            problems.append(f"{where}: {value!r} is not one of {', '.join(kind.values)}")
    elif isinstance(kind, _ListOf):
        if not isinstance(value, list):
            problems.append(f"{where}: expected a list, got {_type_name(value)}")
            return
        for index, item in enumerate(value):
            _check(item, kind.kind, f"{where}[{index}]", problems, strict)
    elif isinstance(kind, _Object):
        if not isinstance(value, dict):
            problems.append(f"{where}: expected an object, got {_type_name(value)}")
            return
        for key, sub in kind.required.items():
            if key not in value:
                problems.append(f"{where}: missing {key!r}")
            else:
                _check(value[key], sub, f"{where}.{key}", problems, strict)
        for key, sub in kind.optional.items():
            if key in value:
                _check(value[key], sub, f"{where}.{key}", problems, strict)
        if strict:
            for key in value.keys() - kind.required.keys() - kind.optional.keys():
                problems.append(f"{where}: unexpected key {key!r}")
    elif kind is int:
        if not isinstance(value, int) or isinstance(value, bool):
            problems.append(f"{where}: expected an integer, got {_type_name(value)}")
    elif not isinstance(value, kind):
        problems.append(f"{where}: expected {kind.__name__}, got {_type_name(value)}")


def _consistency(doc):
    """Cross-field rules the shapes alone cannot express."""
    problems = []
    pr, meta = doc["pr"], doc["meta"]
    if pr["number"] != meta["number"]:
        problems.append(f"$.meta.number {meta['number']} differs from $.pr.number {pr['number']}")
    if len(doc["linked_issues"]) > MAX_LINKED_ISSUES:
        problems.append(f"$.linked_issues: {len(doc['linked_issues'])} entries, at most {MAX_LINKED_ISSUES} allowed")
    names = {entry["filename"] for entry in doc["files"]}
    for name in meta["files_without_patch"]:
        if name not in names:
            problems.append(f"$.meta.files_without_patch: {name!r} is not in $.files")
    for index, entry in enumerate(doc["files"]):
        if entry["status"] == "renamed" and "previous_filename" not in entry:
            problems.append(f"$.files[{index}]: renamed without previous_filename")
    if "checks" in doc:
        summary = doc["checks"]["summary"]
        for outcome, count in summary["by_outcome"].items():
            if outcome not in OUTCOMES:
                problems.append(f"$.checks.summary.by_outcome: unknown outcome {outcome!r}")
            elif not isinstance(count, int) or isinstance(count, bool) or count < 0:
                problems.append(f"$.checks.summary.by_outcome.{outcome}: expected a count")
        total = len(doc["checks"]["check_runs"]) + len(doc["checks"]["statuses"])
        if summary["total"] != total:
            problems.append(f"$.checks.summary.total {summary['total']} differs from {total} runs and statuses")
    return problems


def _type_name(value):
    return "null" if value is None else type(value).__name__
