"""Many open PRs on a GitHubReplica, as review_queue.py reads them.

``serve_queue(replica, pulls)`` registers ``GET /repos/O/N/pulls`` (newest update first, paginated
like GitHub) and, per PR, its files and issue comments. Each ``QueuedPull`` carries its own
``updated_at`` and comment list; ``post_marker`` adds a report comment the way posting does,
bumping the PR's update time as GitHub does.
"""

from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timedelta
from datetime import timezone

from replica_pull_request import FakePull
from replica_pull_request import raw_file
from replica_pull_request import raw_issue_comment
from replica_pull_request import raw_pull
from replica_pull_request import sha_of

from vllm_rocm_review.automation.marker import format_marker

BOT = "github-actions[bot]"
NEWEST = datetime(2026, 8, 1, 10, 0, tzinfo=timezone.utc)
ROCM_PATCH = "@@ -1,2 +1,3 @@\n import torch\n+from vllm.platforms import current_platform\n x = 1"
DOCS_PATCH = "@@ -1,1 +1,2 @@\n # Title\n+A clarifying sentence."


def iso(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class QueuedPull:
    pull: FakePull
    updated_at: datetime
    comments: list = field(default_factory=list)  # (login, body)


def rocm_pull(number, updated_at):
    """A PR the gate rates full: a ROCm marker in the title and a ROCm platform file."""
    pull = FakePull(number=number, title=f"[ROCm] Tune the AITER path {number}", head_sha=sha_of(f"head-{number}"),
                    files=[{"filename": "vllm/platforms/rocm.py", "status": "modified", "additions": 1,
                            "deletions": 0, "patch": ROCM_PATCH}])
    return QueuedPull(pull, updated_at)


def docs_pull(number, updated_at):
    """A PR the gate rates none: a documentation sentence."""
    pull = FakePull(number=number, title=f"Clarify the quickstart {number}", head_sha=sha_of(f"head-{number}"),
                    files=[{"filename": "docs/getting_started/quickstart.md", "status": "modified", "additions": 1,
                            "deletions": 0, "patch": DOCS_PATCH}])
    return QueuedPull(pull, updated_at)


def mixed_queue(total, relevant_every):
    """``total`` PRs a minute apart, newest first; every ``relevant_every``-th one is a ROCm PR."""
    pulls = []
    for index in range(total):
        number = 60000 - index
        moment = NEWEST - timedelta(minutes=index)
        pulls.append(rocm_pull(number, moment) if index % relevant_every == 0 else docs_pull(number, moment))
    return pulls


def post_marker(queued, head_sha=None, login=BOT, moment=None):
    """A report comment for ``head_sha`` (default: the current head), as the posting step leaves it."""
    queued.comments.append((login, "## ROCm review\n\n…\n\n" + format_marker(head_sha or queued.pull.head_sha)))
    queued.updated_at = moment or queued.updated_at + timedelta(seconds=30)


def serve_queue(replica, pulls):
    """Register the listing and every PR's files and comments; call again after changing ``pulls``."""
    ordered = sorted(pulls, key=lambda queued: queued.updated_at, reverse=True)
    listing = []
    for queued in ordered:
        raw = raw_pull(queued.pull)
        raw["updated_at"] = iso(queued.updated_at)
        listing.append(raw)
        base = f"/repos/{queued.pull.repo}"
        replica.add_list(f"{base}/pulls/{queued.pull.number}/files",
                         [raw_file(queued.pull, entry) for entry in queued.pull.files])
        replica.add_list(f"{base}/issues/{queued.pull.number}/comments",
                         [raw_issue_comment(queued.pull, index, login, body)
                          for index, (login, body) in enumerate(queued.comments)])
    if pulls:
        replica.add_list(f"/repos/{pulls[0].pull.repo}/pulls", listing)
