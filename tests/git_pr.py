"""A PR document (fetch_pr_data.py's schema, with meta.checkout) for a commit range of a local clone.

Tests build a small repository and describe one commit range as a PR; the context-pack
benchmark does the same over a range of the full vLLM clone.
"""

import subprocess


def git(repo, *args):
    """stdout of a git command run against ``repo`` (a work tree or a bare git directory)."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def pr_document(repo, base, head, number, title="A change", checkout=True):
    """The document of the PR ``base..head``; ``checkout`` records meta.checkout as --checkout does."""
    base_sha = git(repo, "rev-parse", base).strip()
    head_sha = git(repo, "rev-parse", head).strip()
    diff = git(repo, "diff", "-M", "--no-color", base_sha, head_sha)
    files = []
    numstat = git(repo, "diff", "-M", "--numstat", "-z", base_sha, head_sha).split("\0")
    status_lines = git(repo, "diff", "-M", "--name-status", base_sha, head_sha).splitlines()
    statuses = {}
    for line in status_lines:
        parts = line.split("\t")
        code = parts[0][0]
        name = parts[-1]
        statuses[name] = ({"A": "added", "D": "removed", "R": "renamed"}.get(code, "modified"),
                          parts[1] if code == "R" else None)
    index = 0
    counts = {}
    while index < len(numstat) and numstat[index]:
        added, removed, name = numstat[index].split("\t")
        if not name:  # a rename: old and new path follow
            name = numstat[index + 2]
            index += 2
        counts[name] = (int(added) if added.isdigit() else 0, int(removed) if removed.isdigit() else 0)
        index += 1
    for name, (status, previous) in sorted(statuses.items()):
        entry = {"filename": name, "status": status, "additions": counts.get(name, (0, 0))[0],
                 "deletions": counts.get(name, (0, 0))[1]}
        if previous:
            entry["previous_filename"] = previous
        files.append(entry)
    date = "2026-01-01T00:00:00Z"
    meta = {"fetched_at": date, "api_url": "https://api.github.com", "repo": "vllm-project/vllm",
            "number": number, "requests": 0, "rate_limit": {"remaining": None, "reset": None},
            "diff_source": "api", "files_without_patch": [], "files_truncated": False, "pages_capped": []}
    if checkout:
        meta["checkout"] = {"path": str(repo), "base_sha": base_sha, "head_sha": head_sha, "merge_base": base_sha}
    return {
        "pr": {"number": number, "title": title, "body": "", "author": "someone", "state": "open", "draft": False,
               "labels": [], "created_at": date, "updated_at": date, "merged_at": None,
               "additions": sum(f["additions"] for f in files), "deletions": sum(f["deletions"] for f in files),
               "changed_files": len(files), "commits": 1,
               "head": {"ref": "feature", "sha": head_sha, "repo": "someone/vllm"},
               "base": {"ref": "main", "sha": base_sha}, "html_url": f"https://github.com/vllm-project/vllm/pull/{number}"},
        "diff": diff, "files": files, "issue_comments": [], "review_comments": [], "reviews": [],
        "linked_issues": [], "meta": meta,
    }
