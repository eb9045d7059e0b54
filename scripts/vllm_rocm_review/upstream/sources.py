"""Refresh the upstream reference copies in references/upstream/ from GitHub.

The sources (repo, path or tree, ref, target file) come from ``upstream_sources`` in
references/rocm-surface.yaml. A run has three phases so that a failure can never leave a
half-updated bundle:

1. probe: learn each source's upstream SHA without downloading content. One contents-API
   directory listing gives the blob SHAs of every file in a folder (aiter's SKILL.md,
   rules.md and MAPPING.md in one request); a branch answer gives a tree's root SHA.
2. download: fetch only what changed (raw media type for files, the recursive trees API for
   trees) into memory. Any failure here stops the run before anything is written.
3. commit: per source, keep the old copy and a unified diff under ``.previous/`` for the
   curator, rename the new file into place, and write ``.update-metadata.json`` last, listing
   only sources whose new files really are on disk.

The client's ETag cache turns repeated probes into 304 answers, which GitHub does not count
against the rate limit. Curated files (rules catalog, surface YAML, example report, SKILL.md)
live outside references/upstream/ and are never written.
"""

import difflib
import hashlib
import json
import posixpath
from dataclasses import dataclass
from pathlib import Path

from ..core.atomic_io import write_atomic
from ..github.git_trees import branch_head
from ..github.git_trees import fetch_full_tree
from ..github.client import NotFound

METADATA_NAME = ".update-metadata.json"
PREVIOUS_DIR_NAME = ".previous"
NO_NEWLINE = "\\ No newline at end of file"


@dataclass(frozen=True)
class Source:
    """One entry of ``upstream_sources``; ``ref`` None means the default branch."""

    name: str
    repo: str
    path: str
    ref: str | None
    kind: str
    target: str
    optional: bool

    @classmethod
    def from_surface(cls, entry):
        return cls(
            name=entry["name"],
            repo=entry["repo"],
            path=entry["path"],
            ref=entry.get("ref") or None,
            kind=entry["kind"],
            target=entry["target"],
            optional=bool(entry.get("optional")),
        )


@dataclass(frozen=True)
class UpstreamState:
    """What the probe learned: the SHA to compare, and for trees the branch and commit."""

    sha: str
    branch: str | None = None
    commit_sha: str | None = None


@dataclass
class Outcome:
    """What happened (or, in a dry run, would happen) to one source."""

    source: Source
    status: str  # updated | unchanged | missing | absent
    old_sha: str | None = None
    new_sha: str | None = None
    state: UpstreamState | None = None
    old_content: bytes | None = None
    new_content: bytes | None = None
    diff_text: str = ""
    lines_added: int = 0
    lines_removed: int = 0
    diff_path: Path | None = None  # the .previous/NAME.diff written for this source, if any

    def line(self, dry_run=False):
        """The stdout line; a dry run says what would be updated, since nothing was."""
        name = self.source.name
        if self.status == "updated":
            return (
                f"{'would update' if dry_run else 'updated'} {name} {_short(self.old_sha)}→{_short(self.new_sha)} "
                f"(+{self.lines_added}/−{self.lines_removed} lines)"
            )
        if self.status == "missing":
            return f"missing {name} ({'kept old copy' if self.old_content is not None else 'no local copy'})"
        if self.status == "absent":
            return f"absent {name} (optional)"
        return f"unchanged {name}"


@dataclass
class RefreshReport:
    outcomes: list
    metadata_written: bool
    dry_run: bool = False

    @property
    def drifted(self):
        """A required source vanished upstream: the curator has to look."""
        return any(o.status == "missing" and not o.source.optional for o in self.outcomes)

    def current_shas(self):
        """Upstream SHA per source that exists upstream now (for the curation line)."""
        return {o.source.name: o.new_sha for o in self.outcomes if o.new_sha and o.status in ("updated", "unchanged")}


def load_sources(surface):
    return [Source.from_surface(entry) for entry in surface.get("upstream_sources") or []]


