"""A pull request served on a GitHubReplica in GitHub's own response shapes.

``FakePull`` holds the PR content; ``serve_pull(replica, pull)`` registers the endpoints
fetch_pr_data.py reads. The ``raw_*`` builders emit every key GitHub's REST examples have
(user objects, URL farms, repository objects), so size and slimming figures are realistic;
test_fetch_shapes.py checks the key sets against ../shared/github-api-examples.
"""

import hashlib
from dataclasses import dataclass
from dataclasses import field

from github_replica import Reply

WEB = "https://github.com"
API = "https://api.github.com"
STAMP = "2026-08-01T10:00:00Z"
TOO_LARGE_FILES = {
    "message": "Sorry, the diff exceeded the maximum number of files (300). Consider using 'List pull requests "
    "files' API or locally cloning the repository instead.",
    "errors": [{"resource": "PullRequest", "field": "diff", "code": "too_large"}],
    "documentation_url": "https://docs.github.com/rest/pulls/pulls#list-pull-requests-files",
    "status": "406",
}
USER_URLS = ("followers", "following", "gists", "starred", "subscriptions", "organizations", "repos", "events", "received_events")
REPO_URLS = (
    "archive", "assignees", "blobs", "branches", "collaborators", "comments", "commits", "compare", "contents",
    "contributors", "deployments", "downloads", "events", "forks", "git_commits", "git_refs", "git_tags",
    "hooks", "issue_comment", "issue_events", "issues", "keys", "labels", "languages", "merges", "milestones",
    "notifications", "pulls", "releases", "stargazers", "statuses", "subscribers", "subscription", "tags",
    "teams", "trees",
)


def sha_of(text):
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


@dataclass
class FakePull:
    owner: str = "vllm-project"
    name: str = "vllm"
    number: int = 1
    title: str = "A change"
    body: str = ""
    author: str = "octo-dev"
    head_repo: str = "octo-dev/vllm"
    head_ref: str = "feature"
    base_ref: str = "main"
    head_sha: str = "a" * 40
    base_sha: str = "b" * 40
    state: str = "open"
    merged: bool = False
    draft: bool = False
    labels: list = field(default_factory=list)
    commits: int = 1
    files: list = field(default_factory=list)  # filename, status, additions, deletions, patch?, previous_filename?
    diff: str = ""
    issue_comments: list = field(default_factory=list)  # (login, body)
    review_comments: list = field(default_factory=list)  # dicts: path, line, body, login, in_reply_to (index)
    reviews: list = field(default_factory=list)  # (login, state, body)
    check_runs: list = field(default_factory=list)  # (name, status, conclusion, app slug)
    statuses: list = field(default_factory=list)  # (context, state, description)
    issues: dict = field(default_factory=dict)  # number -> (title, state, body)

    @property
    def repo(self):
        return f"{self.owner}/{self.name}"


def raw_user(login):
    api = f"{API}/users/{login}"
    user = {
        "login": login,
        "id": int(sha_of(login)[:7], 16),
        "node_id": "U_" + sha_of(login)[:12],
        "avatar_url": f"https://avatars.githubusercontent.com/u/{int(sha_of(login)[:7], 16)}?v=4",
        "gravatar_id": "",
        "url": api,
        "html_url": f"{WEB}/{login}",
    }
    for name in USER_URLS:
        user[f"{name}_url"] = f"{api}/{name}"
    user.update({"type": "User", "site_admin": False})
    return user


def raw_repo(full_name):
    owner = full_name.split("/")[0]
    api = f"{API}/repos/{full_name}"
    repo = {
        "id": int(sha_of(full_name)[:8], 16),
        "node_id": "R_" + sha_of(full_name)[:12],
        "name": full_name.split("/")[1],
        "full_name": full_name,
        "owner": raw_user(owner),
        "private": False,
        "html_url": f"{WEB}/{full_name}",
        "description": "A high-throughput and memory-efficient inference and serving engine for LLMs",
        "fork": owner != "vllm-project",
        "url": api,
    }
    for name in REPO_URLS:
        repo[f"{name}_url"] = f"{api}/{name}{{/id}}"
    repo.update(
        {
            "git_url": f"git://github.com/{full_name}.git",
            "ssh_url": f"git@github.com:{full_name}.git",
            "clone_url": f"{WEB}/{full_name}.git",
            "svn_url": f"{WEB}/{full_name}",
            "mirror_url": None,
            "homepage": "https://docs.vllm.ai",
            "language": "Python",
            "forks_count": 9000,
            "forks": 9000,
            "stargazers_count": 50000,
            "watchers_count": 50000,
            "watchers": 50000,
            "size": 100000,
            "default_branch": "main",
            "open_issues_count": 2000,
            "open_issues": 2000,
            "is_template": False,
            "topics": ["amd", "inference", "rocm"],
            "has_issues": True,
            "has_projects": True,
            "has_wiki": False,
            "has_pages": False,
            "has_downloads": True,
            "has_discussions": False,
            "archived": False,
            "disabled": False,
            "visibility": "public",
            "pushed_at": STAMP,
            "created_at": "2023-02-09T11:23:20Z",
            "updated_at": STAMP,
            "permissions": {"admin": False, "push": False, "pull": True},
            "allow_rebase_merge": False,
            "allow_squash_merge": True,
            "allow_merge_commit": False,
            "allow_forking": True,
            "temp_clone_token": "",
            "license": {"key": "apache-2.0", "name": "Apache License 2.0", "spdx_id": "Apache-2.0", "url": f"{API}/licenses/apache-2.0", "node_id": "MDc6TGljZW5zZTI="},
        }
    )
    return repo


