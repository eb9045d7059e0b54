"""Assemble the slim PR document (see pr_schema.py) from GitHub through a GitHubClient.

Request plan for a PR with F files, C conversation comments, R review comments, V reviews:
the PR, its diff (skipped above GitHub's 300-file diff limit, and while the PR and its files are
unchanged since GitHub refused the diff with 406 for this head), ⌈F/100⌉ + ⌈C/100⌉ + ⌈R/100⌉ +
⌈V/100⌉ list pages (at least one each), up to 5 linked issues, one GraphQL query for thread
states when a token is present and there are review comments, and with CI the check-run and
status pages of the head commit. Nothing else is requested.
"""

import time
from urllib.parse import urlsplit

from .ci_checks import build_checks
from .diff_rebuild import rebuild_unified_diff
from .client import DIFF_MEDIA_TYPE
from .client import GitHubError
from .client import NotFound
from .client import RateLimited
from .client import ServerError
from .client import TooLarge
from .client import Unauthorized
from .linked_issues import find_issue_references

# GitHub's diff media type refuses PRs with more files than this (406 too_large).
DIFF_FILE_LIMIT = 300
# The files endpoint lists at most 3,000 files: 30 pages of 100.
FILES_PAGE_LIMIT = 30
GHOST = "ghost"

REVIEW_THREADS_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { isResolved isOutdated comments(first: 100) { nodes { databaseId } } }
      }
    }
  }
}
"""
REVIEW_THREAD_PAGE_LIMIT = 10


def fetch_pr_document(client, ref, include_ci=False, clock=time.time):
    """Fetch everything a reviewer needs about PR ``ref`` (a PullRef) and return the document."""
    base = f"/repos/{ref.repo}"
    warnings = []
    pages_capped = []
    sent_before, hits_before = client.requests_made, client.cache_hits
    try:
        raw_pr = client.get_json(f"{base}/pulls/{ref.number}")
    except NotFound:
        hint = "" if client.authenticated else " (a private repository needs a token)"
        raise NotFound(f"PR {ref.number} not found in {ref.repo}{hint}") from None
    pr = slim_pr(raw_pr)

    def listing(endpoint, path, **options):
        result = client.get_paginated(path, **options)
        if result.capped:
            pages_capped.append(endpoint)
        return result.items

    raw_files = listing("files", f"{base}/pulls/{ref.number}/files", max_pages=FILES_PAGE_LIMIT)
    files = [slim_file(raw) for raw in raw_files]
    files_without_patch = [entry["filename"] for entry in files if "patch" not in entry]
    unchanged = client.cache_hits - hits_before == client.requests_made - sent_before
    diff, diff_source = _fetch_diff(client, ref, pr, files, warnings, unchanged)
    for entry in files:
        # The diff carries the same hunks; keeping both would double the largest part of the document.
        entry.pop("patch", None)
    issue_comments = [slim_issue_comment(raw) for raw in listing("issue_comments", f"{base}/issues/{ref.number}/comments")]
    review_comments = [slim_review_comment(raw) for raw in listing("review_comments", f"{base}/pulls/{ref.number}/comments")]
    _drop_repeated_hunks(review_comments)
    reviews = [slim_review(raw) for raw in listing("reviews", f"{base}/pulls/{ref.number}/reviews")]
    if client.authenticated and review_comments:
        _add_thread_states(client, ref, review_comments, warnings)

    web_host = urlsplit(pr["html_url"]).hostname or "github.com"
    linked = []
    for repo, number in find_issue_references(pr["body"], ref.repo, web_host, exclude_number=ref.number):
        try:
            linked.append(slim_issue(client.get_json(f"/repos/{repo}/issues/{number}")))
        except GitHubError as error:
            if error.status not in (403, 404, 410):
                raise
            warnings.append(f"linked issue {repo}#{number} is gone or not visible")

    document = {
        "pr": pr,
        "diff": diff,
        "files": files,
        "issue_comments": issue_comments,
        "review_comments": review_comments,
        "reviews": reviews,
    }
    if include_ci:
        head = pr["head"]["sha"]
        runs = listing("check_runs", f"{base}/commits/{head}/check-runs", item_key="check_runs")
        statuses = listing("statuses", f"{base}/commits/{head}/status", item_key="statuses")
        document["checks"] = build_checks(runs, statuses)
    document["linked_issues"] = linked
    document["meta"] = {
        "fetched_at": _iso(clock()),
        "api_url": client.api_url,
        "repo": ref.repo,
        "number": ref.number,
        "requests": 0,
        "rate_limit": {"remaining": None, "reset": None},
        "diff_source": diff_source,
        "files_without_patch": files_without_patch,
        "files_truncated": "files" in pages_capped or len(files) < pr["changed_files"],
        "pages_capped": pages_capped,
    }
    if warnings:
        document["meta"]["warnings"] = warnings
    record_usage(document, client)
    return document


def fetch_failure(error, token_source, can_wait=False):
    """The one error line for a GitHubError that stopped a fetch; ``can_wait``: offer --wait for a primary limit."""
    if isinstance(error, Unauthorized):
        return f"token rejected by GitHub (401); the token came from {token_source}: renew it or unset it"
    if isinstance(error, RateLimited) and can_wait and not error.secondary:
        return f"{error}; pass --wait to sleep until then"
    return str(error)


def record_usage(document, client):
    """Copy the client's request count and last rate-limit reading into meta (call again after
    later requests, e.g. --sources)."""
    meta = document["meta"]
    meta["requests"] = client.requests_made
    reset = client.rate_limit.get("reset")
    meta["rate_limit"] = {
        "remaining": client.rate_limit.get("remaining"),
        "reset": _iso(reset) if reset is not None else None,
    }


def _fetch_diff(client, ref, pr, files, warnings, unchanged):
    """The API's diff when GitHub will give it, else one rebuilt from the file patches.

    A 406 is remembered for the head SHA: while the PR and its files answer 304 (``unchanged``),
    asking again would cost a rate-limit unit for the same refusal.
    """
    refused = f"diff-too-large {client.api_url}/repos/{ref.repo}/pulls/{ref.number} head={pr['head']['sha']}"
    if pr["changed_files"] <= DIFF_FILE_LIMIT and not (unchanged and client.recalls(refused)):
        try:
            return client.get_text(f"/repos/{ref.repo}/pulls/{ref.number}", accept=DIFF_MEDIA_TYPE), "api"
        except TooLarge:
            client.remember(refused)
        except ServerError as error:
            # GitHub documents that large diffs may time out as a 5xx; the patches still work.
            warnings.append(f"diff request failed ({error}); rebuilt the diff from file patches")
    return rebuild_unified_diff(files), "files"


def _drop_repeated_hunks(review_comments):
    """Replies repeat their thread's diff_hunk; keep it on the comment that opened the thread."""
    hunks = {comment["id"]: comment["diff_hunk"] for comment in review_comments}
    for comment in review_comments:
        root = comment["in_reply_to_id"]
        if root is not None and hunks.get(root) is not None and hunks[root] == comment["diff_hunk"]:
            comment["diff_hunk"] = None