def git_blob_sha(data):
    """The SHA git (and the contents API's ``sha``) gives a file with these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def load_metadata(upstream_dir, warn=None):
    """The metadata file as a dict with a ``sources`` mapping; empty when absent or unreadable."""
    path = Path(upstream_dir) / METADATA_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except (OSError, ValueError):
        if warn:
            warn(f"note: {path.name} is unreadable; every source will be downloaded again")
        data = {}
    if not isinstance(data, dict) or not isinstance(data.get("sources"), dict):
        data = {"sources": {}}
    return data


def refresh_upstream(client, upstream_dir, sources, *, now, force=False, dry_run=False, warn=None):
    """Probe, download what changed, and (unless ``dry_run``) commit it; return the report.

    Raises the client's ``GitHubError`` (or ``OSError``) on failure. A failure while probing or
    downloading leaves the directory untouched; one while committing leaves the sources already
    renamed into place recorded in the metadata, and every other source fully old.
    """
    warn = warn or (lambda message: None)
    upstream_dir = Path(upstream_dir)
    metadata = load_metadata(upstream_dir, warn)
    states = probe_upstream(client, sources, metadata["sources"])
    outcomes = [
        _plan(source, states[source.name], metadata["sources"].get(source.name) or {}, upstream_dir, force)
        for source in sources
    ]
    for outcome in outcomes:
        if outcome.status == "updated":
            _download(client, outcome, warn)
    written = False
    if not dry_run:
        written = _commit(upstream_dir, outcomes, metadata, now)
    return RefreshReport(outcomes, written, dry_run)


def probe_upstream(client, sources, recorded=None):
    """``{source name: UpstreamState or None}``, None meaning the source is not upstream.

    ``recorded`` (metadata per source) lends trees the default branch found last time.
    """
    recorded = recorded or {}
    listings = {}
    heads = {}
    states = {}
    for source in sources:
        if source.kind == "tree":
            hint = (recorded.get(source.name) or {}).get("branch")
            states[source.name] = _probe_tree(client, source, heads, hint)
        else:
            states[source.name] = _probe_file(client, source, listings)
    return states


def _probe_file(client, source, listings):
    folder, name = posixpath.split(source.path.strip("/"))
    key = (source.repo, source.ref, folder)
    if key not in listings:
        listings[key] = _list_folder(client, source.repo, folder, source.ref)
    entry = listings[key].get(name)
    if not entry or entry.get("type") != "file" or not entry.get("sha"):
        return None
    return UpstreamState(sha=entry["sha"])


def _list_folder(client, repo, folder, ref):
    """``{file name: listing entry}`` of one folder; empty when the folder is gone."""
    try:
        path = f"/repos/{repo}/contents" + (f"/{folder}" if folder else "")
        listing = client.get_json(path, params=_ref_params(ref))
    except NotFound:
        return {}
    if not isinstance(listing, list):  # the "folder" is a file now
        return {}
    return {entry.get("name"): entry for entry in listing if isinstance(entry, dict)}


def _probe_tree(client, source, heads, default_hint):
    key = (source.repo, source.ref)
    if key not in heads:
        try:
            heads[key] = branch_head(client, source.repo, source.ref, default_hint)
        except NotFound:
            heads[key] = None
    head = heads[key]
    if head is None:
        return None
    return UpstreamState(sha=head.tree_sha, branch=head.branch, commit_sha=head.commit_sha)


def _plan(source, state, recorded, upstream_dir, force):
    local = upstream_dir / source.target
    old_content = local.read_bytes() if local.is_file() else None
    on_disk_sha = _content_sha(source, old_content) if old_content is not None else None
    outcome = Outcome(source, "unchanged", old_sha=on_disk_sha, old_content=old_content)
    if state is None:
        outcome.status = "absent" if source.optional and old_content is None else "missing"
        return outcome
    outcome.state = state
    outcome.new_sha = state.sha
    # The recorded SHA decides; the copy on disk is checked too, so a hand-edited or deleted
    # copy (or metadata lost in a crash) is repaired rather than trusted.
    if force or state.sha != recorded.get("sha") or on_disk_sha != state.sha:
        outcome.status = "updated"
    return outcome


def _content_sha(source, content):
    """The SHA a local copy corresponds to: blob SHA for files, root tree SHA for trees."""
    if source.kind != "tree":
        return git_blob_sha(content)
    try:
        return json.loads(content.decode("utf-8")).get("sha")
    except (UnicodeDecodeError, ValueError, AttributeError):
        return None


def _download(client, outcome, warn):
    source = outcome.source
    if source.kind == "tree":
        entries = fetch_full_tree(client, source.repo, outcome.state.sha)
        document = {"sha": outcome.state.sha, "tree": entries, "truncated": False}
        outcome.new_content = (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    else:
        path = f"/repos/{source.repo}/contents/{source.path}"
        outcome.new_content = client.get_bytes(path, params=_ref_params(source.ref))
        actual = git_blob_sha(outcome.new_content)
        if actual != outcome.state.sha:
            warn(f"note: {source.name} changed upstream during the run; recording the downloaded {actual[:8]}")
            outcome.new_sha = actual
    old_lines = _comparable_lines(source, outcome.old_content)
    new_lines = _comparable_lines(source, outcome.new_content)
    old_label = f"a/{source.target} ({_short(outcome.old_sha)})" if outcome.old_content is not None else "/dev/null"
    diff = list(difflib.unified_diff(old_lines, new_lines, old_label, f"b/{source.target} ({_short(outcome.new_sha)})"))
    outcome.diff_text = "".join(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}\n" for line in diff)
    body = diff[2:]
    outcome.lines_added = sum(1 for line in body if line.startswith("+"))
    outcome.lines_removed = sum(1 for line in body if line.startswith("-"))


def _comparable_lines(source, content):
    """Lines a curator can read in a diff: the text, or for a tree one line per path."""
    if content is None:
        return []
    if source.kind != "tree":
        return content.decode("utf-8", errors="replace").splitlines(keepends=True)
    try:
        entries = json.loads(content.decode("utf-8")).get("tree") or []
    except (UnicodeDecodeError, ValueError, AttributeError):
        return []
    return [f"{e.get('path')}{'/' if e.get('type') == 'tree' else ''}\n" for e in entries if isinstance(e, dict)]


def _commit(upstream_dir, outcomes, metadata, now):
    """Write changed sources, then the metadata (also after a failure, for what landed)."""
    previous_dir = upstream_dir / PREVIOUS_DIR_NAME
    landed = []
    try:
        for outcome in outcomes:
            if outcome.status != "updated":
                continue
            source = outcome.source
            if outcome.new_content != outcome.old_content:
                if outcome.old_content is not None:
                    write_atomic(previous_dir / source.target, outcome.old_content)
                diff_path = previous_dir / f"{source.name}.diff"
                write_atomic(diff_path, outcome.diff_text)
                outcome.diff_path = diff_path  # set only once written: a dry run names no diff file
            write_atomic(upstream_dir / source.target, outcome.new_content)
            landed.append(outcome)
    finally:
        if landed:
            for outcome in landed:
                metadata["sources"][outcome.source.name] = _metadata_entry(outcome, now)
            metadata["fetched_at"] = now
            ordered = {"fetched_at": metadata["fetched_at"], "sources": metadata["sources"]}
            write_atomic(upstream_dir / METADATA_NAME, json.dumps(ordered, indent=2, ensure_ascii=False) + "\n")
    return bool(landed)


def _metadata_entry(outcome, now):
    source = outcome.source
    entry = {
        "repo": source.repo,
        "path": source.path,
        "ref": source.ref,
        "kind": source.kind,
        "target": source.target,
        "sha": outcome.new_sha,
        "previous_sha": outcome.old_sha,
        "bytes": len(outcome.new_content),
        "fetched_at": now,
    }
    if outcome.state.commit_sha:
        entry["branch"] = outcome.state.branch
        entry["commit_sha"] = outcome.state.commit_sha
    return entry


def _ref_params(ref):
    return {"ref": ref} if ref else None


def _short(sha):
    return sha[:8] if sha else "none"
