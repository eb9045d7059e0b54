#!/usr/bin/env python3
"""What the pinned-upstream section finds and costs on real PRs, against a local AITER history.

    python3 benchmarks/bench_upstream.py --aiter-git AITER_GIT_DIR --clone VLLM_CLONE
                                         [--shared SHARED_DIR] [--case N ...]

A local HTTP server (the tests' GitHub replica, standalone) answers the endpoints the pack uses
for ROCm/aiter (git trees, contents, commits, tag list) by reading AITER_GIT_DIR at run time
with git; any other repository answers 404. Each case's PR document is built from the shared
cases with meta.checkout in VLLM_CLONE, and the pack is built as scripts/context_pack.py builds
it, twice with one cache. Prints per case: AITER names looked up, definitions resolved, files
saved, the ROCm/aiter requests and rate-limit units (answers other than 304) the server saw in
the first run, and the same for the second run; then, per name, where it is defined and what
lies below it. ROCm/mori is not served: its lookups 404 and are not counted.
"""

import argparse
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests")]

import conftest  # noqa: E402
from github_replica import GitHubReplica  # noqa: E402
from github_replica import Reply  # noqa: E402
from vllm_cases import checkout_document  # noqa: E402
from vllm_rocm_review.context.pack import build_pack  # noqa: E402
from vllm_rocm_review.core.surface import load_surface  # noqa: E402
from vllm_rocm_review.github.client import RAW_MEDIA_TYPE  # noqa: E402
from vllm_rocm_review.github.client import GitHubClient  # noqa: E402

AITER = "ROCm/aiter"
DEFAULT_CASES = (33773, 46904, 43660)


class LocalGitRepo:
    """Serves one repository's trees, files, commits and tags from a local (bare) git dir."""

    def __init__(self, replica, full_name, git_dir):
        self.git_dir = str(git_dir)
        base = rf"/repos/{full_name}"
        replica.route("GET", base + r"/git/matching-refs/tags", self._tags)
        replica.route("GET", base + r"/git/trees/(?P<ref>[^/]+)", self._tree)
        replica.route("GET", base + r"/contents/(?P<path>.+)", self._contents)
        replica.route("GET", base + r"/commits/(?P<ref>[^/]+)", self._commit)

    def _git(self, *args, text=True):
        done = subprocess.run(["git", "--git-dir", self.git_dir, *args], capture_output=True, text=text, check=False)
        return done.stdout if done.returncode == 0 else None

    def _tags(self, request, match):
        names = (self._git("tag") or "").split()
        return [{"ref": f"refs/tags/{name}", "object": {"sha": hashlib.sha1(name.encode()).hexdigest()}} for name in names]

    def _tree(self, request, match):
        ref = match.group("ref")
        listing = self._git("ls-tree", "-r", "-t", "-l", "--full-tree", f"{ref}^{{tree}}")
        if listing is None:
            return Reply({"message": "Not Found"}, 404)
        entries = []
        for line in listing.splitlines():
            meta, path = line.split("\t", 1)
            mode, kind, sha, size = meta.split()
            entry = {"path": path, "mode": mode, "type": kind, "sha": sha}
            if size != "-":
                entry["size"] = int(size)
            entries.append(entry)
        return {"sha": self._git("rev-parse", f"{ref}^{{tree}}").strip(), "tree": entries, "truncated": False}

    def _contents(self, request, match):
        ref = request.args.get("ref")
        data = self._git("cat-file", "blob", f"{ref}:{match.group('path')}", text=False)
        if data is None:
            return Reply({"message": "Not Found"}, 404)
        return Reply(data, content_type=RAW_MEDIA_TYPE)

    def _commit(self, request, match):
        full = self._git("rev-parse", "--verify", "--quiet", f"{match.group('ref')}^{{commit}}")
        if full is None:
            return Reply({"message": f"No commit found for SHA: {match.group('ref')}"}, 422)
        return {"sha": full.strip()}


def run_case(number, clone, replica, cache, out_dir):
    """Two packs with one cache: ``[(section, aiter requests, aiter units), ...]`` counted at the server."""
    document = checkout_document(number, clone)
    if document is None:
        raise SystemExit(f"error: {clone} lacks the merge commit of #{number}; pick a clone that has it")
    surface = load_surface()
    runs = []
    for _ in range(2):
        logged = len(replica.log)
        client = GitHubClient(api_url=replica.api_url, cache_dir=cache / "http")
        upstream = {"client": client, "cache_dir": cache / "upstream", "save_root": out_dir / f"pr-{number}-upstream",
                    "offline": False}
        section = build_pack(document, clone, surface["context_pack"], surface, upstream)["upstream"]
        seen = [entry for entry in replica.log[logged:] if entry.path.startswith(f"/repos/{AITER}/")]
        runs.append((section, len(seen), sum(1 for entry in seen if entry.status != 304)))
    return runs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aiter-git", required=True, help="a local git dir of ROCm/aiter with its release tags")
    parser.add_argument("--clone", required=True, help="a vLLM clone holding the cases' merge commits")
    parser.add_argument("--shared", default=str(conftest.SHARED_DIR), help="the shared materials (vllm-cases/)")
    parser.add_argument("--case", type=int, action="append", help=f"case numbers (default {DEFAULT_CASES})")
    args = parser.parse_args(argv)
    conftest.SHARED_DIR = Path(args.shared)
    replica = GitHubReplica.standalone()
    LocalGitRepo(replica, AITER, args.aiter_git)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            for number in args.case or DEFAULT_CASES:
                first, second = run_case(number, args.clone, replica, Path(scratch) / f"cache-{number}",
                                         Path(scratch) / "outputs")
                report(number, first, second)
    finally:
        replica.close()


def report(number, first_run, second_run):
    first, requests, units = first_run
    _, second_requests, second_units = second_run
    aiter = [symbol for symbol in first["symbols"] if symbol["repo"].startswith("ROCm/") and
             symbol["symbol"].startswith("aiter")]
    found = [symbol for symbol in aiter if symbol["status"] == "found"]
    pin = first["pins"]["aiter"]
    print(f"#{number}: aiter pin {pin['base']} -> {pin['head']}; {len(aiter)} AITER names, {len(found)} definitions "
          f"resolved, {len(first['saved_files'])} files saved ({len(first['cut_files'])} cut); ROCm/aiter requests "
          f"{requests}, rate-limit units {units}; second run {second_requests} requests, {second_units} units")
    for symbol in aiter:
        where = (f"{symbol['path']}:{symbol['line']}" if symbol["status"] == "found" else symbol["status"])
        later = f" first in {symbol['first_tag']['tag']}" if symbol.get("first_tag") else ""
        below = ", ".join(f"{item['kind']} {item['path'].split(':', 1)[1]}" for item in symbol["depth"])
        print(f"  {symbol['symbol']} [{symbol['change']}{', guarded' if symbol['guarded'] else ''}] "
              f"{symbol['via'] or ''} -> {where}{later}" + (f"; below: {below}" if below else ""))
        if symbol["status"] == "found" and (symbol["asserts"] or symbol["constants"]):
            print(f"    {' | '.join((symbol['asserts'] + symbol['constants'])[:3])}")


if __name__ == "__main__":
    main()
