"""The code around the diff: a git checkout of the PR (--checkout) or its changed files (--sources).

--checkout fetches ``pull/N/head`` and the base commit into ``refs/vllm-rocm-review/pr-N/*`` of a
local clone (created empty when the path does not exist, and removed again when the fetch fails).
It never touches the clone's working tree, index or current branch, and it never hands git a
token: the repository must be readable anonymously. --sources downloads the head version of up to ``limit`` changed files through the
contents API, ROCm and backbone paths first (patterns from references/rocm-surface.yaml).
"""

import os
import re
import shutil
import subprocess
from pathlib import Path
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from ..core.atomic_io import write_atomic
from .client import RAW_MEDIA_TYPE
from .client import GitHubError
from ..core.surface import SurfaceError
from ..core.surface import entry_matches
from ..core.surface import find_markers
from ..core.surface import load_surface

GIT_URL_ENV = "VLLM_ROCM_REVIEW_GIT_URL"
REF_NAMESPACE = "refs/vllm-rocm-review"
DEFAULT_SOURCES_LIMIT = 30
GIT_TIMEOUT = 3600
COMMIT_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


class CheckoutError(Exception):
    """--checkout could not complete; str() is one line for a warning."""


def git_base_url(api_url):
    """Where repositories are cloned from: $VLLM_ROCM_REVIEW_GIT_URL, else the API's web host."""
    explicit = os.environ.get(GIT_URL_ENV, "").strip()
    if explicit:
        return explicit.rstrip("/")
    parts = urlsplit(api_url)
    host = parts.netloc
    if host.lower() == "api.github.com":
        host = "github.com"
    return f"{parts.scheme}://{host}"


def fetch_checkout(directory, repo, number, base_sha, git_base):
    """Fetch the PR head and base commit into ``directory``; return meta.checkout."""
    if not COMMIT_SHA.fullmatch(base_sha or ""):
        raise CheckoutError(f"base SHA {base_sha!r} from the API is not a commit id")
    path = Path(directory).expanduser().resolve()
    created = _what_to_create(path)
    try:
        if created is not None:
            _create_repository(path)
        return _fetch_refs(path, f"{git_base}/{repo}.git", number, base_sha)
    except BaseException:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        raise


def _what_to_create(path):
    """None for an existing clone; else the top path a new repository at ``path`` adds."""
    if path.exists() and not path.is_dir():
        raise CheckoutError(f"{path} is a file, not a git clone")
    if path.is_dir() and any(path.iterdir()):
        try:
            _git(path, "rev-parse", "--git-dir")
        except CheckoutError:
            raise CheckoutError(f"{path} is neither a git clone nor empty; give a clone or a new path") from None
        return None
    if path.is_dir():
        return path / ".git"
    return next(parent for parent in (*reversed(path.parents), path) if not parent.exists())


def _create_repository(path):
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CheckoutError(f"cannot create {path}: {error.strerror or error}") from None
    _git(path, "init", "--quiet")


def _fetch_refs(path, url, number, base_sha):
    head_ref = f"{REF_NAMESPACE}/pr-{number}/head"
    base_ref = f"{REF_NAMESPACE}/pr-{number}/base"
    fetch = ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", url]
    try:
        _git(path, *fetch, f"+refs/pull/{number}/head:{head_ref}", f"+{base_sha}:{base_ref}")
    except CheckoutError:
        # Some servers refuse to send a commit by SHA; the clone may already hold the base.
        _git(path, *fetch, f"+refs/pull/{number}/head:{head_ref}")
        try:
            _git(path, "update-ref", base_ref, f"{base_sha}^{{commit}}")
        except CheckoutError:
            raise CheckoutError(f"base commit {base_sha[:12]} is not in {path} and {url} would not send it") from None
    head_sha = _git(path, "rev-parse", head_ref)
    try:
        merge_base = _git(path, "merge-base", base_ref, head_ref)
    except CheckoutError:
        merge_base = None
    return {"path": str(path), "base_sha": base_sha, "head_sha": head_sha, "merge_base": merge_base}