def raw_pull(pull):
    api = f"{API}/repos/{pull.repo}"
    html = f"{WEB}/{pull.repo}/pull/{pull.number}"
    merged_at = STAMP if pull.merged else None
    additions = sum(entry["additions"] for entry in pull.files)
    deletions = sum(entry["deletions"] for entry in pull.files)
    side = lambda ref, sha, full: {  # noqa: E731
        "label": f"{full.split('/')[0]}:{ref}",
        "ref": ref,
        "sha": sha,
        "user": raw_user(full.split("/")[0]),
        "repo": raw_repo(full),
    }
    links = {name: {"href": f"{api}/{path}"} for name, path in (
        ("self", f"pulls/{pull.number}"), ("html", html), ("issue", f"issues/{pull.number}"),
        ("comments", f"issues/{pull.number}/comments"), ("review_comments", f"pulls/{pull.number}/comments"),
        ("review_comment", "pulls/comments{/number}"), ("commits", f"pulls/{pull.number}/commits"),
        ("statuses", f"statuses/{pull.head_sha}"),
    )}
    links["html"] = {"href": html}
    return {
        "url": f"{api}/pulls/{pull.number}",
        "id": 1000000 + pull.number,
        "node_id": f"PR_{pull.number}",
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": f"{api}/issues/{pull.number}",
        "commits_url": f"{api}/pulls/{pull.number}/commits",
        "review_comments_url": f"{api}/pulls/{pull.number}/comments",
        "review_comment_url": f"{api}/pulls/comments{{/number}}",
        "comments_url": f"{api}/issues/{pull.number}/comments",
        "statuses_url": f"{api}/statuses/{pull.head_sha}",
        "number": pull.number,
        "state": "closed" if pull.merged or pull.state == "closed" else "open",
        "locked": False,
        "title": pull.title,
        "user": raw_user(pull.author),
        "body": pull.body,
        "labels": [
            {"id": index + 1, "node_id": f"LA_{index}", "url": f"{api}/labels/{name}", "name": name,
             "description": None, "color": "ededed", "default": False}
            for index, name in enumerate(pull.labels)
        ],
        "milestone": None,
        "active_lock_reason": None,
        "created_at": "2026-07-30T08:00:00Z",
        "updated_at": STAMP,
        "closed_at": merged_at,
        "merged_at": merged_at,
        "merge_commit_sha": "c" * 40,
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [raw_user("reviewer-one")],
        "requested_teams": [],
        "head": side(pull.head_ref, pull.head_sha, pull.head_repo),
        "base": side(pull.base_ref, pull.base_sha, pull.repo),
        "_links": links,
        "author_association": "CONTRIBUTOR",
        "auto_merge": None,
        "draft": pull.draft,
        "merged": pull.merged,
        "mergeable": None,
        "rebaseable": None,
        "mergeable_state": "unknown",
        "merged_by": raw_user("merger") if pull.merged else None,
        "comments": len(pull.issue_comments),
        "review_comments": len(pull.review_comments),
        "maintainer_can_modify": True,
        "commits": pull.commits,
        "additions": additions,
        "deletions": deletions,
        "changed_files": len(pull.files),
    }


def raw_file(pull, entry):
    blob = sha_of(entry["filename"] + pull.head_sha)
    raw = {
        "sha": blob,
        "filename": entry["filename"],
        "status": entry["status"],
        "additions": entry["additions"],
        "deletions": entry["deletions"],
        "changes": entry["additions"] + entry["deletions"],
        "blob_url": f"{WEB}/{pull.repo}/blob/{pull.head_sha}/{entry['filename']}",
        "raw_url": f"{WEB}/{pull.repo}/raw/{pull.head_sha}/{entry['filename']}",
        "contents_url": f"{API}/repos/{pull.repo}/contents/{entry['filename']}?ref={pull.head_sha}",
    }
    if entry.get("patch") is not None:
        raw["patch"] = entry["patch"]
    if entry.get("previous_filename"):
        raw["previous_filename"] = entry["previous_filename"]
    return raw


