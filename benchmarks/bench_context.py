#!/usr/bin/env python3
"""Time and digest size of the context pack for a PR of about 100 files on a full vLLM clone.

    python3 benchmarks/bench_context.py --clone PATH [--head REV] [--files N] [--repeat N]

The PR is a real commit range of the clone: from --head (default HEAD) back along first
parents until the range changes at least --files files. Its PR document is built the way
fetch_pr_data.py --checkout records one (meta.checkout), then the pack is built as
scripts/context_pack.py builds it. Prints the range, its file count, the median wall time of
the pack (git reads, parsing, every section) and the digest's line count.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests")]

from git_pr import git  # noqa: E402
from git_pr import pr_document  # noqa: E402
from vllm_rocm_review.context.digest import render_digest  # noqa: E402
from vllm_rocm_review.context.pack import build_pack  # noqa: E402
from vllm_rocm_review.context.pack import offline_upstream  # noqa: E402
from vllm_rocm_review.core.surface import load_surface  # noqa: E402


def find_range(clone, head, files):
    """The nearest first-parent ancestor of ``head`` whose diff to it touches >= ``files`` files."""
    commits = git(clone, "rev-list", "--first-parent", "--max-count=2000", head).split()
    for base in commits[1:]:
        count = len(git(clone, "diff", "--name-only", base, head).split())
        if count >= files:
            return base, count
    raise SystemExit(f"error: no ancestor of {head} within 2000 commits changes {files} files; pick another --head")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clone", required=True, help="a full vLLM clone (bare is fine)")
    parser.add_argument("--head", default="HEAD", help="the PR head commit (default HEAD)")
    parser.add_argument("--files", type=int, default=100, help="at least this many changed files (default 100)")
    parser.add_argument("--repeat", type=int, default=3, help="runs to take the median of (default 3)")
    args = parser.parse_args(argv)
    base, count = find_range(args.clone, args.head, args.files)
    document = pr_document(args.clone, base, args.head, 1, title="benchmark range")
    surface = load_surface()
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        pack = build_pack(document, args.clone, surface["context_pack"], surface, offline_upstream("outputs/pr-1-upstream"))
        digest = render_digest(pack, "pr-1-context.json")
        times.append(time.perf_counter() - start)
    print(f"range {base[:12]}..{git(args.clone, 'rev-parse', args.head).strip()[:12]}: {count} files, "
          f"+{document['pr']['additions']} -{document['pr']['deletions']} lines")
    print(f"pack: median {statistics.median(times):.2f} s over {args.repeat} run(s); "
          f"{len(pack['symbols'])} symbols, {len(pack['callers'])} caller names, {len(pack['flags'])} flags")
    print(f"digest: {len(digest.splitlines())} lines, {len(digest.encode())} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
