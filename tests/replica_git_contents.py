"""Repositories at several refs (tags, commit SHAs) on the GitHub replica: git trees and contents.

``RefRepos(replica)`` registers, for any number of repositories:

    GET /repos/{o}/{r}/git/trees/{ref}?recursive=1   every blob, folder and submodule entry at
                                                     the ref (``type`` blob/tree/commit, real
                                                     git blob SHAs); 404 for an unknown ref
    GET /repos/{o}/{r}/commits/{sha}                 a commit by full or abbreviated SHA: its full
                                                     ``sha``; 422 when no commit matches
    GET /repos/{o}/{r}/git/matching-refs/tags        every ref put that is not a commit SHA, as
                                                     ``refs/tags/<ref>`` (one unpaginated list)
    GET /repos/{o}/{r}/contents/{path}?ref={ref}     the file's bytes with the raw media type,
                                                     else GitHub's JSON with base64 content; 404
                                                     "No commit found for the ref" for an unknown
                                                     ref, 404 for an unknown path

``repos.put(full_name, ref, files, submodules=None)`` sets the content of one ref: ``files`` maps
paths to str/bytes, ``submodules`` maps a path to the commit SHA the superproject records.
ETags, 304s and rate-limit headers come from the GitHubReplica underneath.
"""

import base64
import hashlib
import posixpath

from github_replica import Reply
from replica_contents import RAW_MEDIA_TYPE
from replica_contents import git_blob_sha


class RefRepos:
    def __init__(self, replica):
        self.replica = replica
        self.refs = {}  # (repo, ref) -> {path: {"type", "sha", "data"?}}
        base = r"/repos/(?P<repo>[^/]+/[^/]+)"
        replica.route("GET", base + r"/git/matching-refs/tags", self._tags)
        replica.route("GET", base + r"/git/trees/(?P<ref>[^/]+)", self._tree)
        replica.route("GET", base + r"/contents/(?P<path>.+)", self._contents)
        replica.route("GET", base + r"/commits/(?P<ref>[^/]+)", self._commit)

    def put(self, full_name, ref, files, submodules=None):
        entries = {}
        for path, content in files.items():
            data = content.encode("utf-8") if isinstance(content, str) else content
            entries[path] = {"type": "blob", "sha": git_blob_sha(data), "data": data}
        for path, commit in (submodules or {}).items():
            entries[path] = {"type": "commit", "sha": commit}
        for path in list(entries):
            folder = posixpath.dirname(path)
            while folder:
                entries.setdefault(folder, {"type": "tree", "sha": hashlib.sha1(f"{ref}:{folder}".encode()).hexdigest()})
                folder = posixpath.dirname(folder)
        self.refs[(full_name, ref)] = entries

    def _tree(self, request, match):
        entries = self.refs.get((match.group("repo"), match.group("ref")))
        if entries is None:
            return Reply({"message": "Not Found", "status": "404"}, 404)
        modes = {"blob": "100644", "tree": "040000", "commit": "160000"}
        listed = [
            {"path": path, "mode": modes[entry["type"]], "type": entry["type"], "sha": entry["sha"],
             **({"size": len(entry["data"])} if "data" in entry else {})}
            for path, entry in sorted(entries.items())
        ]
        root = hashlib.sha1(repr(listed).encode()).hexdigest()
        return {"sha": root, "url": self.replica.url_for(f"/repos/{match.group('repo')}/git/trees/{root}"),
                "tree": listed, "truncated": False}

    def _tags(self, request, match):
        repo = match.group("repo")
        names = sorted(ref for owner, ref in self.refs if owner == repo and not self._is_sha(ref))
        return [{"ref": f"refs/tags/{name}", "object": {"sha": hashlib.sha1(name.encode()).hexdigest(), "type": "commit"}}
                for name in names]

    @staticmethod
    def _is_sha(ref):
        return len(ref) == 40 and all(char in "0123456789abcdef" for char in ref)

    def _commit(self, request, match):
        """A commit by full or abbreviated SHA (GitHub accepts 7+ hex digits), or by ref name."""
        repo, ref = match.group("repo"), match.group("ref")
        known = [name for (owner, name) in self.refs if owner == repo and (name == ref or len(name) == 40 and name.startswith(ref))]
        if len(known) != 1:
            return Reply({"message": f"No commit found for SHA: {ref}", "status": "422"}, 422)
        return {"sha": known[0] if len(known[0]) == 40 else hashlib.sha1(known[0].encode()).hexdigest(),
                "commit": {"message": "replica commit"}}

    def _contents(self, request, match):
        entries = self.refs.get((match.group("repo"), request.args.get("ref")))
        if entries is None:
            return Reply({"message": "No commit found for the ref", "status": "404"}, 404)
        path = match.group("path").strip("/")
        entry = entries.get(path)
        if entry is None or "data" not in entry:
            return Reply({"message": "Not Found", "status": "404"}, 404)
        if RAW_MEDIA_TYPE in request.headers.get("Accept", ""):
            return Reply(entry["data"], content_type=RAW_MEDIA_TYPE)
        return {"type": "file", "path": path, "name": posixpath.basename(path), "sha": entry["sha"],
                "size": len(entry["data"]), "encoding": "base64",
                "content": base64.b64encode(entry["data"]).decode("ascii")}
