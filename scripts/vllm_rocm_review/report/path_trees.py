"""Which vLLM file tree a report's cited paths are checked against.

A report is about one PR, so its paths are checked against that PR's own commits, never a
later main that may have moved or deleted the file. The order:

1. the head and base trees in a local clone (``git ls-tree``): the clone recorded in the PR
   document's ``meta.checkout`` by ``fetch_pr_data.py --checkout``, or the one ``--repo`` names;
2. the head tree fetched once through the git trees API at ``pr.head.sha`` (``--fetch-tree``);
3. vLLM main's saved path list (``references/upstream/vllm-tree.json`` or ``--vllm-tree``).

Each tree carries a name that the checker's messages and the CLI's stderr line repeat, so the
reader knows which commit an UNKNOWN-PATH warning was measured against.
"""

from dataclasses import dataclass

from ..github.code_context import CheckoutError
from ..github.code_context import commit_paths
from ..github.git_trees import fetch_full_tree
from ..github.pr_ref import DEFAULT_REPO as VLLM_REPO


@dataclass(frozen=True)
class VllmTree:
    name: str  # as messages say it: "the PR's head tree 1a2b3c4d (git trees API)"
    paths: tuple
    from_pr: bool  # the PR's own commits (head, base), not vLLM main


class TreeUnavailable(Exception):
    """A tree that was asked for cannot be read; str() is one line."""


def clone_tree(clone, head_sha, base_sha=None):
    """The union of the head and base trees in a local clone (a bare mirror works too)."""
    paths = set()
    read = []
    for side, sha in (("head", head_sha), ("base", base_sha)):
        if not sha:
            continue
        try:
            paths.update(commit_paths(clone, sha))
        except CheckoutError as error:
            raise TreeUnavailable(f"the PR's {side} commit {str(sha)[:12]} cannot be listed in {clone}: {error}") from None
        read.append(f"{side} {sha[:8]}")
    return VllmTree(f"the PR's trees ({', '.join(read)}) in the clone {clone}", tuple(sorted(paths)), True)


def fetched_tree(client, repo, head_sha):
    """The head commit's tree from the git trees API (one recursive request unless GitHub truncates)."""
    entries = fetch_full_tree(client, repo, head_sha)
    paths = tuple(entry["path"] for entry in entries if entry.get("type") != "tree")
    return VllmTree(f"the PR's head tree {head_sha[:8]} (git trees API)", paths, True)


def main_tree(paths, commit_sha, where):
    """vLLM main's saved path list (update_skill.py --check-vllm-tree), named with its commit and file."""
    at = f" @{commit_sha[:8]}" if isinstance(commit_sha, str) and commit_sha else ""
    return VllmTree(f"vLLM main's saved tree{at} ({where})", tuple(paths), False)


def recorded_checkout(pr_document):
    """(clone path, head SHA, base SHA) from meta.checkout, or None when the PR was fetched without --checkout."""
    checkout = ((pr_document or {}).get("meta") or {}).get("checkout")
    if not isinstance(checkout, dict) or not checkout.get("path") or not checkout.get("head_sha"):
        return None
    return checkout["path"], checkout["head_sha"], checkout.get("base_sha")


def pr_own_tree(pr_document, clone=None, client=None):
    """The PR's own trees, or None; plus notes on a recorded clone that could not be read.

    ``clone`` (--repo) is asked for explicitly, so its failure raises TreeUnavailable; the clone
    recorded in meta.checkout may sit on another machine, so its failure is a note and the next
    source is tried. ``client`` (--fetch-tree) lets GitHubError through to the caller.
    """
    pr = pr_document["pr"]
    recorded = recorded_checkout(pr_document)
    head_sha, base_sha = (recorded[1], recorded[2]) if recorded else (pr["head"]["sha"], pr["base"]["sha"])
    if clone is not None:
        return clone_tree(clone, head_sha, base_sha), []
    notes = []
    if recorded is not None:
        try:
            return clone_tree(*recorded), notes
        except TreeUnavailable as error:
            notes.append(f"{error}; pass --repo CLONE to use another clone")
    if client is not None:
        repo = (pr_document.get("meta") or {}).get("repo") or VLLM_REPO
        return fetched_tree(client, repo, pr["head"]["sha"]), notes
    return None, notes
