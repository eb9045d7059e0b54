"""Which open PRs need a ROCm review now: gate first, then the review marker.

Request plan for a window holding P PRs of which R pass the gate: ⌈P/100⌉ listing pages
(newest update first, stopping at the window's edge), one files page per PR (more only
above 100 changed files), and ⌈C/100⌉ issue-comment pages for each of the R relevant PRs
only. The gate runs on the listing's title and body and the files' patches, so no PR is
fetched whole and no diff is requested. Every answer goes through the client's ETag cache:
a repeat run over unchanged PRs is answered with 304s, which cost no rate limit.
"""

import re
import time
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timezone

from ..core.diff_parse import diff_from_document
from ..github.client import NotFound
from ..github.client import RateLimited
from ..github.pr_data import FILES_PAGE_LIMIT
from ..github.pr_data import slim_file
from ..github.pr_data import slim_pr
from ..triage.relevance import gate
from .marker import find_report_comment
from .marker import reviewed_head

QUEUED_LEVELS = ("full", "partial")
_DURATION = re.compile(r"^(\d+)([mhdw])$")
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?Z?)?$")


@dataclass
class QueuedPR:
    number: int
    head_sha: str
    relevance: str
    title: str
    reviewed_head: str | None  # an older head a previous report covered, or None

    def matrix_entry(self):
        return {"pr": self.number, "head_sha": self.head_sha, "relevance": self.relevance,
                "reviewed_head": self.reviewed_head}


@dataclass
class Queue:
    entries: list = field(default_factory=list)
    listed: int = 0  # PRs in the window that carry the label, when one is asked for
    gated: int = 0  # PRs the gate looked at
    relevant: int = 0  # of those, full or partial
    up_to_date: int = 0  # relevant PRs whose head already has a report
    stopped: str | None = None  # why the run ended early (rate limit), or None
    warnings: list = field(default_factory=list)


def parse_since(text, now=None):
    """The window's start as an aware UTC datetime: ``30m``, ``12h``, ``2d``, ``1w`` or an ISO date/time.

    ValueError with a one-line usage message otherwise.
    """
    value = (text or "").strip()
    now = now if now is not None else time.time()
    duration = _DURATION.match(value)
    if duration:
        seconds = int(duration.group(1)) * _UNIT_SECONDS[duration.group(2)]
        return datetime.fromtimestamp(now - seconds, timezone.utc)
    if _DATE.match(value):
        stamp = value.rstrip("Z")
        if "T" not in stamp:
            stamp += "T00:00:00"
        elif stamp.count(":") == 1:
            stamp += ":00"
        return datetime.fromisoformat(stamp).replace(tzinfo=timezone.utc)
    raise ValueError(f"--since {text!r} is neither a duration (30m, 12h, 2d, 1w) nor a date (2026-08-01 or "
                     "2026-08-01T10:00:00Z)")


def _updated(raw):
    return datetime.fromisoformat((raw.get("updated_at") or "1970-01-01T00:00:00Z").replace("Z", "+00:00"))


def gate_level(config, raw_pull, raw_files):
    """The relevance gate on a listing entry and its files list, without the PR or its diff."""
    document = {"pr": slim_pr(raw_pull), "diff": "", "files": [slim_file(raw) for raw in raw_files]}
    verdict, _, _ = gate(config, document["pr"], diff_from_document(document))
    return verdict["level"]


def last_reviewed_head(comments, marker_author=None):
    """The head SHA named by the newest report marker, counting only ``marker_author``'s comments when given."""
    if marker_author is not None:
        comments = [c for c in comments if (c.get("user") or {}).get("login") == marker_author]
    report = find_report_comment(comments)
    return reviewed_head(report["body"]) if report else None


def build_queue(client, config, repo, since, *, state="open", label=None, limit=None, marker_author=None):
    """The PRs of ``repo`` updated since ``since`` that pass the gate and have no report on their head.

    A rate limit ends the run with what was found so far and ``Queue.stopped`` set; the
    entries found are still right, the PRs not reached are simply missing.
    """
    queue = Queue()
    base = f"/repos/{repo}"
    try:
        listing = client.get_paginated(
            f"{base}/pulls",
            params={"state": state, "sort": "updated", "direction": "desc"},
            stop_when=lambda raw: _updated(raw) < since,
        )
    except RateLimited as error:
        queue.stopped = str(error)
        return queue
    if listing.capped:
        queue.warnings.append("the PR listing hit its page cap; narrow --since to see older PRs")
    candidates = [raw for raw in listing.items
                  if label is None or label in [entry.get("name") for entry in raw.get("labels") or []]]
    queue.listed = len(candidates)
    for raw in candidates:
        if limit is not None and len(queue.entries) >= limit:
            break
        try:
            _consider(client, config, base, raw, queue, marker_author)
        except RateLimited as error:
            queue.stopped = str(error)
            break
        except NotFound:
            queue.warnings.append(f"PR {raw['number']} vanished while listing it; skipped")
    return queue


def _consider(client, config, base, raw, queue, marker_author):
    number = raw["number"]
    files = client.get_paginated(f"{base}/pulls/{number}/files", max_pages=FILES_PAGE_LIMIT).items
    queue.gated += 1
    level = gate_level(config, raw, files)
    if level not in QUEUED_LEVELS:
        return
    queue.relevant += 1
    head = (raw.get("head") or {}).get("sha") or ""
    comments = client.get_paginated(f"{base}/issues/{number}/comments").items
    reviewed = last_reviewed_head(comments, marker_author)
    if reviewed is not None and head.startswith(reviewed):
        queue.up_to_date += 1
        return
    queue.entries.append(QueuedPR(number, head, level, raw.get("title") or "", reviewed))
