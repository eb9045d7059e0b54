#!/usr/bin/env python3
"""Fetch one GitHub pull request as a slim JSON document for review.

Usage: python3 scripts/fetch_pr_data.py PR [--repo OWNER/NAME] [--output PATH] [--include-ci]
       [--token TOKEN] [--api-url URL] [--no-cache] [--wait] [--quiet]
       [--checkout DIR | --sources DIR [--sources-limit N]]

The document (schema in vllm_rocm_review/core/pr_schema.py) goes to --output, written atomically, or
to stdout. Exit codes: 0 written, 1 GitHub or runtime failure (nothing written), 2 usage error.
A bad --output path is rejected before the first request, so it costs no rate limit.
"""

import argparse
import sys
from pathlib import Path

from vllm_rocm_review.github import code_context
from vllm_rocm_review.core.atomic_io import write_atomic
from vllm_rocm_review.core.cli import add_github_options
from vllm_rocm_review.core.cli import fail
from vllm_rocm_review.core.cli import output_path_problem
from vllm_rocm_review.core.cli import say
from vllm_rocm_review.github.client import DEFAULT_TIMEOUT
from vllm_rocm_review.github.client import NO_TOKEN_WARNING
from vllm_rocm_review.github.client import GitHubClient
from vllm_rocm_review.github.client import GitHubError
from vllm_rocm_review.github.client import RetryPolicy
from vllm_rocm_review.github.client import discover_token_with_source
from vllm_rocm_review.github.client import resolve_api_url
from vllm_rocm_review.core.json_layout import dump_json
from vllm_rocm_review.github.pr_data import fetch_failure
from vllm_rocm_review.github.pr_data import fetch_pr_document
from vllm_rocm_review.github.pr_data import record_usage
from vllm_rocm_review.github.pr_ref import DEFAULT_REPO
from vllm_rocm_review.github.pr_ref import PullRefError
from vllm_rocm_review.github.pr_ref import parse_pr_ref
from vllm_rocm_review.core.pr_schema import validate_pr_document

_RETRY = RetryPolicy()
EPILOG = f"""\
examples:
  fetch_pr_data.py 12345 --include-ci --output outputs/pr-12345.json --checkout "$VLLM_REPO"
  fetch_pr_data.py github.com/vllm-project/vllm/pull/12345 --output outputs/pr-12345.json --sources outputs/pr-12345-src
  fetch_pr_data.py ROCm/vllm#42 --checkout ~/src/vllm > outputs/rocm-vllm-42.json

environment: GH_TOKEN / GITHUB_TOKEN (token), GITHUB_API_URL (API base, e.g. GitHub Enterprise),
VLLM_ROCM_REVIEW_CACHE (cache directory; default $XDG_CACHE_HOME/vllm-rocm-pr-review, else
~/.cache/vllm-rocm-pr-review), VLLM_ROCM_REVIEW_GIT_URL (git base URL for --checkout; default
derived from the API URL).
network: connect timeout {DEFAULT_TIMEOUT[0]:g} s, read timeout {DEFAULT_TIMEOUT[1]:g} s; a refused connection, unknown host or
connect timeout is tried {_RETRY.unreachable_retries + 1} times, a 5xx answer, dropped connection or read timeout up to
{_RETRY.max_retries + 1} times, and no retry starts later than {_RETRY.retry_budget:g} s after the first attempt.
exit codes: 0 written, 1 GitHub or runtime failure or an unusable --output (no file written),
2 usage error.
"""


