#!/usr/bin/env python3
"""Gather the cross-file facts around a PR's diff from a local vLLM clone: the context pack.

Usage:
  python3 scripts/context_pack.py PR_JSON [--repo VLLM_CLONE] [--output outputs/pr-N-context.md]
                                  [--json] [--max-lines N] [--code-map-lines N]
                                  [--offline | --upstream-cache DIR --api-url URL --token T]

PR_JSON is what scripts/fetch_pr_data.py writes; with --checkout it records meta.checkout
(base and head commits in the clone), which this script reads. Writes the digest
(outputs/pr-N-context.md, at most --max-lines lines) and everything (the .json beside it),
both atomically, and prints the digest (or the JSON with --json). Also writes the code map
pr-N-code.md beside the digest: each changed definition at head (and base), its callers' lines,
twins and called upstream definitions, hunks of C++/CUDA/YAML files, capped at --code-map-lines
lines with what was cut named at its top. Sections: changed symbols,
callers at head, twins, env vars, pinned upstream code, CI coverage, custom ops, hot-path
copies, and flags. The only network use is the pinned AITER/mori code the changed functions use
(GitHub trees, contents and tag-list API, cached by ETag and blob SHA, so a re-run costs no rate
limit): definitions, the kernel modules, tuned configs and C++ sources one level below them, saved
under pr-N-upstream/ beside the digest within the per-PR budget; --offline reads the pins only. With only meta.sources, the
sections that need the whole tree are listed under meta.not_possible. Exit codes: 0 success;
1 bad input or unusable clone; 2 usage error.
"""

import argparse
import json
import sys
from pathlib import Path

from vllm_rocm_review.context.code_map import CodeMap
from vllm_rocm_review.context.digest import DEFAULT_MAX_LINES
from vllm_rocm_review.context.digest import render_digest
from vllm_rocm_review.context.git_reader import GitReadError
from vllm_rocm_review.context.pack import PackError
from vllm_rocm_review.context.pack import build_pack
from vllm_rocm_review.context.pack import offline_upstream
from vllm_rocm_review.core.atomic_io import write_atomic
from vllm_rocm_review.core.cli import FIX_SURFACE
from vllm_rocm_review.core.cli import InputError
from vllm_rocm_review.core.cli import load_pr_document
from vllm_rocm_review.core.cli import output_path_problem
from vllm_rocm_review.core.cli import run_cli
from vllm_rocm_review.core.cli import say
from vllm_rocm_review.core.surface import SurfaceError
from vllm_rocm_review.core.surface import load_surface
from vllm_rocm_review.github.client import GitHubClient
from vllm_rocm_review.github.client import default_cache_dir
from vllm_rocm_review.github.client import discover_token_with_source
from vllm_rocm_review.github.client import resolve_api_url


MIN_CODE_MAP_LINES = 50


