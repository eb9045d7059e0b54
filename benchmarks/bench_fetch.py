#!/usr/bin/env python3
"""Fetch a large synthetic PR from the local GitHub replica and print the request economy.

Usage: .venv/bin/python benchmarks/bench_fetch.py [--latency 0.05] [--files 1200]

The replica (tests/github_replica.py, real sockets) adds --latency seconds to every answer.
Figures: requests made vs the theoretical minimum (one per page per endpoint), wall time,
rate-limit units of a first and a repeat fetch (the repeat should cost 0), and the output
size against the raw GitHub JSON the fetch read. Goals: requests == minimum, repeat == 0
units, output <= 40% of the raw bytes.

Two PR shapes are measured because the size ratio depends on how much of the raw JSON is
patch text, which the output must keep (as the unified diff): a "mechanical" PR (one changed
import per file, like a mass rename) and a "substantive" one (two 9-line hunks per file). The
"without the diff" ratio compares everything else with the raw bytes minus the patches.
"""

import argparse
import contextlib
import io
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests")]

import fetch_pr_data  # noqa: E402
from github_replica import GitHubReplica  # noqa: E402
from replica_pull_request import FakePull  # noqa: E402
from replica_pull_request import review_comment_id  # noqa: E402
from replica_pull_request import serve_pull  # noqa: E402

from vllm_rocm_review.github.diff_rebuild import rebuild_unified_diff  # noqa: E402

TOKEN = "ghp_benchmarkToken000000000000000000000000"
ISSUE_COMMENTS = 300
REVIEW_COMMENTS = 150
CHECK_RUNS = 120
STATUSES = 12
REVIEWS = 40
LINKED = {51001: ("[Bug]: fused MoE crash on MI300X", "open", "Stack trace…")}


def mechanical_patch(index):
    """One import swapped, as in a mass rename."""
    return "\n".join([
        f"@@ -{3 + index % 5},7 +{3 + index % 5},7 @@",
        " import torch",
        " ",
        "-from vllm.model_executor.layers.quantization.utils import fp8_utils",
        "+from vllm.model_executor.layers.quantization.utils import quant_utils as fp8_utils",
        " from vllm.platforms import current_platform",
        " ",
        " logger = init_logger(__name__)",
    ])


def substantive_patch(index):
    """Two hunks of Python-looking change, about the size of a typical vLLM file patch."""
    body = []
    for hunk, start in enumerate((10 + index % 40, 120 + index % 90)):
        body.append(f"@@ -{start},7 +{start},8 @@ def forward_{hunk}(self, x: torch.Tensor) -> torch.Tensor:")
        body += [
            "         residual = x",
            f"         x = self.norm_{hunk}(x)",
            f"-        out = self.proj_{hunk}(x)",
            f"+        if current_platform.is_rocm() and envs.VLLM_ROCM_USE_AITER:",
            f"+            out = rocm_aiter_ops.gemm_a8w8(x, self.weight_{hunk}, self.scale)",
            f"+        else:",
            f"+            out = self.proj_{hunk}(x)",
            "         return out + residual",
        ]
    return "\n".join(body)


SHAPES = {"mechanical": (mechanical_patch, 1, 1), "substantive": (substantive_patch, 8, 2)}


def build_pull(file_count, shape):
    make_patch, additions, deletions = SHAPES[shape]
    files = [
        {
            "filename": f"vllm/model_executor/layers/synthetic/module_{i:04d}.py",
            "status": "modified",
            "additions": additions,
            "deletions": deletions,
            "patch": make_patch(i),
        }
        for i in range(file_count)
    ]
    return FakePull(
        number=52000,
        title="[ROCm] Route every linear layer through AITER",
        body="Fixes #51001.\n\nThroughput on MI300X improves; see the table in the first comment.",
        files=files,
        diff=rebuild_unified_diff(files),  # what GitHub's diff media type answers for these patches
        issue_comments=[(f"user-{i % 17}", f"Comment {i}: numbers for batch {i % 8} look fine on MI300X.") for i in range(ISSUE_COMMENTS)],
        review_comments=[
            {"path": files[i % file_count]["filename"], "line": 12, "body": f"Does this path keep the fp8 scale? ({i})",
             "in_reply_to": i - 1 if i % 3 else None}
            for i in range(REVIEW_COMMENTS)
        ],
        reviews=[(f"reviewer-{i % 5}", "COMMENTED", f"Round {i} of review.") for i in range(REVIEWS)],
        check_runs=[(f"job-{i:03d}", "completed", "success" if i % 10 else "failure", "github-actions") for i in range(CHECK_RUNS)],
        statuses=[(f"buildkite/amd-ci/step-{i}", "success" if i % 4 else "failure", "Build finished") for i in range(STATUSES)],
        issues=LINKED,
    )


