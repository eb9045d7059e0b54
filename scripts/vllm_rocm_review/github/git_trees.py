"""Branch heads and whole repository trees from GitHub's git data API.

Shared by the upstream refresh (the mori tree) and the vLLM tree tripwire. A branch answer
carries the commit's root tree SHA, so "did the tree change?" costs one small request and
the tree itself is downloaded only when the answer is yes.
"""

from dataclasses import dataclass

from .client import GitHubError
from .client import NotFound

# Fields of a trees-API entry worth keeping: the per-entry "url" only repeats the SHA.
ENTRY_FIELDS = ("path", "mode", "type", "sha", "size")


class TreeError(GitHubError):
    """GitHub answered, but not with a usable branch or tree."""


@dataclass(frozen=True)
class BranchHead:
    repo: str
    branch: str
    commit_sha: str
    tree_sha: str


def default_branch(client, repo):
    """The repository's default branch name (one request)."""
    data = client.get_json(f"/repos/{repo}")
    name = data.get("default_branch") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name:
        raise TreeError(f"GET /repos/{repo}: the answer names no default_branch")
    return name


def branch_head(client, repo, branch=None, default_hint=None):
    """Commit and root tree SHA at the tip of ``branch`` (the default branch when None).

    ``default_hint`` is the default branch a previous run found: trying it first saves the
    repository request, whose answer changes with every push and so always costs a unit.
    If that branch is gone, the repository is asked for its current default.
    """
    if branch is None and default_hint:
        try:
            return _head(client, repo, default_hint)
        except NotFound:
            pass
    return _head(client, repo, branch or default_branch(client, repo))


def _head(client, repo, branch):
    data = client.get_json(f"/repos/{repo}/branches/{branch}")
    try:
        commit = data["commit"]
        return BranchHead(repo, data.get("name") or branch, commit["sha"], commit["commit"]["tree"]["sha"])
    except (KeyError, TypeError):
        raise TreeError(f"GET /repos/{repo}/branches/{branch}: the answer has no commit.commit.tree.sha") from None


def fetch_full_tree(client, repo, tree_sha):
    """Every entry under ``tree_sha``, as the recursive trees API would list them, without urls.

    One recursive request normally suffices. When GitHub answers ``truncated: true`` (over
    100,000 entries or 7 MB), the tree is listed one level at a time and each subtree is
    fetched on its own, recursively, so the result is still complete.
    """
    data = _get_tree(client, repo, tree_sha, recursive=True)
    if not data.get("truncated"):
        return [_strip(entry) for entry in data["tree"]]
    level = _get_tree(client, repo, tree_sha, recursive=False)
    if level.get("truncated"):
        raise TreeError(f"tree {tree_sha[:12]} of {repo} is truncated even without recursion")
    entries = []
    for entry in level["tree"]:
        entries.append(_strip(entry))
        if entry.get("type") == "tree":
            for child in fetch_full_tree(client, repo, entry["sha"]):
                entries.append({**child, "path": f"{entry['path']}/{child['path']}"})
    return entries


def _get_tree(client, repo, tree_sha, recursive):
    params = {"recursive": "1"} if recursive else None  # any value of recursive enables it
    data = client.get_json(f"/repos/{repo}/git/trees/{tree_sha}", params=params)
    if not isinstance(data, dict) or not isinstance(data.get("tree"), list):
        raise TreeError(f"GET /repos/{repo}/git/trees/{tree_sha[:12]}: the answer has no tree list")
    return data


def _strip(entry):
    return {field: entry[field] for field in ENTRY_FIELDS if field in entry}


def tag_names(client, repo):
    """Every tag name of the repository, in one request (the matching-refs API is not paginated)."""
    data = client.get_json(f"/repos/{repo}/git/matching-refs/tags")
    if not isinstance(data, list):
        raise TreeError(f"GET /repos/{repo}/git/matching-refs/tags: the answer is not a list of refs")
    return [entry["ref"].removeprefix("refs/tags/") for entry in data
            if isinstance(entry, dict) and isinstance(entry.get("ref"), str) and entry["ref"].startswith("refs/tags/")]
