#!/usr/bin/env python3
"""Prepare a review in one command: fetch the PR, build the context pack, triage it, write the brief.

Usage: python3 scripts/prepare_review.py PR [--repo CLONE | --sources] [--lang zh|en] [--since OLD_SHA]
       [--token TOKEN] [--api-url URL] [--no-cache] [--quiet] [--output-dir DIR]

Writes, as the single scripts would: outputs/pr-N.json (fetch_pr_data.py --include-ci, with
--checkout CLONE, else --sources outputs/pr-N-src), outputs/pr-N-context.md and .json
(context_pack.py), outputs/pr-N-triage.txt (triage_pr.py --context), then outputs/pr-N-brief.md
(at most 200 lines), which it also prints. Progress goes to stderr. Everything is computed before
anything is written: a failure writes no file. Exit codes: 0 written; 1 GitHub, clone, pack or
reference failure (one line says what to do, nothing written); 2 usage error.
"""

import argparse
import sys

from vllm_rocm_review.automation.prepare import Options
from vllm_rocm_review.automation.prepare import References
from vllm_rocm_review.automation.prepare import output_paths
from vllm_rocm_review.automation.prepare import path_problem
from vllm_rocm_review.automation.prepare import prepare
from vllm_rocm_review.core.cli import InputError
from vllm_rocm_review.core.cli import add_github_options
from vllm_rocm_review.core.cli import fail
from vllm_rocm_review.core.cli import say
from vllm_rocm_review.core.file_errors import describe_os_error
from vllm_rocm_review.github.client import NO_TOKEN_WARNING
from vllm_rocm_review.github.client import GitHubClient
from vllm_rocm_review.github.client import discover_token_with_source
from vllm_rocm_review.github.client import resolve_api_url
from vllm_rocm_review.github.pr_ref import PullRefError
from vllm_rocm_review.github.pr_ref import parse_pr_ref
from vllm_rocm_review.triage.incremental import SHA_PREFIX

EPILOG = """\
examples:
  prepare_review.py 12345 --repo "$VLLM_REPO"            # then ask Claude to review PR 12345
  prepare_review.py 12345 --sources --lang en            # no clone: download the changed files
  prepare_review.py 12345 --repo "$VLLM_REPO" --since 1a2b3c4   # re-review after a push

environment: GH_TOKEN / GITHUB_TOKEN, GITHUB_API_URL, VLLM_ROCM_REVIEW_CACHE, VLLM_ROCM_REVIEW_GIT_URL
(as fetch_pr_data.py).
exit codes: 0 written; 1 GitHub, clone, context-pack or reference failure (nothing written);
2 usage error.
"""


def build_parser():
    parser = argparse.ArgumentParser(
        prog="prepare_review.py",
        description="Fetch a vLLM PR, build its context pack, triage it and write the review brief "
                    "(outputs/pr-N-brief.md, also printed).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("pr", metavar="PR", help="12345, #12345, OWNER/NAME#12345 or a pull-request URL")
    code = parser.add_mutually_exclusive_group()
    code.add_argument("--repo", metavar="CLONE",
                      help="a local vLLM clone (bare or normal; a new path is created) to fetch the PR's head and "
                           "base into, as fetch_pr_data.py --checkout; its work tree is not touched")
    code.add_argument("--sources", action="store_true",
                      help="no clone: download the head versions of the changed files into outputs/pr-N-src "
                           "(the default without --repo)")
    parser.add_argument("--lang", choices=("zh", "en"), default="zh",
                        help="language of the brief's instructions and of the report it asks for (default zh)")
    parser.add_argument("--since", metavar="OLD_SHA",
                        help="re-review: the head the previous report reviewed (its marker's head=); needs --repo")
    add_github_options(parser)
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the conditional-request cache")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--output-dir", metavar="DIR", default="outputs",
                        help="where the files go (default outputs; the directory must exist)")
    return parser


def usage_problem(args):
    """The one-line usage error argparse cannot see, or None."""
    if args.repo is not None and not args.repo.strip():
        return "--repo needs a vLLM clone but got an empty value; set VLLM_REPO or pass a path (or use --sources)"
    if args.since is not None and not SHA_PREFIX.fullmatch(args.since.strip()):
        return f"--since {args.since!r} is not a commit SHA (7-40 hex digits); pass the previous report marker's head="
    if args.since is not None and args.repo is None:
        return "--since needs --repo CLONE: the changes since the old head are read from the clone"
    if not args.output_dir.strip():
        return "--output-dir needs a directory but got an empty value"
    return None


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        ref = parse_pr_ref(args.pr)
        api_url = resolve_api_url(args.api_url)
    except (PullRefError, ValueError) as error:
        return fail(error, 2)
    problem = usage_problem(args)
    if problem:
        return fail(problem, 2)
    problem = path_problem(output_paths(ref.number, args.output_dir))
    if problem:
        return fail(problem)
    try:
        references = References()
    except InputError as error:
        return fail(error)

    token, token_source = discover_token_with_source(args.token, api_url)
    show_requests = not args.quiet and sys.stderr.isatty()
    client = GitHubClient(api_url, token, use_cache=not args.no_cache,
                          progress=(lambda line: say(f"fetch: {line}")) if show_requests else None)
    if args.repo is None and not args.sources and not args.quiet:
        say("prepare: no --repo, so the changed files are downloaded (--sources); a clone adds callers, twins and "
            "CI coverage")
    options = Options(repo=args.repo, sources=args.repo is None, since=args.since.strip().lower() if args.since else None,
                      lang=args.lang, output_dir=args.output_dir)
    progress = (lambda line: None) if args.quiet else (lambda line: say(f"prepare: {line}"))
    try:
        paths, document, brief = prepare(client, ref, options, token_source, references, progress)
    except InputError as error:
        return fail(error)
    except OSError as error:
        return fail(f"{describe_os_error(error)}; check the path and permissions")
    except KeyboardInterrupt:
        return fail("interrupted; nothing written")
    if token is None:
        say(NO_TOKEN_WARNING)
    for warning in document["meta"].get("warnings", []):
        say(f"warning: {warning}")
    if not args.quiet:
        say(f"wrote {paths['pr_json']}, {paths['pack_md']} (.json), {paths['triage']} and {paths['brief']} "
            f"({client.requests_made} requests, {client.cache_hits} unchanged)")
    sys.stdout.write(brief)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
