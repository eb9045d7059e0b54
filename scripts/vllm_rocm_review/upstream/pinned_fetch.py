"""Trees and files of pinned upstream repositories (AITER, mori), cached on disk.

Shared by the context pack (which reads definitions at the pin and saves some files for the
reviewer) and the report checker (which checks citations against the same trees without
copying anything). Layout under ``cache_dir``:

    trees/OWNER/NAME/REF.json    {path: {"type", "sha"}} of the whole tree at REF
    commits/OWNER/NAME/ABBREV    the full SHA an abbreviated commit pin names
    blobs/SH/SHA                 file bytes by git blob SHA

A tree at a full commit SHA never changes and is read from disk with no request; a tree at a
tag or branch is asked again (the client's ETag cache makes that a free 304) and rewritten.
``StoredTrees`` reads the same files without a client, for offline checks.
"""

import configparser
import json
import re
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from pathlib import PurePosixPath

from ..core.atomic_io import write_atomic
from ..github.client import RAW_MEDIA_TYPE
from ..github.client import GitHubError
from ..github.client import NotFound
from ..github.git_trees import fetch_full_tree
from .sources import git_blob_sha

COMMIT_SHA = re.compile(r"^[0-9a-f]{40}$")
SHORT_SHA = re.compile(r"^[0-9a-f]{7,39}$")
GITHUB_URL = re.compile(r"github\.com[:/](?P<repo>[^/\s]+/[^/\s]+?)(?:\.git)?/?$")


class RefMissing(Exception):
    """The pinned ref is not in the repository (404 on its tree)."""


@dataclass
class Fetched:
    repo: str
    ref: str
    path: str
    text: str
    data: bytes


@dataclass
class SaveBudget:
    """How many files and bytes a PR may save; what did not fit is listed in ``cut``."""

    max_files: int
    max_bytes: int
    saved: list = field(default_factory=list)
    cut: list = field(default_factory=list)
    bytes_used: int = 0

    def admit(self, size):
        return len(self.saved) < self.max_files and self.bytes_used + size <= self.max_bytes


def tree_file(cache_dir, repo, ref):
    return Path(cache_dir) / "trees" / repo / f"{ref.replace('/', '_')}.json"


def saved_path(save_root, repo, ref, path):
    """Where a file of ``repo@ref`` is saved: ``save_root/OWNER/NAME@REF/PATH``."""
    owner, name = repo.split("/")
    return Path(save_root).joinpath(owner, f"{name}@{ref.replace('/', '_')}", *path.split("/"))


class StoredTrees:
    """Trees and blobs a previous run cached, read without any request (None when absent)."""

    def __init__(self, cache_dir):
        self.cache_dir = Path(cache_dir)

    def tree(self, repo, ref):
        for candidate in (ref, self.full_sha(repo, ref)):
            if candidate is None:
                continue
            try:
                return json.loads(tree_file(self.cache_dir, repo, candidate).read_text(encoding="utf-8"))
            except (OSError, ValueError, TypeError):
                continue
        return None

    def full_sha(self, repo, ref):
        """The full SHA a previous run found for an abbreviated one, or None."""
        try:
            return (self.cache_dir / "commits" / repo / ref).read_text(encoding="ascii").strip()
        except OSError:
            return None

    def blob(self, sha):
        try:
            return (self.cache_dir / "blobs" / sha[:2] / sha).read_bytes()
        except OSError:
            return None


