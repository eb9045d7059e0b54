"""Put a checked report on its PR as one sticky issue comment, found again by the review marker.

The comment body is the report, cut at a line boundary when it exceeds GitHub's comment size,
then the marker naming the reviewed head. A later run finds the marked comment among the PR's
issue comments and edits it in place, so a PR never carries two reports.

``plan_report_comment`` only decides (it reads the comment listing, sends nothing);
``send`` performs what a plan says. A plan is a list of ``Write(method, path, payload)``.
"""

from dataclasses import dataclass
from pathlib import PurePath

from .marker import find_report_comment
from .marker import format_marker

# GitHub refuses an issue comment or review body longer than this many characters.
COMMENT_LIMIT = 65536
CUT_NOTE = (
    "> ✂️ 报告超出 GitHub 评论长度上限（{limit} 字符），以下内容已截断；完整报告见 `{name}`。\n"
    "> The report exceeds GitHub's {limit}-character comment limit and was cut here; "
    "the full report is `{name}`."
)
FENCE_MARKS = ("```", "~~~")


@dataclass(frozen=True)
class Write:
    """One request that changes the PR: method, API path and JSON payload."""

    method: str
    path: str
    payload: dict

    def to_dict(self):
        return {"method": self.method, "path": self.path, "body": self.payload}


def pr_target(document):
    """``(owner/name, number, head_sha)`` of the PR a document describes."""
    return document["meta"]["repo"], document["pr"]["number"], document["pr"]["head"]["sha"]


def comment_body(report_text, head_sha, report_name):
    """``(body, cut)``: the report, cut to fit one comment when it must, then the marker for ``head_sha``."""
    marker = format_marker(head_sha)
    text = report_text.rstrip("\n")
    if len(text) + len(marker) + 2 <= COMMENT_LIMIT:
        return f"{text}\n\n{marker}", False
    note = CUT_NOTE.format(limit=COMMENT_LIMIT, name=PurePath(report_name).name)
    room = COMMENT_LIMIT - len(note) - len(marker) - len("\n```\n\n\n\n")
    return f"{cut_at_line(text, room)}\n\n{note}\n\n{marker}", True


def cut_at_line(text, room):
    """The longest run of whole lines of ``text`` within ``room`` characters, fences closed."""
    kept, used, fence = [], 0, None
    for line in text.split("\n"):
        if used + len(line) + 1 > room:
            break
        kept.append(line)
        used += len(line) + 1
        mark = line.lstrip()[:3]
        if mark in FENCE_MARKS:
            fence = None if fence == mark else (fence or mark)
    if fence:
        kept.append(fence)
    return "\n".join(kept).rstrip("\n")


def list_issue_comments(client, repo, number):
    return client.get_paginated(f"/repos/{repo}/issues/{number}/comments").items


def plan_report_comment(comments, repo, number, body):
    """The write that leaves exactly one marked comment holding ``body`` ([] when it already does)."""
    existing = find_report_comment(comments)
    if existing is None:
        return [Write("POST", f"/repos/{repo}/issues/{number}/comments", {"body": body})]
    if existing.get("body") == body:
        return []
    return [Write("PATCH", f"/repos/{repo}/issues/comments/{existing['id']}", {"body": body})]


def send(client, writes):
    """Perform ``writes`` in order; each answer's ``html_url`` (or None) in the same order."""
    return [client.send_json(write.method, write.path, write.payload).get("html_url") for write in writes]