def theoretical_minimum(pull):
    pages = lambda count: max(1, math.ceil(count / 100))  # noqa: E731
    diff = 1 if len(pull.files) <= 300 else 0  # GitHub refuses the diff media type above 300 files
    graphql = 1 if pull.review_comments else 0
    return (
        1 + diff + pages(len(pull.files)) + pages(ISSUE_COMMENTS) + pages(REVIEW_COMMENTS) + pages(REVIEWS)
        + pages(CHECK_RUNS) + pages(STATUSES) + len(LINKED) + graphql
    )


def serve_threads(replica, pull):
    def answer(request, match):
        nodes = [{"isResolved": i % 2 == 0, "isOutdated": False, "comments": {"nodes": [{"databaseId": review_comment_id(i)}]}}
                 for i in range(len(pull.review_comments))]
        return {"data": {"repository": {"pullRequest": {"reviewThreads": {
            "pageInfo": {"hasNextPage": False, "endCursor": None}, "nodes": nodes}}}}}

    replica.route("POST", "/graphql", answer)


def fetch(replica, pull, output):
    argv = [str(pull.number), "--include-ci", "--api-url", replica.api_url, "--token", TOKEN, "--output", str(output), "--quiet"]
    start = len(replica.log)
    began = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()) as stderr:
        code = fetch_pr_data.main(argv)
    elapsed = time.perf_counter() - began
    if code != 0:
        raise SystemExit(f"fetch failed: {stderr.getvalue().strip()}")
    seen = replica.log[start:]
    rest = [entry for entry in seen if entry.method == "GET"]
    return {
        "requests": len(seen),
        "rest_units": sum(1 for entry in rest if entry.status != 304),
        "graphql": len(seen) - len(rest),
        "raw_bytes": sum(entry.body_bytes for entry in seen),
        "seconds": elapsed,
    }


def measure(shape, file_count, latency):
    pull = build_pull(file_count, shape)
    replica = GitHubReplica.standalone(latency=latency, rate_limit=100000)
    serve_pull(replica, pull)
    serve_threads(replica, pull)
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["VLLM_ROCM_REVIEW_CACHE"] = str(Path(scratch) / "cache")
        output = Path(scratch) / "pr.json"
        try:
            first = fetch(replica, pull, output)
            document = json.loads(output.read_text(encoding="utf-8"))
            output_bytes = output.stat().st_size
            repeat = fetch(replica, pull, output)
        finally:
            replica.close()
    minimum = theoretical_minimum(pull)
    ratio = output_bytes / first["raw_bytes"]
    diff_bytes = len(json.dumps(document["diff"], ensure_ascii=False))
    patch_bytes = sum(len(json.dumps(entry["patch"])) for entry in pull.files)
    rest_ratio = (output_bytes - diff_bytes) / (first["raw_bytes"] - patch_bytes)
    print(f"[{shape}] {len(pull.files)} files, {ISSUE_COMMENTS} issue comments, {REVIEW_COMMENTS} review comments, "
          f"{REVIEWS} reviews, {CHECK_RUNS} check runs, {STATUSES} statuses; {latency * 1000:.0f} ms per request")
    print(f"  requests: {first['requests']} (theoretical minimum {minimum}) "
          f"{'OK' if first['requests'] == minimum else 'ABOVE MINIMUM'}")
    print(f"  wall time: first {first['seconds']:.2f} s, repeat {repeat['seconds']:.2f} s")
    print(f"  REST rate-limit units: first {first['rest_units']}, repeat {repeat['rest_units']} "
          f"{'OK' if repeat['rest_units'] == 0 else 'NOT ZERO'}; GraphQL queries per fetch: {first['graphql']}")
    print(f"  output {output_bytes:,} B / raw GitHub JSON {first['raw_bytes']:,} B = {ratio:.1%} "
          f"{'OK' if ratio <= 0.40 else 'ABOVE 40%'}; the diff alone is {diff_bytes / first['raw_bytes']:.1%} of raw; "
          f"without the diff {rest_ratio:.1%} of raw minus patches")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05, help="seconds added to every replica answer")
    parser.add_argument("--files", type=int, default=1200, help="changed files in the synthetic PR (>= 1000)")
    args = parser.parse_args(argv)
    for shape in SHAPES:
        measure(shape, args.files, args.latency)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
