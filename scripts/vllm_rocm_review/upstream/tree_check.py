"""The vLLM layout tripwire: do the paths in rocm-surface.yaml still exist in vLLM main?

The skill's facts name vLLM files (backbone tiers, known ROCm paths, shared surface, tuning
config globs). vLLM moves files often; a stale path silently weakens triage and misleads a
reviewer. One branch request and (only when the tree changed) one recursive trees request
answer every path at once. The path list is saved to references/upstream/vllm-tree.json for
the report checker.

Verdicts, one line each: ``OK path``; ``MOVED path -> new/path`` when the same file name
exists elsewhere (the candidate sharing the longest path suffix, then prefix, with a count of
the others); ``MISSING path``. A glob is OK when any path matches it. Entries marked
``old: true`` are expected to be gone: ``OLD-ABSENT path``, or ``REAPPEARED path`` when one is
back. Drift comes first (MOVED, MISSING, REAPPEARED), then OK, then OLD-ABSENT, so that a
curator sees the few lines that need work above the hundred that do not.
"""

import json
import posixpath
from dataclasses import dataclass
from pathlib import Path

from ..core.atomic_io import write_atomic
from ..github.git_trees import branch_head
from ..github.git_trees import fetch_full_tree
from ..github.pr_ref import DEFAULT_REPO as VLLM_REPO
from ..core.surface import glob_matches
from ..core.surface import is_glob
from ..core.surface import iter_surface_paths

TREE_FILE_NAME = "vllm-tree.json"
DRIFT_STATUSES = ("MOVED", "MISSING", "REAPPEARED")
STATUS_ORDER = (*DRIFT_STATUSES, "OK", "OLD-ABSENT")


@dataclass(frozen=True)
class PathVerdict:
    path: str
    status: str  # OK | MOVED | MISSING | OLD-ABSENT | REAPPEARED
    moved_to: str | None = None
    other_candidates: int = 0

    def line(self):
        if self.status != "MOVED":
            return f"{self.status} {self.path}"
        others = f" (+{self.other_candidates} other candidate{'s' if self.other_candidates != 1 else ''})"
        return f"MOVED {self.path} -> {self.moved_to}{others if self.other_candidates else ''}"


@dataclass
class TreeCheckReport:
    repo: str
    branch: str
    commit_sha: str
    tree_sha: str
    tree_source: str  # "downloaded" or "saved copy"
    saved: bool
    verdicts: list

    @property
    def drifted(self):
        return any(verdict.status in DRIFT_STATUSES for verdict in self.verdicts)

    def summary(self):
        """One line for stderr, e.g. ``vllm tree @6adad087: 113 OK, 1 MOVED, 0 MISSING; 15 old locations absent``."""
        counts = {status: 0 for status in STATUS_ORDER}
        for verdict in self.verdicts:
            counts[verdict.status] += 1
        reappeared = f", {counts['REAPPEARED']} REAPPEARED" if counts["REAPPEARED"] else ""
        return (
            f"vllm tree @{self.commit_sha[:8]}: {counts['OK']} OK, {counts['MOVED']} MOVED, "
            f"{counts['MISSING']} MISSING; {counts['OLD-ABSENT']} old locations absent{reappeared} "
            f"({self.tree_source})"
        )


def surface_path_checks(surface):
    """``[(path, old)]`` for every vLLM path the surface names (a ``moved_to`` too), first mention wins."""
    checks = {}
    for _section, entry in iter_surface_paths(surface):
        checks.setdefault(entry["path"], bool(entry.get("old")))
        if entry.get("moved_to"):
            checks.setdefault(entry["moved_to"], False)
    return list(checks.items())


def check_paths(tree_paths, checks):
    """A verdict per ``(path, old)`` check against the tree's paths, drift first (see STATUS_ORDER)."""
    present = set(tree_paths)
    for path in tree_paths:  # folders count too, even when only blobs were listed
        folder = posixpath.dirname(path)
        while folder and folder not in present:
            present.add(folder)
            folder = posixpath.dirname(folder)
    by_name = {}
    for path in present:
        by_name.setdefault(posixpath.basename(path), []).append(path)
    verdicts = []
    for path, old in checks:
        found = _exists(path, present)
        if old:
            verdicts.append(PathVerdict(path, "REAPPEARED" if found else "OLD-ABSENT"))
        elif found:
            verdicts.append(PathVerdict(path, "OK"))
        else:
            verdicts.append(_relocated(path, by_name))
    return sorted(verdicts, key=lambda verdict: STATUS_ORDER.index(verdict.status))  # stable: YAML order within a status


def _exists(path, present):
    return path in present if not is_glob(path) else bool(glob_matches(path, present))


def _relocated(path, by_name):
    """MOVED to the likeliest path with the same file name, or MISSING."""
    name = posixpath.basename(path)
    if is_glob(name):
        candidates = [p for key in glob_matches(name, by_name) for p in by_name[key]]
    else:
        candidates = list(by_name.get(name, []))
    if not candidates:
        return PathVerdict(path, "MISSING")
    best = min(candidates, key=lambda candidate: _closeness(path, candidate))
    return PathVerdict(path, "MOVED", best, len(candidates) - 1)


def _closeness(path, candidate):
    """Sort key: most shared trailing components, then leading ones, then shortest, then name."""
    wanted, found = path.split("/"), candidate.split("/")
    suffix = 0
    while suffix < min(len(wanted), len(found)) and _same(wanted[-1 - suffix], found[-1 - suffix]):
        suffix += 1
    prefix = 0
    while prefix < min(len(wanted), len(found)) and _same(wanted[prefix], found[prefix]):
        prefix += 1
    return (-suffix, -prefix, len(found), candidate)


def _same(pattern_part, part):
    return bool(glob_matches(pattern_part, [part]))


def is_saved_tree(data):
    """Does parsed JSON look like a saved vllm-tree.json (a ``paths`` list of strings)?"""
    paths = data.get("paths") if isinstance(data, dict) else None
    return isinstance(paths, list) and all(isinstance(path, str) for path in paths)


def load_saved_tree(upstream_dir):
    """The saved vllm-tree.json as a dict, or None when absent or unreadable."""
    try:
        data = json.loads((Path(upstream_dir) / TREE_FILE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if is_saved_tree(data) else None


def check_vllm_tree(client, upstream_dir, checks, *, now, force=False, dry_run=False, repo=VLLM_REPO):
    """Check ``checks`` against vLLM's default branch; save the path list when the tree changed."""
    saved = load_saved_tree(upstream_dir)
    head = branch_head(client, repo, default_hint=(saved or {}).get("ref"))
    if saved and saved.get("tree_sha") == head.tree_sha and not force:
        paths, tree_source, written = saved["paths"], "saved copy", False
    else:
        paths = [entry["path"] for entry in fetch_full_tree(client, repo, head.tree_sha)]
        tree_source = "downloaded"
        written = not dry_run
        if written:
            document = {
                "repo": repo,
                "ref": head.branch,
                "commit_sha": head.commit_sha,
                "tree_sha": head.tree_sha,
                "fetched_at": now,
                "paths": paths,
            }
            write_atomic(Path(upstream_dir) / TREE_FILE_NAME, json.dumps(document, indent=1) + "\n")
    verdicts = check_paths(paths, checks)
    return TreeCheckReport(repo, head.branch, head.commit_sha, head.tree_sha, tree_source, written, verdicts)