def raw_issue_comment(pull, index, login, body):
    comment_id = 5000000 + index
    return {
        "id": comment_id,
        "node_id": f"IC_{comment_id}",
        "url": f"{API}/repos/{pull.repo}/issues/comments/{comment_id}",
        "html_url": f"{WEB}/{pull.repo}/pull/{pull.number}#issuecomment-{comment_id}",
        "body": body,
        "user": raw_user(login),
        "created_at": STAMP,
        "updated_at": STAMP,
        "issue_url": f"{API}/repos/{pull.repo}/issues/{pull.number}",
        "author_association": "MEMBER",
        "minimized": None,
    }


def review_comment_id(index):
    return 7000000 + index


def raw_review_comment(pull, index, spec):
    comment_id = review_comment_id(index)
    html = f"{WEB}/{pull.repo}/pull/{pull.number}#discussion_r{comment_id}"
    api = f"{API}/repos/{pull.repo}/pulls/comments/{comment_id}"
    raw = {
        "url": api,
        "pull_request_review_id": 9000000 + index,
        "id": comment_id,
        "node_id": f"PRRC_{comment_id}",
        "diff_hunk": spec.get("diff_hunk", "@@ -1,3 +1,4 @@\n import torch\n+import aiter"),
        "path": spec["path"],
        "position": spec.get("line"),
        "original_position": spec.get("line"),
        "commit_id": pull.head_sha,
        "original_commit_id": pull.head_sha,
        "user": raw_user(spec.get("login", "reviewer-one")),
        "body": spec["body"],
        "created_at": STAMP,
        "updated_at": STAMP,
        "html_url": html,
        "pull_request_url": f"{API}/repos/{pull.repo}/pulls/{pull.number}",
        "author_association": "MEMBER",
        "_links": {"self": {"href": api}, "html": {"href": html}, "pull_request": {"href": f"{API}/repos/{pull.repo}/pulls/{pull.number}"}},
        "start_line": None,
        "original_start_line": None,
        "start_side": None,
        "line": spec.get("line"),
        "original_line": spec.get("line"),
        "side": "RIGHT",
    }
    if spec.get("in_reply_to") is not None:
        raw["in_reply_to_id"] = review_comment_id(spec["in_reply_to"])
    return raw


def raw_review(pull, index, login, state, body):
    review_id = 9000000 + index
    html = f"{WEB}/{pull.repo}/pull/{pull.number}#pullrequestreview-{review_id}"
    return {
        "id": review_id,
        "node_id": f"PRR_{review_id}",
        "user": raw_user(login),
        "body": body,
        "state": state,
        "html_url": html,
        "pull_request_url": f"{API}/repos/{pull.repo}/pulls/{pull.number}",
        "_links": {"html": {"href": html}, "pull_request": {"href": f"{API}/repos/{pull.repo}/pulls/{pull.number}"}},
        "submitted_at": STAMP,
        "commit_id": pull.head_sha,
        "author_association": "MEMBER",
    }


def raw_check_run(pull, index, name, status, conclusion, app_slug):
    run_id = 30000000 + index
    app_owner = raw_user("github")
    return {
        "id": run_id,
        "head_sha": pull.head_sha,
        "node_id": f"CR_{run_id}",
        "external_id": "",
        "url": f"{API}/repos/{pull.repo}/check-runs/{run_id}",
        "html_url": f"{WEB}/{pull.repo}/actions/runs/{run_id}/job/{run_id + 1}",
        "details_url": f"{WEB}/{pull.repo}/actions/runs/{run_id}/job/{run_id + 1}",
        "status": status,
        "conclusion": conclusion,
        "started_at": STAMP,
        "completed_at": STAMP if status == "completed" else None,
        "output": {"title": None, "summary": None, "text": None, "annotations_count": 0,
                   "annotations_url": f"{API}/repos/{pull.repo}/check-runs/{run_id}/annotations"},
        "name": name,
        "check_suite": {"id": 40000000 + index},
        "app": {
            "id": 15368,
            "slug": app_slug,
            "node_id": "MDM6QXBwMTUzNjg=",
            "owner": app_owner,
            "name": "GitHub Actions" if app_slug == "github-actions" else app_slug,
            "description": "Automate your workflow from idea to production",
            "external_url": "https://help.github.com/en/actions",
            "html_url": f"{WEB}/apps/{app_slug}",
            "created_at": "2018-07-30T09:30:17Z",
            "updated_at": "2024-04-10T20:33:16Z",
            "permissions": {"actions": "write", "checks": "write", "contents": "write", "metadata": "read"},
            "events": ["check_run", "check_suite", "pull_request", "push"],
        },
        "pull_requests": [],
    }