def _git(path, *args):
    environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(
            ["git", "-C", str(path), *args],
            capture_output=True,
            text=True,
            env=environment,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise CheckoutError(f"git {args[0]} could not run: {error}") from None
    if done.returncode != 0:
        detail = " ".join((done.stderr or done.stdout).split())[:200] or f"exit {done.returncode}"
        raise CheckoutError(f"git {args[0]} failed in {path}: {detail}")
    return done.stdout.strip()


def add_code_context(client, ref, document, checkout=None, sources=None, sources_limit=None):
    """Run --checkout into ``checkout`` or --sources into ``sources``; failures become meta.warnings.

    The PR document stands without its code context, so neither failure is an exit code here;
    callers that need the checkout look for meta.checkout.
    """
    warnings = []
    pr, meta = document["pr"], document["meta"]
    if checkout is not None:
        try:
            meta["checkout"] = fetch_checkout(checkout, ref.repo, ref.number, pr["base"]["sha"],
                                              git_base_url(client.api_url))
        except CheckoutError as error:
            warnings.append(f"--checkout skipped: {error}")
        else:
            if meta["checkout"]["head_sha"] != pr["head"]["sha"]:
                warnings.append("--checkout: the PR head moved while fetching; the clone's head differs from pr.head.sha")
    elif sources is not None:
        limit = DEFAULT_SOURCES_LIMIT if sources_limit is None else sources_limit
        meta["sources"], source_warnings = download_sources(client, ref.repo, pr["head"]["sha"], document["files"],
                                                            sources, limit=limit)
        warnings.extend(source_warnings)
    if warnings:
        meta.setdefault("warnings", []).extend(warnings)


# --- --sources --------------------------------------------------------------------------------


def load_priority_surface():
    """The surface facts that order --sources, or None when the file cannot be read right now."""
    try:
        return load_surface()
    except SurfaceError:
        return None


def prioritize_paths(paths, surface):
    """``paths`` with ROCm-looking (markers.path) and backbone files first, else in their order."""
    if not surface:
        return list(paths)
    backbone = surface.get("backbone_tiers") or []

    def important(path):
        return bool(find_markers(surface, "path", path)) or any(entry_matches(entry, path) for entry in backbone)

    return sorted(paths, key=lambda path: not important(path))


def download_sources(client, repo, head_sha, files, directory, limit=DEFAULT_SOURCES_LIMIT, surface=None):
    """Save the head version of changed files under ``directory``; return (meta.sources, warnings).

    Removed files have no head version and count as skipped, as do files past ``limit``.
    """
    root = Path(directory).expanduser().resolve()
    present = [entry["filename"] for entry in files if entry["status"] != "removed"]
    ordered = prioritize_paths(present, surface if surface is not None else load_priority_surface())
    fetched, warnings = [], []
    skipped = [entry["filename"] for entry in files if entry["status"] == "removed"]
    stopped = False
    for index, name in enumerate(ordered):
        target = _safe_target(root, name)
        if stopped or index >= limit or target is None:
            skipped.append(name)
            continue
        try:
            content = client.get_bytes(f"/repos/{repo}/contents/{name}", params={"ref": head_sha}, accept=RAW_MEDIA_TYPE)
        except GitHubError as error:
            # The PR document stands without sources; a rate limit or outage ends the downloads.
            stopped = error.status not in (403, 404)
            warnings.append(f"source {name} not downloaded: {error}")
            skipped.append(name)
            continue
        try:
            write_atomic(target, content)
        except OSError as error:
            warnings.append(f"source {name} not saved: {error.filename}: {error.strerror}; check --sources {directory}")
            skipped.append(name)
            stopped = True
            continue
        fetched.append(name)
    return {"dir": str(root), "fetched": fetched, "skipped": skipped}, warnings


def _safe_target(root, name):
    """The local path for repository path ``name``, or None if it would escape ``root``."""
    relative = PurePosixPath(name)
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        return None
    return root.joinpath(*relative.parts)


def commit_paths(directory, commit):
    """Every file path in ``commit``'s tree in the clone at ``directory`` (git ls-tree, no work tree needed)."""
    if not COMMIT_SHA.fullmatch(commit or ""):
        raise CheckoutError(f"{commit!r} is not a commit id")
    listing = _git(Path(directory).expanduser(), "ls-tree", "-r", "--name-only", "-z", commit)
    return [path for path in listing.split("\0") if path]
