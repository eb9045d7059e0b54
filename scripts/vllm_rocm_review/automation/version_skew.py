"""How far a PR's base is from the vLLM commit the rule catalog's facts were checked at.

The catalog records that commit and its date once, in its opening paragraph (``Catalog.verified_at``).
A PR whose base is more than ``checks.version_skew.max_days`` older or newer may run code where
those facts no longer hold, so the brief names the catalog lines that state a fact at that commit
and asks for them to be re-checked at the PR's own commits.
"""

from datetime import date

from ..context.git_reader import CommitReader
from ..context.git_reader import GitReadError
from ..context.git_reader import resolve_git_dir

PARAGRAPH_BREAK = ("- **", "**", "#", "<a ")


def base_commit_date(document):
    """``(sha, YYYY-MM-DD)`` of the PR's merge base (else base) commit, read in the clone; None without one."""
    checkout = (document.get("meta") or {}).get("checkout") or {}
    sha = checkout.get("merge_base") or checkout.get("base_sha")
    if not checkout.get("path") or not sha:
        return None
    try:
        done = CommitReader(resolve_git_dir(checkout["path"])).git("show", "-s", "--format=%cs", sha, check=False)
    except GitReadError:
        return None
    stamp = done.stdout.decode().strip()
    return (sha, stamp) if done.returncode == 0 and stamp else None


def version_skew(catalog, max_days, document, anchors):
    """What the brief says about skew: the recorded commit, the PR base's date and the lines to re-check.

    ``state`` is ``within``, ``older``, ``newer`` or ``unknown``; without a clone, a PR last updated
    more than ``max_days`` before the recorded date still has a base at least that much older.
    ``recheck`` lists ``(anchor, first line, last line, text)`` for each catalog passage in ``anchors``
    that states a fact at the recorded commit, unless the base is known to be within the limit.
    """
    record = catalog.verified_at()
    if record is None:
        return None
    commit, recorded = record
    result = {"commit": commit, "date": recorded, "max_days": max_days, "base": None, "base_date": None,
              "days": None, "state": "unknown", "updated_at": None, "recheck": []}
    base = base_commit_date(document)
    if base is not None:
        result["base"], result["base_date"] = base
        days = (date.fromisoformat(base[1]) - date.fromisoformat(recorded)).days
        result["days"] = days
        result["state"] = "within" if abs(days) <= max_days else "newer" if days > 0 else "older"
    else:
        updated = (document["pr"].get("updated_at") or "")[:10]
        if updated:
            result["updated_at"] = updated
            days = (date.fromisoformat(updated) - date.fromisoformat(recorded)).days
            if days < -max_days:
                result["state"], result["days"] = "older", days
    if result["state"] != "within":
        result["recheck"] = _passages(catalog, commit, anchors)
    return result


def _passages(catalog, commit, anchors):
    """Each catalog passage (a paragraph or rule bullet) in ``anchors`` that names ``commit``."""
    passages, seen = [], set()
    for anchor, line, text in catalog.lines_naming(commit, anchors):
        if line in seen:
            continue
        end = line
        while end < catalog.line_count and catalog.lines[end].strip() and not catalog.lines[end].startswith(PARAGRAPH_BREAK):
            end += 1
        seen.update(range(line, end + 1))
        passages.append((anchor, line, end, text))
    return passages
