#!/usr/bin/env python3
"""Put a checked review report on its PR as one sticky comment, edited in place on later runs.

Usage: python3 scripts/post_report.py REPORT --pr-json PR_JSON [--post] [--inline] [--lang zh|en]
       [--api-url URL] [--token TOKEN]

The repository, PR number and head SHA come from PR_JSON (fetch_pr_data.py's document). The
report must pass check_report.py's checks (errors; warnings are allowed) or nothing is sent.
Dry run by default: reads the PR's comments (and, with --inline, its reviews) to decide, then
prints the writes it would send on stdout and sends none. --post sends them.

stdout is one JSON object: {"posted": bool, "repo": "o/n", "pr": N, "head_sha": "...",
"writes": [{"method": "POST"|"PATCH", "path": "/repos/...", "body": {...}}, ...],
"urls": [html_url per write, --post only], "summary_only": ["finding title", ...] (--inline)}.
Exit codes: 0 success (also when nothing needs sending); 1 the report fails its check, an input
cannot be read, or GitHub refused or failed a request; 2 usage error.
"""

import argparse
import json

from vllm_rocm_review.automation import inline
from vllm_rocm_review.automation import posting
from vllm_rocm_review.core.cli import InputError
from vllm_rocm_review.core.cli import add_github_options
from vllm_rocm_review.core.cli import fail
from vllm_rocm_review.core.cli import load_pr_document
from vllm_rocm_review.core.cli import read_input_text
from vllm_rocm_review.core.cli import say
from vllm_rocm_review.github.client import GitHubClient
from vllm_rocm_review.github.client import GitHubError
from vllm_rocm_review.github.client import Unauthorized
from vllm_rocm_review.github.client import discover_token_with_source
from vllm_rocm_review.github.client import resolve_api_url
from vllm_rocm_review.report.report_check import LEVEL_ERROR
from vllm_rocm_review.report.report_check import check_report


def build_parser():
    parser = argparse.ArgumentParser(
        prog="post_report.py",
        description="Post a checked review report on its PR as one sticky comment (marker-tagged, edited in "
                    "place on later runs). Dry run by default: it reads the PR's comments (and, with --inline, "
                    "its reviews), prints the writes it would send as JSON on stdout, and sends nothing.",
        epilog="Exit codes: 0 success or nothing to send; 1 report fails check_report.py, unreadable input, or "
               "GitHub refused/failed a request; 2 usage error.",
    )
    parser.add_argument("report", metavar="REPORT", help="the checked report, e.g. outputs/pr-12345-review.md")
    parser.add_argument("--pr-json", required=True, metavar="PR_JSON",
                        help="the PR document from fetch_pr_data.py: gives repo, PR number and head SHA")
    parser.add_argument("--post", action="store_true",
                        help="send the writes (needs a token that may write issues and pull requests)")
    parser.add_argument("--inline", action="store_true",
                        help="also post one review (event COMMENT) with a line comment for each finding that "
                             "cites path:line on a line the diff shows; once per head")
    parser.add_argument("--lang", choices=("zh", "en"), default="zh",
                        help="language the report is checked in (default zh), as in check_report.py")
    add_github_options(parser)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        api_url = resolve_api_url(args.api_url)
    except ValueError as error:
        return fail(error, 2)
    try:
        document = load_pr_document(args.pr_json)
        text = read_input_text(args.report, "report", "check the path")
    except InputError as error:
        return fail(error)
    errors = [item for item in check_report(text, pr_document=document, lang=args.lang) if item.level == LEVEL_ERROR]
    if errors:
        first = errors[0]
        return fail(f"{args.report} fails check_report.py with {len(errors)} error(s), first {first.code} at line "
                    f"{first.line}: {first.message}; fix it (python3 scripts/check_report.py {args.report} "
                    f"--pr-json {args.pr_json}) and run again")
    repo, number, head_sha = posting.pr_target(document)
    token, token_source = discover_token_with_source(args.token, api_url)
    if args.post and token is None:
        return fail("--post needs a GitHub token that may write to the PR; pass --token or set GH_TOKEN")
    client = GitHubClient(api_url, token, use_cache=False)
    result = {"posted": args.post, "repo": repo, "pr": number, "head_sha": head_sha}
    try:
        body, cut = posting.comment_body(text, head_sha, args.report)
        if cut:
            say(f"warning: the report is longer than {posting.COMMENT_LIMIT} characters; the comment is cut at a line")
        writes = posting.plan_report_comment(posting.list_issue_comments(client, repo, number), repo, number, body)
        if args.inline:
            placements = inline.place_findings(text, document)
            result["summary_only"] = [item.title for item in placements if item.path is None]
            writes += inline.plan_inline_review(placements, inline.list_reviews(client, repo, number),
                                                repo, number, head_sha)
        result["writes"] = [write.to_dict() for write in writes]
        if args.post:
            result["urls"] = posting.send(client, writes)
    except Unauthorized as error:
        return fail(f"{error} (token from {token_source})")
    except GitHubError as error:
        return fail(error)
    print(json.dumps(result, ensure_ascii=False, indent=2))
    verb = "sent" if args.post else "would send (dry run; pass --post to send)"
    say(f"{repo}#{number}: {verb} {len(writes)} write(s): "
        + (", ".join(f"{write.method} {write.path}" for write in writes) or "nothing; the PR is up to date"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
