#!/usr/bin/env python3
"""List the open PRs that need a ROCm review now: relevant to ROCm and not reviewed at their head.

Usage: python3 scripts/review_queue.py [--repo OWNER/NAME] [--label NAME] [--since 2d] [--state open]
       [--limit N] [--marker-author LOGIN] [--json] [--api-url URL] [--token TOKEN]

Lists the PRs updated inside the window (newest first), runs the relevance gate on each one's
title, body and changed files, and reads the reviewed head from the report marker among its
issue comments. No LLM and no PR code are involved. Exit codes: 0 listed (possibly none),
1 GitHub or runtime failure, 2 usage error, 3 stopped by the rate limit (what was found so
far is still printed).
"""

import argparse
import json
import sys

from vllm_rocm_review.automation.queue import build_queue
from vllm_rocm_review.automation.queue import parse_since
from vllm_rocm_review.core.cli import FIX_SURFACE
from vllm_rocm_review.core.cli import add_github_options
from vllm_rocm_review.core.cli import fail
from vllm_rocm_review.core.cli import say
from vllm_rocm_review.core.surface import SurfaceError
from vllm_rocm_review.github.client import NO_TOKEN_WARNING
from vllm_rocm_review.github.client import GitHubClient
from vllm_rocm_review.github.client import GitHubError
from vllm_rocm_review.github.client import Unauthorized
from vllm_rocm_review.github.client import discover_token_with_source
from vllm_rocm_review.github.client import resolve_api_url
from vllm_rocm_review.github.pr_ref import DEFAULT_REPO
from vllm_rocm_review.github.pr_ref import PullRefError
from vllm_rocm_review.github.pr_ref import parse_repo
from vllm_rocm_review.triage.config import TriageConfigError
from vllm_rocm_review.triage.config import load_triage_config

RATE_LIMITED = 3
EPILOG = """\
output: one line per PR, tab-separated: number, relevance (full/partial), head SHA, the head an
earlier report covered (or -), title. With --json, a GitHub Actions matrix:
{"include": [{"pr": N, "head_sha": "...", "relevance": "full", "reviewed_head": null}, ...]}.

examples:
  review_queue.py --since 1d
  review_queue.py --repo ROCm/vllm --label rocm --since 2026-08-01 --json
  review_queue.py --marker-author 'github-actions[bot]' --limit 10 --json

Cost: the listing, one files page per PR and, for relevant PRs only, their comment pages; every
answer is ETag-cached, so unchanged PRs cost no rate limit on the next run.
exit codes: 0 listed (possibly none), 1 GitHub or runtime failure, 2 usage error, 3 stopped by
the rate limit (the PRs found so far are printed, the rest were not examined).
"""


def build_parser():
    parser = argparse.ArgumentParser(
        prog="review_queue.py",
        description="List the PRs that need a ROCm review: updated in the window, relevant by the gate, "
        "and with no report on their current head.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--repo", metavar="OWNER/NAME", default=DEFAULT_REPO,
                        help=f"repository to list (default {DEFAULT_REPO})")
    parser.add_argument("--label", metavar="NAME",
                        help="only PRs carrying this label (narrows the listing; many ROCm PRs carry no label, "
                        "so by default the gate alone decides)")
    parser.add_argument("--since", metavar="WHEN", default="2d",
                        help="PRs updated since: a duration (30m, 12h, 2d, 1w) or a UTC date/time "
                        "(2026-08-01, 2026-08-01T10:00:00Z); default 2d")
    parser.add_argument("--state", choices=("open", "closed", "all"), default="open",
                        help="PR state to list (default open)")
    parser.add_argument("--limit", metavar="N", type=int,
                        help="stop once N PRs are queued (bounds a run's cost; default no limit)")
    parser.add_argument("--marker-author", metavar="LOGIN",
                        help="count only report markers in comments by this login (e.g. github-actions[bot]), "
                        "so nobody else's comment can mark a head as reviewed")
    parser.add_argument("--json", action="store_true", help="print a GitHub Actions matrix instead of lines")
    add_github_options(parser)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        parse_repo(args.repo)
        api_url = resolve_api_url(args.api_url)
        since = parse_since(args.since)
    except (PullRefError, ValueError) as error:
        return fail(error, 2)
    if args.limit is not None and args.limit < 1:
        return fail("--limit must be 1 or more", 2)
    if args.label is not None and not args.label.strip():
        return fail("--label needs a label name but got an empty value; pass one, e.g. --label rocm", 2)
    try:
        config = load_triage_config()
    except (SurfaceError, TriageConfigError) as error:
        return fail(f"{error}; {FIX_SURFACE}")

    token, token_source = discover_token_with_source(args.token, api_url)
    client = GitHubClient(api_url, token)
    try:
        queue = build_queue(client, config, args.repo, since, state=args.state, label=args.label,
                            limit=args.limit, marker_author=args.marker_author)
    except Unauthorized:
        return fail(f"token rejected by GitHub (401); the token came from {token_source}: renew it or unset it")
    except GitHubError as error:
        return fail(error)
    except KeyboardInterrupt:
        return fail("interrupted; nothing listed")

    if token is None:
        say(NO_TOKEN_WARNING)
    for warning in queue.warnings:
        say(f"warning: {warning}")
    if args.json:
        sys.stdout.write(json.dumps({"include": [entry.matrix_entry() for entry in queue.entries]}) + "\n")
    else:
        for entry in queue.entries:
            print("\t".join([str(entry.number), entry.relevance, entry.head_sha, entry.reviewed_head or "-",
                             " ".join(entry.title.split())]))
    say(f"queue: {queue.listed} PRs in the window, {queue.gated} gated, {queue.relevant} relevant, "
        f"{queue.up_to_date} already reviewed at their head, {len(queue.entries)} to review "
        f"({client.requests_made} requests, {client.rate_limit_units} rate-limit units, {client.cache_hits} unchanged)")
    if queue.stopped:
        say(f"error: stopped early: {queue.stopped}; the PRs printed are a partial list, run again after the reset")
        return RATE_LIMITED
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