def raw_status(pull, index, context, state, description):
    return {
        "url": f"{API}/repos/{pull.repo}/statuses/{pull.head_sha}",
        "avatar_url": "https://avatars.githubusercontent.com/oa/4567?v=4",
        "id": 20000000 + index,
        "node_id": f"SC_{index}",
        "state": state,
        "description": description,
        "target_url": f"https://buildkite.com/vllm/ci/builds/{50000 + index}",
        "context": context,
        "created_at": STAMP,
        "updated_at": STAMP,
    }


def raw_issue(pull, number, title, state, body):
    api = f"{API}/repos/{pull.repo}/issues/{number}"
    return {
        "id": 3000000 + number,
        "node_id": f"I_{number}",
        "url": api,
        "repository_url": f"{API}/repos/{pull.repo}",
        "labels_url": f"{api}/labels{{/name}}",
        "comments_url": f"{api}/comments",
        "events_url": f"{api}/events",
        "html_url": f"{WEB}/{pull.repo}/issues/{number}",
        "number": number,
        "state": state,
        "state_reason": None,
        "title": title,
        "body": body,
        "user": raw_user("issue-reporter"),
        "labels": [],
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "locked": False,
        "active_lock_reason": None,
        "comments": 3,
        "pull_request": None,
        "closed_at": None,
        "created_at": "2026-07-01T00:00:00Z",
        "updated_at": STAMP,
        "closed_by": None,
        "author_association": "NONE",
        "pinned_comment": None,
    }


def raw_combined_status_fields(pull, statuses):
    states = {state for _, state, _ in statuses}
    combined = "failure" if states & {"failure", "error"} else "pending" if not statuses or "pending" in states else "success"
    repo = raw_repo(pull.repo)
    slim_repo = {key: value for key, value in repo.items() if key in (
        "id", "node_id", "name", "full_name", "owner", "private", "html_url", "description", "fork", "url",
    ) or key.endswith("_url") and key not in ("clone_url", "svn_url", "mirror_url")}
    return {
        "state": combined,
        "sha": pull.head_sha,
        "repository": slim_repo,
        "commit_url": f"{API}/repos/{pull.repo}/commits/{pull.head_sha}",
        "url": f"{API}/repos/{pull.repo}/commits/{pull.head_sha}/status",
    }


def serve_pull(replica, pull, diff_too_large=False, max_files=None):
    """Register every endpoint fetch_pr_data.py reads for ``pull``."""
    base = f"/repos/{pull.repo}"
    diff_answer = Reply(TOO_LARGE_FILES, status=406) if diff_too_large else pull.diff
    replica.add_json(f"{base}/pulls/{pull.number}", raw_pull(pull), media={"application/vnd.github.diff": diff_answer})
    replica.add_list(f"{base}/pulls/{pull.number}/files", [raw_file(pull, f) for f in pull.files], max_items=max_files)
    replica.add_list(
        f"{base}/issues/{pull.number}/comments",
        [raw_issue_comment(pull, i, login, body) for i, (login, body) in enumerate(pull.issue_comments)],
    )
    replica.add_list(
        f"{base}/pulls/{pull.number}/comments",
        [raw_review_comment(pull, i, spec) for i, spec in enumerate(pull.review_comments)],
    )
    replica.add_list(
        f"{base}/pulls/{pull.number}/reviews",
        [raw_review(pull, i, login, state, body) for i, (login, state, body) in enumerate(pull.reviews)],
    )
    replica.add_list(
        f"{base}/commits/{pull.head_sha}/check-runs",
        [raw_check_run(pull, i, *run) for i, run in enumerate(pull.check_runs)],
        envelope="check_runs",
    )
    replica.add_list(
        f"{base}/commits/{pull.head_sha}/status",
        [raw_status(pull, i, *status) for i, status in enumerate(pull.statuses)],
        envelope="statuses",
        envelope_fields=raw_combined_status_fields(pull, pull.statuses),
    )
    for number, (title, state, body) in pull.issues.items():
        replica.add_json(f"{base}/issues/{number}", raw_issue(pull, number, title, state, body))


def pull_from_case(case, diff, message, split_diff):
    """A FakePull carrying a real vLLM case: its diff, file stats and commit message."""
    subject, _, body = message.partition("\n")
    stats = {entry["filename"]: entry for entry in case["files"]}
    files = []
    for entry in split_diff(diff):
        stat = stats[entry["filename"]]
        item = {"filename": entry["filename"], "status": stat["status"], "additions": stat["additions"], "deletions": stat["deletions"]}
        if entry["patch"] is not None:
            item["patch"] = entry["patch"]
        if entry["previous_filename"]:
            item["previous_filename"] = entry["previous_filename"]
        files.append(item)
    return FakePull(
        number=case["pr_number"],
        title=subject.strip(),
        body=body.strip(),
        author="case-author",
        head_sha=case["sha"],
        files=files,
        diff=diff,
        merged=True,
    )
