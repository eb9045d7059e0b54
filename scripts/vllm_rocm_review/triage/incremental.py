"""Re-review after a push: what changed between the reviewed head and the new one.

The posted report's marker names the head it reviewed. ``changes_since`` diffs that commit
against the PR's new head in the local clone fetch_pr_data.py --checkout made, keeps the files
the PR itself changes (after a rebase the two heads also differ by everything the base gained,
which is not the PR's work) and lists their hunks. ``focused_plan`` re-derives the rules and
the reading plan from those changes only, so the second review reads what the first did not see.
"""

import os
import re
import subprocess
from pathlib import Path

from ..core.diff_parse import DIFF_HEADER
from ..core.diff_parse import HUNK_HEADER
from ..core.diff_parse import parse_diff
from . import families as family_rules
from . import reading_plan as reading
from . import risk

SHA_PREFIX = re.compile(r"[0-9a-fA-F]{7,40}")
GIT_TIMEOUT = 600
REFETCH_CHECKOUT = "fetch the PR again with scripts/fetch_pr_data.py --checkout DIR"


class SinceError(Exception):
    """--since cannot be served; ``str()`` is the error line without its ``error:`` prefix."""


def clone_for(document, repo_override=None):
    """The clone to diff in: ``--repo`` when given, else the path meta.checkout records."""
    if repo_override:
        return Path(repo_override).expanduser()
    checkout = (document.get("meta") or {}).get("checkout")
    if not checkout or not checkout.get("path"):
        raise SinceError("--since needs a clone of the PR, and the PR document records no checkout; "
                         f"{REFETCH_CHECKOUT}, or pass --repo CLONE")
    return Path(checkout["path"])


def changes_since(clone, old_sha, document):
    """What the PR's own files changed from ``old_sha`` to its head: ``(summary, file diffs)``."""
    head = document["pr"]["head"]["sha"]
    if not Path(clone).is_dir():
        raise SinceError(f"clone {clone} does not exist; {REFETCH_CHECKOUT}, or pass --repo CLONE")
    try:
        _git(clone, "rev-parse", "--git-dir")
    except SinceError:
        raise SinceError(f"{clone} is not a git clone; {REFETCH_CHECKOUT}, or pass --repo CLONE") from None
    old = _commit(clone, old_sha, f"reviewed head {old_sha} is not a commit in {clone}; fetch it there "
                                  f"(git -C {clone} fetch origin {old_sha}) or review the whole PR without --since")
    new = _commit(clone, head, f"the PR head {head[:12]} is not in {clone}; {REFETCH_CHECKOUT}")
    text = _git(clone, "diff", "--no-color", "--no-ext-diff", "--find-renames", old, new)
    pr_paths = {entry["filename"] for entry in document.get("files") or []}
    diffs, hunks, outside = [], {}, []
    for diff, file_hunks in zip(parse_diff(text), _hunks_per_file(text)):
        if diff.path in pr_paths:
            diffs.append(diff)
            hunks[diff.path] = file_hunks
        else:
            outside.append(diff.path)
    summary = {
        "reviewed_head": old,
        "head": new,
        "rebased": not _is_ancestor(clone, old, new),
        "files": [{"path": diff.path, "status": diff.status, "old_path": diff.old_path,
                   "hunks": hunks[diff.path]} for diff in diffs],
        "outside_pr": outside,
    }
    return summary, diffs


def focused_plan(config, catalog, document, result, diffs):
    """The reading plan of the rules the changed files bring, at the whole PR's relevance level."""
    level = result["relevance"]
    paths = {diff.path for diff in diffs}
    rocm_files = [entry for entry in result["rocm_files"] if entry["path"] in paths]
    shared_files = [entry for entry in result["shared_files"] if entry["path"] in paths]
    context = family_rules.build_context(config, document["pr"], diffs, level, rocm_files, shared_files)
    pr_types = family_rules.match_pr_types(config, context, level)
    fired = family_rules.derive_families(config, context, level)
    rules, judgment, _ = family_rules.collect_rules(config, pr_types, fired, level)
    tiers = risk.file_tiers(config, diffs)
    return reading.plan(config, catalog, level, rules, judgment, tiers, pr_types, fired, result["checks"]["perf-claims"],
                        scope_paths=[diff.path for diff in context.scope_diffs],
                        lines=reading.product_lines(config, context.scope_diffs, None),
                        touched_paths=sorted(paths))


def _hunks_per_file(text):
    """Per ``diff --git`` block, in order: its hunks as {start, lines, section} on the new side."""
    blocks = []
    for line in text.split("\n"):
        if DIFF_HEADER.match(line):
            blocks.append([])
            continue
        match = HUNK_HEADER.match(line)
        if match and blocks:
            count = int(match.group(4)) if match.group(4) is not None else 1
            blocks[-1].append({"start": int(match.group(3)), "lines": count, "section": line[match.end():].strip()})
    return blocks


def _commit(clone, sha, problem):
    try:
        return _git(clone, "rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}").strip()
    except SinceError:
        raise SinceError(problem) from None


def _is_ancestor(clone, old, new):
    try:
        _git(clone, "merge-base", "--is-ancestor", old, new)
    except SinceError:
        return False
    return True


def _git(clone, *args):
    environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(["git", "-C", str(clone), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, env=environment, check=False)
    except (OSError, subprocess.SubprocessError) as error:
        raise SinceError(f"git failed in {clone}: {error}; check that git is installed and {clone} is a clone") from None
    if done.returncode != 0:
        reason = " ".join((done.stderr or "no message").split())[:200]
        raise SinceError(f"git {args[0]} failed in {clone}: {reason}")
    return done.stdout
