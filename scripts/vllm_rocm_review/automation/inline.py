"""The report's findings that cite a changed line, as one review with line comments.

A finding goes inline at its first ``path:line`` citation that the PR's diff shows on the new
side (an added or context line of that file's hunks); GitHub accepts a line comment only there.
Comments use the line-based API (``line`` + ``side: RIGHT``) on the file's new path, so a
renamed file is addressed by the name it has at the head. A citation of a renamed file's old
name is not a new-side line and is not placed. Findings with no such citation stay in the
summary comment only. The review body carries the marker, so a second run for the same head
finds its review and posts nothing.
"""

import re
from dataclasses import dataclass

from ..core.diff_parse import diff_from_document
from ..report.report_check import parse_report
from .marker import format_marker
from .marker import is_trusted_author
from .marker import reviewed_head
from .posting import Write

# path:line or path:start-end; not the path part of ``owner/name@ref:path:line`` or of a URL.
CITATION = re.compile(r"(?<![\w/.:@-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z]\w*):(\d+)(?:[-–](\d+))?")
URL = re.compile(r"https?://\S+")
REVIEW_BODY = "ROCm review：以下 {count} 条意见对应本 PR 改动的代码行，完整报告见 PR 评论。"


@dataclass(frozen=True)
class Placement:
    """Where a finding goes: ``path``/``line`` for a line comment, or None (summary only)."""

    title: str
    path: str | None
    line: int | None
    body: str
    cited: tuple


def new_side_lines(document):
    """``{path at head: set of new-file line numbers the diff shows}`` (added and context lines)."""
    return {diff.path: {number for number, _ in diff.added + diff.context}
            for diff in diff_from_document(document) if diff.status != "removed"}


def citations(text):
    """``(path, line)`` pairs cited in ``text``, in order (a range counts as its first line)."""
    return [(match.group(1).removeprefix("./"), int(match.group(2))) for match in CITATION.finditer(URL.sub(" ", text))]


def place_findings(report_text, document):
    """One Placement per report finding, in report order."""
    shown = new_side_lines(document)
    lines = report_text.splitlines()
    placements = []
    for finding in parse_report(report_text).findings:
        first, last = finding.body[0][0], finding.body[-1][0]
        body = "\n".join(lines[first - 1:last]).strip()
        cited = tuple(citations(body))
        target = next(((path, line) for path, line in cited if line in shown.get(path, ())), (None, None))
        placements.append(Placement(finding.heading, target[0], target[1], body, cited))
    return placements


def already_reviewed(reviews, head_sha):
    """Whether one of the PR's trusted reviews carries the marker for ``head_sha``."""
    return any(is_trusted_author(review) and reviewed_head(review.get("body")) == head_sha for review in reviews)


def list_reviews(client, repo, number):
    return client.get_paginated(f"/repos/{repo}/pulls/{number}/reviews").items


def plan_inline_review(placements, reviews, repo, number, head_sha):
    """The review POST for the placed findings ([] when none is placed or this head has its review)."""
    placed = [item for item in placements if item.path is not None]
    if not placed or already_reviewed(reviews, head_sha):
        return []
    payload = {
        "commit_id": head_sha,
        "event": "COMMENT",
        "body": f"{REVIEW_BODY.format(count=len(placed))}\n\n{format_marker(head_sha)}",
        "comments": [{"path": item.path, "line": item.line, "side": "RIGHT", "body": item.body} for item in placed],
    }
    return [Write("POST", f"/repos/{repo}/pulls/{number}/reviews", payload)]
