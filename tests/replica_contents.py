"""Repositories on the GitHub replica: contents API, git trees, branches and repo metadata.

``ServedRepos(replica)`` registers routes on a ``github_replica.GitHubReplica`` and serves
any number of in-memory repositories the way GitHub does:

    GET /repos/{o}/{r}                          {"full_name", "default_branch", ...}
    GET /repos/{o}/{r}/branches/{branch}        commit SHA and commit.commit.tree.sha
    GET /repos/{o}/{r}/git/trees/{sha|branch}   ``?recursive=<any>`` lists every descendant;
                                                over ``max_tree_entries`` -> ``truncated: true``
    GET /repos/{o}/{r}/contents/{path}?ref=     folder: list of entries (no content);
                                                file: JSON with base64 ``content`` (60-char
                                                lines, like GitHub), or the raw bytes when the
                                                Accept header asks for application/vnd.github.raw

A repository is a set of entries (path -> mode, type, sha, size) plus the bytes of the files
tests read. It can start from a trees-API document (the real mori or vLLM tree) and be edited
with ``put_file`` / ``remove_file`` / ``move``; every edit recomputes the real git tree SHAs of
the touched folders and the root, and makes a new commit, exactly as a push would.
"""

import base64
import hashlib
import posixpath

from github_replica import Reply

RAW_MEDIA_TYPE = "application/vnd.github.raw"
TREE_MODE = "040000"
CONTENT_TYPES = {"blob": "file", "tree": "dir", "commit": "submodule"}