def _add_thread_states(client, ref, review_comments, warnings):
    """Mark each review comment with its thread's resolved/outdated state (GraphQL only)."""
    states = {}
    after = None
    try:
        for _ in range(REVIEW_THREAD_PAGE_LIMIT):
            variables = {"owner": ref.owner, "name": ref.name, "number": ref.number, "after": after}
            data = client.post_graphql(REVIEW_THREADS_QUERY, variables)
            threads = (((data.get("repository") or {}).get("pullRequest") or {}).get("reviewThreads")) or {}
            for thread in threads.get("nodes") or []:
                for comment in ((thread.get("comments") or {}).get("nodes")) or []:
                    states[comment.get("databaseId")] = (thread.get("isResolved"), thread.get("isOutdated"))
            page = threads.get("pageInfo") or {}
            if not page.get("hasNextPage"):
                break
            after = page.get("endCursor")
    except GitHubError as error:  # thread state is a nicety; the fetch goes on without it
        warnings.append(f"review thread states unavailable: {error}")
    for comment in review_comments:
        resolved, outdated = states.get(comment["id"], (None, None))
        comment["thread_resolved"] = resolved
        comment["thread_outdated"] = outdated


# --- slim objects ---------------------------------------------------------------------------


def _login(raw):
    return (raw.get("user") or {}).get("login") or GHOST


def slim_pr(raw):
    merged = raw.get("merged")
    if merged is None:
        merged = raw.get("merged_at") is not None
    head = raw.get("head") or {}
    base = raw.get("base") or {}
    return {
        "number": raw["number"],
        "title": raw.get("title") or "",
        "body": raw.get("body"),
        "author": _login(raw),
        "state": "merged" if merged else raw.get("state", "open"),
        "draft": bool(raw.get("draft")),
        "labels": [label.get("name", "") for label in raw.get("labels") or []],
        "created_at": raw.get("created_at") or "",
        "updated_at": raw.get("updated_at") or "",
        "merged_at": raw.get("merged_at") if merged else None,
        "additions": raw.get("additions") or 0,
        "deletions": raw.get("deletions") or 0,
        "changed_files": raw.get("changed_files") or 0,
        "commits": raw.get("commits") or 0,
        "head": {
            "ref": head.get("ref") or "",
            "sha": head.get("sha") or "",
            "repo": (head.get("repo") or {}).get("full_name"),
        },
        "base": {"ref": base.get("ref") or "", "sha": base.get("sha") or ""},
        "html_url": raw.get("html_url") or "",
    }


def slim_file(raw):
    entry = {
        "filename": raw["filename"],
        "status": raw.get("status") or "modified",
        "additions": raw.get("additions") or 0,
        "deletions": raw.get("deletions") or 0,
    }
    if raw.get("patch") is not None:
        entry["patch"] = raw["patch"]
    if raw.get("previous_filename"):
        entry["previous_filename"] = raw["previous_filename"]
    return entry


def slim_issue_comment(raw):
    return {
        "id": raw["id"],
        "author": _login(raw),
        "body": raw.get("body"),
        "created_at": raw.get("created_at") or "",
        "html_url": raw.get("html_url") or "",
    }


def slim_review_comment(raw):
    return {
        **slim_issue_comment(raw),
        "path": raw.get("path") or "",
        "line": raw.get("line"),
        "original_line": raw.get("original_line"),
        "side": raw.get("side"),
        "diff_hunk": raw.get("diff_hunk"),
        "in_reply_to_id": raw.get("in_reply_to_id"),
        "commit_id": raw.get("commit_id"),
        "original_commit_id": raw.get("original_commit_id"),
        "thread_resolved": None,
        "thread_outdated": None,
    }


def slim_review(raw):
    return {
        "id": raw["id"],
        "author": _login(raw),
        "body": raw.get("body"),
        "submitted_at": raw.get("submitted_at"),
        "html_url": raw.get("html_url") or "",
        "state": raw.get("state") or "",
        "commit_id": raw.get("commit_id"),
    }


def slim_issue(raw):
    return {
        "number": raw["number"],
        "title": raw.get("title") or "",
        "state": raw.get("state") or "",
        "body": raw.get("body"),
        "html_url": raw.get("html_url") or "",
    }


def _iso(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