def build_parser():
    parser = argparse.ArgumentParser(
        prog="fetch_pr_data.py",
        description="Fetch a GitHub pull request (diff, files, comments, reviews, linked issues,\n"
        "optionally CI) as one slim JSON document.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("pr", metavar="PR", help="12345, #12345, OWNER/NAME#12345 or a pull-request URL")
    parser.add_argument("--repo", metavar="OWNER/NAME", help=f"repository for a bare PR number (default {DEFAULT_REPO})")
    parser.add_argument(
        "--output",
        metavar="PATH",
        help="write the JSON here atomically instead of stdout; the directory must exist (it is checked before any request)",
    )
    parser.add_argument(
        "--include-ci", action="store_true", help="add check runs and commit statuses of the head commit"
    )
    add_github_options(parser)
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the conditional-request cache")
    parser.add_argument("--wait", action="store_true", help="sleep until the rate limit resets instead of failing")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    context = parser.add_mutually_exclusive_group()
    context.add_argument(
        "--checkout",
        metavar="DIR",
        help="git clone (or new path) to fetch pull/N/head and the base commit into, under refs/vllm-rocm-review/;"
        " a new path is removed again if the fetch fails",
    )
    context.add_argument(
        "--sources", metavar="DIR", help="download the head version of changed files into DIR (created when missing)"
    )
    parser.add_argument(
        "--sources-limit",
        metavar="N",
        type=int,
        help=f"most files --sources downloads, ROCm and backbone paths first (default {code_context.DEFAULT_SOURCES_LIMIT})",
    )
    return parser


def usage_problem(args):
    """The one-line usage error in ``args`` that argparse cannot see, or None."""
    if args.checkout is not None and not args.checkout.strip():
        return "--checkout needs a directory but got an empty value; set VLLM_REPO or pass a path (or use --sources DIR)"
    if args.output is not None and not args.output.strip():
        return "--output needs a file path but got an empty value; pass one, e.g. --output outputs/pr-12345.json"
    if args.sources is not None and not args.sources.strip():
        return "--sources needs a directory but got an empty value; pass one, e.g. --sources outputs/pr-12345-src"
    if args.sources_limit is not None and args.sources is None:
        return "--sources-limit only applies to --sources; add --sources DIR or drop it"
    if args.sources_limit is not None and args.sources_limit < 0:
        return "--sources-limit must be 0 or more"
    return None


def path_problem(args):
    """Why --output or --sources cannot be used, found before any request; None when both can."""
    if args.output:
        problem = output_path_problem(args.output)
        if problem:
            return problem
    sources = Path(args.sources).expanduser() if args.sources else None
    if sources is not None and sources.exists() and not sources.is_dir():
        return f"--sources {args.sources} is a file; give a directory (it is created when missing)"
    return None


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        ref = parse_pr_ref(args.pr, args.repo)
        api_url = resolve_api_url(args.api_url)
    except (PullRefError, ValueError) as error:
        return fail(error, 2)
    problem = usage_problem(args)
    if problem:
        return fail(problem, 2)
    problem = path_problem(args)
    if problem:
        return fail(problem)

    token, token_source = discover_token_with_source(args.token, api_url)
    show_progress = not args.quiet and sys.stderr.isatty()
    client = GitHubClient(
        api_url,
        token,
        use_cache=not args.no_cache,
        wait_for_reset=args.wait,
        progress=(lambda line: say(f"fetch: {line}")) if show_progress else None,
    )
    try:
        document = fetch_pr_document(client, ref, include_ci=args.include_ci)
        code_context.add_code_context(client, ref, document, checkout=args.checkout, sources=args.sources,
                                      sources_limit=args.sources_limit)
    except GitHubError as error:
        return fail(fetch_failure(error, token_source, can_wait=not args.wait))
    except KeyboardInterrupt:
        return fail("interrupted; nothing written")

    record_usage(document, client)
    if token is None:
        say(NO_TOKEN_WARNING)
    for warning in document["meta"].get("warnings", []):
        say(f"warning: {warning}")
    problems = validate_pr_document(document, strict=True)
    if problems:
        return fail(f"internal error, the document breaks its schema: {problems[0]}")
    text = dump_json(document)
    if args.output:
        try:
            write_atomic(args.output, text)
        except OSError as error:
            return fail(f"cannot write {args.output}: {error.strerror or error}; check the path and permissions")
        if not args.quiet:
            say(f"wrote {args.output} ({client.requests_made} requests, {client.cache_hits} unchanged)")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