def git_blob_sha(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def git_order_key(path, is_tree):
    """Pre-order git listing order: folders compare as ``name/``, parents before children."""
    parts = path.split("/")
    return tuple(part + "/" for part in parts[:-1]) + (parts[-1] + ("/" if is_tree else ""),)


class ServedRepo:
    """One repository's state (see module docstring)."""

    def __init__(self, full_name, default_branch="main", commit_sha=None, max_tree_entries=100_000):
        self.full_name = full_name
        self.default_branch = default_branch
        self.max_tree_entries = max_tree_entries
        self.entries = {}  # path -> {"mode", "type", "sha", "size"?}
        self.blobs = {}  # path -> bytes, for files the replica can serve
        self.root_sha = self._tree_sha("")
        self.commit_sha = commit_sha or hashlib.sha1(f"{full_name}:initial".encode()).hexdigest()

    # --- loading and editing ----------------------------------------------------------------

    def load_tree(self, document):
        """Adopt a trees-API document (``sha``, ``tree[]``) as the repository's content."""
        self.entries = {
            entry["path"]: {key: entry[key] for key in ("mode", "type", "sha", "size") if key in entry}
            for entry in document["tree"]
        }
        self.root_sha = document["sha"]

    def provide_bytes(self, path, data):
        """Give the bytes of a file already in a loaded tree, so the contents API can serve it."""
        if self.entries[path]["sha"] != git_blob_sha(data):
            raise ValueError(f"{path}: these bytes do not match the tree's blob SHA")
        self.blobs[path] = data

    def put_file(self, path, data, mode="100644"):
        self.blobs[path] = data
        self.entries[path] = {"mode": mode, "type": "blob", "sha": git_blob_sha(data), "size": len(data)}
        self._ensure_folders(path)
        self._rehash(path)

    def remove_file(self, path):
        self.blobs.pop(path, None)
        del self.entries[path]
        self._prune_empty_folders(path)
        self._rehash(path)

    def move(self, old_path, new_path):
        """Rename a blob (content and SHA unchanged), as ``git mv`` would."""
        entry = self.entries.pop(old_path)
        if old_path in self.blobs:
            self.blobs[new_path] = self.blobs.pop(old_path)
        self.entries[new_path] = entry
        self._ensure_folders(new_path)
        self._prune_empty_folders(old_path)
        self._rehash(old_path)
        self._rehash(new_path)

    def _ensure_folders(self, path):
        folder = posixpath.dirname(path)
        while folder:
            self.entries.setdefault(folder, {"mode": TREE_MODE, "type": "tree", "sha": ""})
            folder = posixpath.dirname(folder)

    def _prune_empty_folders(self, path):
        folder = posixpath.dirname(path)
        while folder and not self._children(folder):
            del self.entries[folder]
            folder = posixpath.dirname(folder)

    def _rehash(self, path):
        """Recompute the git tree SHAs from ``path``'s folder up to the root; make a commit."""
        folder = posixpath.dirname(path)
        while True:
            if folder and folder in self.entries:
                self.entries[folder]["sha"] = self._tree_sha(folder)
            if not folder:
                break
            folder = posixpath.dirname(folder)
        self.root_sha = self._tree_sha("")
        self.commit_sha = hashlib.sha1(f"{self.commit_sha}:{self.root_sha}".encode()).hexdigest()

    def _tree_sha(self, folder):
        """The real git SHA of a tree object over the folder's direct children."""
        records = []
        for path, entry in self._children(folder):
            name = path.rsplit("/", 1)[-1]
            mode = entry["mode"].lstrip("0")
            sort_name = name + "/" if entry["type"] == "tree" else name
            records.append((sort_name.encode(), mode.encode() + b" " + name.encode() + b"\0" + bytes.fromhex(entry["sha"])))
        body = b"".join(record for _, record in sorted(records))
        return hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()

    # --- queries ----------------------------------------------------------------------------

    def _children(self, folder):
        prefix = folder + "/" if folder else ""
        return [
            (path, entry)
            for path, entry in self.entries.items()
            if path.startswith(prefix) and "/" not in path[len(prefix) :]
        ]

    def _descendants(self, folder):
        prefix = folder + "/" if folder else ""
        return [(path, entry) for path, entry in self.entries.items() if path.startswith(prefix) and path != folder]

    def tree_folder(self, sha_or_ref):
        """The folder path whose tree has this SHA (or the root for a branch name), or None."""
        if sha_or_ref in (self.root_sha, self.default_branch, self.commit_sha):
            return ""
        for path, entry in self.entries.items():
            if entry["type"] == "tree" and entry["sha"] == sha_or_ref:
                return path
        return None

    def ordered(self, items):
        return sorted(items, key=lambda item: git_order_key(item[0], item[1]["type"] == "tree"))


class ServedRepos:
    """Registers the four endpoint families on a replica for any number of repositories."""

    def __init__(self, replica):
        self.replica = replica
        self.repos = {}
        base = r"/repos/(?P<repo>[^/]+/[^/]+)"
        replica.route("GET", base, self._repository)
        replica.route("GET", base + r"/branches/(?P<branch>.+)", self._branch)
        replica.route("GET", base + r"/git/trees/(?P<sha>[^/]+)", self._tree)
        replica.route("GET", base + r"/contents(?:/(?P<path>.*))?", self._contents)

    def add(self, full_name, **options):
        repo = ServedRepo(full_name, **options)
        self.repos[full_name] = repo
        return repo

    def __getitem__(self, full_name):
        return self.repos[full_name]

    def _find(self, match):
        return self.repos.get(match.group("repo"))

    def _repository(self, request, match):
        repo = self._find(match)
        if repo is None:
            return _not_found()
        owner, name = repo.full_name.split("/")
        return {
            "name": name,
            "full_name": repo.full_name,
            "owner": {"login": owner},
            "default_branch": repo.default_branch,
            "url": self.replica.url_for(f"/repos/{repo.full_name}"),
        }

    def _branch(self, request, match):
        repo = self._find(match)
        if repo is None or match.group("branch") != repo.default_branch:
            return _not_found("Branch not found")
        api = self.replica.url_for(f"/repos/{repo.full_name}")
        return {
            "name": repo.default_branch,
            "commit": {
                "sha": repo.commit_sha,
                "commit": {
                    "message": "replica commit",
                    "tree": {"sha": repo.root_sha, "url": f"{api}/git/trees/{repo.root_sha}"},
                },
                "url": f"{api}/commits/{repo.commit_sha}",
            },
            "protected": False,
        }

    def _tree(self, request, match):
        repo = self._find(match)
        folder = repo.tree_folder(match.group("sha")) if repo else None
        if folder is None:
            return _not_found()
        recursive = "recursive" in request.args  # GitHub: any value enables recursion
        items = repo._descendants(folder) if recursive else repo._children(folder)
        prefix_length = len(folder) + 1 if folder else 0
        api = self.replica.url_for(f"/repos/{repo.full_name}/git")
        listed = []
        for path, entry in repo.ordered(items):
            kind = "trees" if entry["type"] == "tree" else "blobs"
            listed.append({"path": path[prefix_length:], **entry, "url": f"{api}/{kind}/{entry['sha']}"})
        truncated = len(listed) > repo.max_tree_entries
        sha = repo.root_sha if folder == "" else repo.entries[folder]["sha"]
        return {
            "sha": sha,
            "url": f"{api}/trees/{sha}",
            "tree": listed[: repo.max_tree_entries],
            "truncated": truncated,
        }

    def _contents(self, request, match):
        repo = self._find(match)
        if repo is None:
            return _not_found()
        ref = request.args.get("ref")
        if ref not in (None, repo.default_branch, repo.commit_sha):
            return _not_found("No commit found for the ref")
        path = (match.group("path") or "").strip("/")
        if path and path not in repo.entries:
            return _not_found()
        if not path or repo.entries[path]["type"] == "tree":
            return [self._content_entry(repo, child, entry) for child, entry in repo.ordered(repo._children(path))]
        if path not in repo.blobs:
            return _not_found("the replica holds no bytes for this file")
        data = repo.blobs[path]
        if RAW_MEDIA_TYPE in request.headers.get("Accept", ""):
            return Reply(data, content_type=RAW_MEDIA_TYPE)
        encoded = base64.b64encode(data).decode("ascii")
        lines = "\n".join(encoded[i : i + 60] for i in range(0, len(encoded), 60))
        return {**self._content_entry(repo, path, repo.entries[path]), "content": lines + "\n", "encoding": "base64"}

    def _content_entry(self, repo, path, entry):
        kind = CONTENT_TYPES[entry["type"]]
        if entry["mode"] == "120000":
            kind = "symlink"
        api = self.replica.url_for(f"/repos/{repo.full_name}")
        return {
            "type": kind,
            "size": entry.get("size", 0),
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": entry["sha"],
            "url": f"{api}/contents/{path}?ref={repo.default_branch}",
            "git_url": f"{api}/git/{'trees' if kind == 'dir' else 'blobs'}/{entry['sha']}",
            "html_url": f"https://github.com/{repo.full_name}/blob/{repo.default_branch}/{path}",
            "download_url": None if kind == "dir" else f"https://raw.githubusercontent.com/{repo.full_name}/{path}",
        }


def _not_found(message="Not Found"):
    return Reply({"message": message, "status": "404"}, 404)

