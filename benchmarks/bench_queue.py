#!/usr/bin/env python3
"""The request economy of review_queue.py over 200 open PRs of which 20 touch ROCm.

Usage: .venv/bin/python benchmarks/bench_queue.py [--prs 200] [--relevant 20] [--latency 0]

Runs the queue three times against the local GitHub replica (tests/github_replica.py, real
sockets) with one ETag cache: a first run with a cold cache; a second after a report marker
was posted on each relevant PR (those PRs' comments and update times changed, nothing else);
a third with nothing changed. Prints requests, rate-limit units (answers that were not 304),
304s and the queue length of each run. Goals: the first run costs one listing page per 100
PRs, one files page per PR and comment pages for relevant PRs only; later runs cost units only
for what changed.
"""

import argparse
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests")]

from github_replica import GitHubReplica  # noqa: E402
from replica_queue import BOT  # noqa: E402
from replica_queue import NEWEST  # noqa: E402
from replica_queue import mixed_queue  # noqa: E402
from replica_queue import post_marker  # noqa: E402
from replica_queue import serve_queue  # noqa: E402

from vllm_rocm_review.automation.queue import build_queue  # noqa: E402
from vllm_rocm_review.github.client import GitHubClient  # noqa: E402
from vllm_rocm_review.triage.config import load_triage_config  # noqa: E402

TOKEN = "ghp_benchmarkToken000000000000000000000000"
WINDOW_START = NEWEST - timedelta(days=30)


def measure(replica, config, cache_dir):
    client = GitHubClient(replica.api_url, TOKEN, cache_dir=cache_dir)
    started = time.perf_counter()
    queue = build_queue(client, config, "vllm-project/vllm", WINDOW_START, marker_author=BOT)
    return {
        "requests": client.requests_made,
        "units": client.rate_limit_units,
        "not_modified": client.cache_hits,
        "queued": len(queue.entries),
        "relevant": queue.relevant,
        "seconds": time.perf_counter() - started,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=200)
    parser.add_argument("--relevant", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds the replica adds to every answer")
    args = parser.parse_args(argv)
    if args.relevant < 1 or args.prs % args.relevant:
        parser.error("--prs must be a multiple of --relevant")

    config = load_triage_config()
    replica = GitHubReplica.standalone(latency=args.latency, tokens={TOKEN})
    try:
        pulls = mixed_queue(args.prs, relevant_every=args.prs // args.relevant)
        serve_queue(replica, pulls)
        with tempfile.TemporaryDirectory() as cache_dir:
            runs = [("first run, cold cache", measure(replica, config, cache_dir))]
            for queued in pulls[:: args.prs // args.relevant]:
                post_marker(queued)
            serve_queue(replica, pulls)
            runs.append((f"after markers on the {args.relevant} relevant PRs", measure(replica, config, cache_dir)))
            runs.append(("nothing changed", measure(replica, config, cache_dir)))
    finally:
        replica.close()

    print(f"review_queue over {args.prs} open PRs, {args.relevant} ROCm-relevant (latency {args.latency:g} s)")
    print(f"{'run':<40} {'requests':>8} {'units':>6} {'304s':>5} {'relevant':>8} {'queued':>6} {'seconds':>8}")
    for name, figures in runs:
        print(f"{name:<40} {figures['requests']:>8} {figures['units']:>6} {figures['not_modified']:>5} "
              f"{figures['relevant']:>8} {figures['queued']:>6} {figures['seconds']:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
