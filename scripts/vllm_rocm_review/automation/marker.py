"""The hidden marker that ties a posted report to the PR head it reviewed.

The queue reads it to skip heads already reviewed; posting reads it to edit the one
sticky comment in place instead of adding another.
"""

import re

MARKER_PREFIX = "<!-- vllm-rocm-pr-review"
_MARKER = re.compile(r"<!-- vllm-rocm-pr-review head=([0-9a-f]{7,40}) -->")


def format_marker(head_sha):
    if not re.fullmatch(r"[0-9a-f]{7,40}", head_sha or ""):
        raise ValueError(f"not a commit SHA: {head_sha!r}")
    return f"{MARKER_PREFIX} head={head_sha} -->"


def reviewed_head(body):
    """The head SHA a comment body's marker names, or None when it carries no marker."""
    match = _MARKER.search(body or "")
    return match.group(1) if match else None


# Anyone can paste the marker into a comment; only a bot (the workflow's token) or someone with
# write access can have posted the real report, so only their comments are edited or trusted.
TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})


def is_trusted_author(comment):
    user = comment.get("user") or {}
    return user.get("type") == "Bot" or comment.get("author_association") in TRUSTED_ASSOCIATIONS


def find_report_comment(comments):
    """The newest trusted issue comment carrying the marker, or None; ``comments`` as the REST API lists them."""
    found = None
    for comment in comments:
        if is_trusted_author(comment) and reviewed_head(comment.get("body")) is not None:
            if found is None or comment.get("id", 0) > found.get("id", 0):
                found = comment
    return found