class PinnedFetcher:
    """Trees and files of (repository, ref) pairs through the client, with the disk cache."""

    def __init__(self, client, cache_dir):
        self.client = client
        self.cache_dir = Path(cache_dir)
        self.stored = StoredTrees(cache_dir)
        self.trees = {}
        self.commits = {}

    def tree(self, repo, ref):
        """``{path: entry}`` of the whole tree at ``ref``; raises RefMissing on a 404."""
        key = (repo, ref)
        if key not in self.trees:
            self.trees[key] = self._load_tree(repo, ref)
        if self.trees[key] is None:
            raise RefMissing(ref)
        return self.trees[key]

    def commit_of(self, repo, ref):
        """The full commit SHA for an abbreviated one (the trees and contents APIs want it whole)."""
        if not SHORT_SHA.match(ref):
            return ref
        if (repo, ref) not in self.commits:
            full = self.stored.full_sha(repo, ref)
            if full is None:
                full = self._ask_full_sha(repo, ref)
                if full != ref:
                    _store(self.cache_dir / "commits" / repo / ref, full.encode("ascii"))
            self.commits[(repo, ref)] = full
        return self.commits[(repo, ref)]

    def _ask_full_sha(self, repo, ref):
        try:
            data = self.client.get_json(f"/repos/{repo}/commits/{ref}")
        except GitHubError as error:
            if error.status not in (404, 422):  # GitHub answers 422 "No commit found for SHA"
                raise
            return ref  # no such commit: the tree request decides, and a 404 there is the finding
        full = data.get("sha") if isinstance(data, dict) else None
        return full if isinstance(full, str) and COMMIT_SHA.match(full) else ref

    def _load_tree(self, repo, ref):
        ref = self.commit_of(repo, ref)
        stored = tree_file(self.cache_dir, repo, ref)
        if COMMIT_SHA.match(ref):
            tree = self.stored.tree(repo, ref)
            if tree is not None:
                return tree
        try:
            data = self.client.get_json(f"/repos/{repo}/git/trees/{ref}", params={"recursive": "1"})
        except NotFound:
            return None
        entries = data.get("tree") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise GitHubError(f"GET /repos/{repo}/git/trees/{ref}: the answer has no tree list")
        if data.get("truncated"):
            entries = fetch_full_tree(self.client, repo, data["sha"])
        tree = {entry["path"]: {"type": entry.get("type"), "sha": entry.get("sha")} for entry in entries}
        _store(stored, json.dumps(tree).encode("utf-8"))
        return tree

    def read(self, repo, ref, path):
        """The file at ``path`` (following a submodule entry on the way), or None if absent."""
        found = self._locate(repo, ref, path)
        if found is None:
            return None
        repo, ref, path, sha = found
        data = self._blob(repo, self.commit_of(repo, ref), path, sha)
        return Fetched(repo, ref, path, data.decode("utf-8", errors="replace"), data)

    def _locate(self, repo, ref, path):
        """``(repo, ref, path, blob sha)`` of the file, after any submodule hop, or None."""
        tree = self.tree(repo, ref)
        entry = tree.get(path)
        if entry is not None:
            return (repo, ref, path, entry["sha"]) if entry["type"] == "blob" else None
        parts = PurePosixPath(path).parts
        for cut in range(len(parts) - 1, 0, -1):
            prefix = "/".join(parts[:cut])
            entry = tree.get(prefix)
            if entry is None:
                continue
            if entry["type"] != "commit":
                return None
            target = self._submodule_repo(repo, ref, prefix)
            if target is None:
                return None
            return self._locate(target, entry["sha"], "/".join(parts[cut:]))
        return None

    def _submodule_repo(self, repo, ref, prefix):
        """OWNER/NAME of the submodule at ``prefix``, from ``.gitmodules`` at the ref."""
        gitmodules = self.read(repo, ref, ".gitmodules")
        if gitmodules is None:
            return None
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(gitmodules.text)
        except configparser.Error:
            return None
        for section in parser.sections():
            if parser.get(section, "path", fallback="").strip().strip("/") == prefix:
                url = parser.get(section, "url", fallback="").strip()
                match = GITHUB_URL.search(url)
                if match:
                    return match.group("repo")
                if url.startswith("../"):  # relative to the superproject's owner
                    return f"{repo.split('/')[0]}/{url[3:].removesuffix('.git')}"
        return None

    def _blob(self, repo, ref, path, sha):
        data = self.stored.blob(sha)
        if data is not None:
            return data
        data = self.client.get_bytes(f"/repos/{repo}/contents/{path}", params={"ref": ref}, accept=RAW_MEDIA_TYPE)
        if git_blob_sha(data) == sha:
            _store(self.cache_dir / "blobs" / sha[:2] / sha, data)
        return data


def save_fetched(fetched, save_root, budget):
    """Save a fetched file under ``save_root`` if the budget admits it; the saved path or None."""
    target = saved_path(save_root, fetched.repo, fetched.ref, fetched.path)
    label = f"{fetched.repo}@{fetched.ref}:{fetched.path}"
    if str(target) in budget.saved:
        return str(target)
    if not budget.admit(len(fetched.data)):
        if label not in budget.cut:
            budget.cut.append(label)
        return None
    write_atomic(target, fetched.data)
    budget.saved.append(str(target))
    budget.bytes_used += len(fetched.data)
    return str(target)


def _store(path, data):
    try:
        write_atomic(path, data)
    except OSError:
        pass  # an unwritable cache only costs requests next time


class CitationTrees:
    """What the report checker knows of a cited ``repo@ref``: the tree a pack cached, and a
    file's line count, from the blob cache or, when ``client_factory`` is given (not offline),
    fetched on demand through the same cached client."""

    def __init__(self, cache_dir, client_factory=None):
        self.cache_dir = Path(cache_dir)
        self.stored = StoredTrees(cache_dir)
        self.client_factory = client_factory
        self._fetcher = None

    def tree(self, repo, ref):
        return self.stored.tree(repo, ref)

    def line_count(self, repo, ref, path):
        """Lines of the file, or None when it cannot be read without the network (or at all)."""
        tree = self.tree(repo, ref)
        entry = (tree or {}).get(path)
        if entry is None or entry.get("type") != "blob":
            return None
        data = self.stored.blob(entry["sha"])
        if data is None and self.client_factory is not None:
            if self._fetcher is None:
                self._fetcher = PinnedFetcher(self.client_factory(), self.cache_dir)
            self._fetcher.trees[(repo, ref)] = tree  # already known: no tree request
            try:
                fetched = self._fetcher.read(repo, ref, path)
            except (GitHubError, RefMissing):
                return None
            data = fetched.data if fetched else None
        return None if data is None else len(data.decode("utf-8", errors="replace").splitlines())
