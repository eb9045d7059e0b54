"""Find the issues a PR body points at: closing keywords, #N, OWNER/NAME#N and issue URLs."""

import re

from .pr_ref import NAME_PATTERN
from .pr_ref import OWNER_PATTERN
from ..core.pr_schema import MAX_LINKED_ISSUES

_SHORT_REF = re.compile(rf"(?<![\w.&/#-])(?:(?P<repo>{OWNER_PATTERN}/{NAME_PATTERN}))?#(?P<number>[0-9]{{1,9}})\b")
_CLOSING_BEFORE = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s*$", re.IGNORECASE)
# Templates and pasted logs are full of text that only looks like references.
_NOISE = re.compile(r"```.*?```|~~~.*?~~~|`[^`\n]*`|<!--.*?-->", re.DOTALL)


def find_issue_references(body, repo, web_host, exclude_number=None):
    """``[(owner/name, number)]`` referenced by ``body``: closing-keyword ones first, then the rest
    in order of appearance, without duplicates or the PR itself, at most MAX_LINKED_ISSUES."""
    text = _NOISE.sub(" ", body or "")
    url = re.compile(
        rf"https?://{re.escape(web_host)}/(?P<repo>{OWNER_PATTERN}/{NAME_PATTERN})/issues/(?P<number>[0-9]{{1,9}})\b",
        re.IGNORECASE,
    )
    found = []
    for pattern in (_SHORT_REF, url):
        for match in pattern.finditer(text):
            target = (match.group("repo") or repo, int(match.group("number")))
            closing = bool(_CLOSING_BEFORE.search(text[max(0, match.start() - 20) : match.start()]))
            found.append((not closing, match.start(), target))
    ordered, seen = [], {(repo.lower(), exclude_number)}
    for _, _, (target_repo, number) in sorted(found):
        if (target_repo.lower(), number) not in seen:
            seen.add((target_repo.lower(), number))
            ordered.append((target_repo, number))
    return ordered[:MAX_LINKED_ISSUES]