def line_limit(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 20:
        raise argparse.ArgumentTypeError("must be at least 20")
    return value


def code_map_limit(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value != 0 and value < MIN_CODE_MAP_LINES:
        raise argparse.ArgumentTypeError(f"must be 0 (no code map) or at least {MIN_CODE_MAP_LINES}")
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="context_pack.py",
        description="Build the context pack of a PR (changed symbols, callers, twins, env vars, pinned AITER/mori "
                    "code, CI coverage, custom ops, hot-path copies, flags) and its code map (pr-N-code.md: the "
                    "changed code, its callers, twins and upstream definitions on one page) from a local vLLM "
                    "clone. Deterministic; "
                    "the network is used only for the pinned upstream code.",
        epilog="Exit codes: 0 success; 1 bad PR document, a clone without the PR's commits, or an unusable "
               "surface file; 2 usage error.",
    )
    parser.add_argument("pr_json", metavar="PR_JSON", help="PR document written by scripts/fetch_pr_data.py")
    parser.add_argument("--repo", metavar="VLLM_CLONE",
                        help="bare or normal vLLM clone holding the PR's base and head commits (default: "
                             "meta.checkout.path; without meta.checkout, the PR's base and head SHAs are looked up "
                             "in it; without either, meta.sources is used)")
    parser.add_argument("--output", metavar="PATH",
                        help="digest path (default outputs/pr-N-context.md); the JSON goes beside it with .json, "
                             "the code map as pr-N-code.md")
    parser.add_argument("--json", action="store_true", help="print the full pack as JSON instead of the digest")
    parser.add_argument("--max-lines", type=line_limit, default=DEFAULT_MAX_LINES, metavar="N",
                        help=f"digest length limit (default {DEFAULT_MAX_LINES}, at least 20)")
    parser.add_argument("--code-map-lines", type=code_map_limit, metavar="N",
                        help="cap of the code map pr-N-code.md written beside the digest (default "
                             "context_pack.code_map.max_lines in references/rocm-surface.yaml; 0: no code map; "
                             f"else at least {MIN_CODE_MAP_LINES})")
    parser.add_argument("--offline", action="store_true",
                        help="read the AITER/mori pins but fetch no upstream code (the pack says so)")
    parser.add_argument("--upstream-cache", metavar="DIR",
                        help="cache of fetched upstream trees and files (default: the GitHub client's cache "
                             "directory, under upstream/)")
    parser.add_argument("--api-url", metavar="URL", help="GitHub API URL (default $GITHUB_API_URL or api.github.com)")
    parser.add_argument("--token", metavar="T", help="GitHub token (default $GH_TOKEN, $GITHUB_TOKEN, gh auth token)")
    args = parser.parse_args(argv)
    if args.output is not None and not args.output.strip():
        parser.error("--output needs a file path")
    if args.offline and (args.upstream_cache or args.api_url or args.token):
        parser.error("--offline fetches nothing; drop --upstream-cache, --api-url and --token")
    return args


def upstream_settings(args, save_root):
    """What build_pack needs for the pinned upstream section."""
    if args.offline:
        return offline_upstream(save_root)
    try:
        api_url = resolve_api_url(args.api_url)
    except ValueError as exc:
        raise InputError(f"{exc}; pass --api-url https://HOST/api/v3 or use --offline") from None
    token, _ = discover_token_with_source(args.token, api_url)
    cache_dir = Path(args.upstream_cache) if args.upstream_cache else default_cache_dir() / "upstream"
    return {"client": GitHubClient(api_url, token), "cache_dir": cache_dir, "save_root": save_root, "offline": False}


def run(args):
    if args.output:
        problem = output_path_problem(args.output, example="outputs/pr-12345-context.md")
        if problem:
            raise InputError(problem)
    document = load_pr_document(args.pr_json)
    try:
        surface = load_surface()
    except SurfaceError as exc:
        raise InputError(f"{exc}; {FIX_SURFACE}") from None
    number = document["pr"]["number"]
    digest_path = Path(args.output or f"outputs/pr-{number}-context.md")
    upstream = upstream_settings(args, digest_path.parent / f"pr-{number}-upstream")
    map_lines = surface["context_pack"]["code_map"]["max_lines"] if args.code_map_lines is None else args.code_map_lines
    code_map = CodeMap(digest_path.parent / f"pr-{number}-code.md", map_lines) if map_lines else None
    try:
        pack = build_pack(document, args.repo, surface["context_pack"], surface, upstream, code_map)
    except PackError as exc:
        raise InputError(str(exc)) from None
    except GitReadError as exc:
        raise InputError(f"{exc}; pass --repo a vLLM clone (bare or normal) that holds the PR's commits") from None
    json_path = digest_path.with_suffix(".json")
    data = json.dumps(pack, ensure_ascii=False, indent=1) + "\n"
    digest = render_digest(pack, json_path.name, args.max_lines)
    if code_map is not None:
        write_atomic(Path(code_map.path), code_map.text)
    write_atomic(json_path, data)
    write_atomic(digest_path, digest)
    sys.stdout.write(data if args.json else digest)
    written = f"{digest_path}, {json_path} and {code_map.path}" if code_map else f"{digest_path} and {json_path}"
    say(f"wrote {written} ({len(pack['flags'])} flag(s))")


def main(argv=None) -> int:
    return run_cli(run, parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
