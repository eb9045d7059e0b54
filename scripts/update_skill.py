#!/usr/bin/env python3
"""Refresh the skill's upstream reference copies and, optionally, check vLLM's layout.

Usage: python3 scripts/update_skill.py [--check-vllm-tree] [--skill-dir DIR] [--api-url URL]
                                       [--token TOKEN] [--force] [--dry-run]

Downloads the sources listed under upstream_sources in references/rocm-surface.yaml into
references/upstream/, skipping every source whose upstream SHA is unchanged. Never writes the
curated files (rules catalog, surface YAML, example report, SKILL.md). Exit codes: 0 done,
1 failure (one line on stderr; nothing half-written), 2 usage error, 3 drift: a required
source vanished upstream or a vLLM path moved, went missing or reappeared.
"""

import argparse
from datetime import datetime
from datetime import timezone
from pathlib import Path

from vllm_rocm_review.core.cli import FIX_SURFACE
from vllm_rocm_review.core.cli import add_github_options
from vllm_rocm_review.core.cli import fail
from vllm_rocm_review.core.cli import say
from vllm_rocm_review.upstream.curation import curation_line
from vllm_rocm_review.upstream.curation import read_curated_shas
from vllm_rocm_review.core.file_errors import describe_os_error
from vllm_rocm_review.github.client import NO_TOKEN_WARNING
from vllm_rocm_review.github.client import GitHubClient
from vllm_rocm_review.github.client import GitHubError
from vllm_rocm_review.github.client import Unauthorized
from vllm_rocm_review.github.client import discover_token_with_source
from vllm_rocm_review.github.client import resolve_api_url
from vllm_rocm_review.core.skill_paths import RULES_CATALOG
from vllm_rocm_review.core.skill_paths import SKILL_DIR
from vllm_rocm_review.core.skill_paths import SURFACE_YAML
from vllm_rocm_review.core.skill_paths import UPSTREAM_DIR
from vllm_rocm_review.core.surface import SurfaceError
from vllm_rocm_review.core.surface import load_surface
from vllm_rocm_review.upstream.tree_check import TREE_FILE_NAME
from vllm_rocm_review.upstream.tree_check import check_vllm_tree
from vllm_rocm_review.upstream.tree_check import surface_path_checks
from vllm_rocm_review.upstream.sources import METADATA_NAME
from vllm_rocm_review.upstream.sources import load_sources
from vllm_rocm_review.upstream.sources import refresh_upstream

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_DRIFT = 3


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="update_skill.py",
        description=(
            "Download the upstream review documents listed in references/rocm-surface.yaml into "
            "references/upstream/ (only those whose SHA changed), keep the previous copies and diffs "
            "under references/upstream/.previous/, and print what changed since the last curation."
        ),
        epilog="Exit codes: 0 done, 1 failure, 2 usage error, 3 upstream or vLLM layout drift.",
    )
    parser.add_argument(
        "--check-vllm-tree",
        action="store_true",
        help="also check every vLLM path named in rocm-surface.yaml against vllm-project/vllm's default branch "
        "(exit 3 on drift) and save the path list to references/upstream/vllm-tree.json for check_report.py",
    )
    parser.add_argument(
        "--skill-dir", metavar="DIR", help="skill bundle to update (default: the one this script is in)"
    )
    add_github_options(parser)
    parser.add_argument(
        "--force",
        action="store_true",
        help="ignore the recorded SHAs: download every source and the vLLM tree again (ETags still apply)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="report what would change; write nothing into the skill directory"
    )
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    skill_dir = Path(args.skill_dir).resolve() if args.skill_dir else SKILL_DIR
    surface_path = skill_dir / SURFACE_YAML.relative_to(SKILL_DIR)
    upstream_dir = skill_dir / UPSTREAM_DIR.relative_to(SKILL_DIR)
    catalog_path = skill_dir / RULES_CATALOG.relative_to(SKILL_DIR)
    if not surface_path.is_file():
        return fail(f"{surface_path} not found; --skill-dir must point at the skill bundle", EXIT_USAGE)
    try:
        api_url = resolve_api_url(args.api_url)
    except ValueError as exc:
        return fail(exc, EXIT_USAGE)
    try:
        surface = load_surface(surface_path)
    except SurfaceError as exc:  # a broken bundle, not bad usage
        return fail(f"{exc}; {FIX_SURFACE}", EXIT_FAILURE)
    token, token_source = discover_token_with_source(args.token, api_url)
    client = GitHubClient(api_url, token)
    if token is None:
        say(NO_TOKEN_WARNING)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if args.dry_run:
        say("dry run: nothing will be written")
    try:
        drifted, tree_summary = _run(args, client, surface, skill_dir, upstream_dir, catalog_path, now)
    except GitHubError as exc:
        say(_request_summary(client))
        return fail(f"{exc} (token from {token_source})" if isinstance(exc, Unauthorized) else exc, EXIT_FAILURE)
    except OSError as exc:
        say(_request_summary(client))
        return fail(f"{describe_os_error(exc)}; check the path and permissions", EXIT_FAILURE)
    say(_request_summary(client))
    if tree_summary:
        say(tree_summary)  # last, so drift counts are the final thing on screen
    return EXIT_DRIFT if drifted else EXIT_OK


def _run(args, client, surface, skill_dir, upstream_dir, catalog_path, now):
    """Refresh, print the per-source lines and the curation line, then the tree check.

    Returns ``(drifted, tree summary line or None)``.
    """
    refresh = refresh_upstream(
        client, upstream_dir, load_sources(surface), now=now, force=args.force, dry_run=args.dry_run, warn=say
    )
    for outcome in refresh.outcomes:
        print(outcome.line(refresh.dry_run))
    for outcome in refresh.outcomes:
        if outcome.diff_path is not None:
            print(f"diff: {outcome.diff_path.relative_to(skill_dir)}")
    print(curation_line(read_curated_shas(catalog_path), refresh.current_shas(), catalog_path.name))
    if refresh.metadata_written:
        say(f"saved {(upstream_dir / METADATA_NAME).relative_to(skill_dir)}")
    if not args.check_vllm_tree:
        return refresh.drifted, None
    checks = surface_path_checks(surface)
    tree = check_vllm_tree(client, upstream_dir, checks, now=now, force=args.force, dry_run=args.dry_run)
    for verdict in tree.verdicts:  # drift first, then OK, then old locations
        print(verdict.line())
    if tree.saved:
        say(f"saved {(upstream_dir / TREE_FILE_NAME).relative_to(skill_dir)}")
    return refresh.drifted or tree.drifted, tree.summary()


def _request_summary(client):
    remaining = client.rate_limit["remaining"]
    return (
        f"requests: {client.requests_made} ({client.rate_limit_units} rate-limit units, "
        f"{client.cache_hits} answered 304 from the cache); rate limit remaining: "
        f"{remaining if remaining is not None else 'unknown'}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
