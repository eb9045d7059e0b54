"""Check a review report against the report contract (SKILL.md step 8).

Usage: python3 scripts/check_report.py REPORT.md [--pr-json PR_JSON] [--repo CLONE | --fetch-tree]
       [--vllm-tree PATH] [--upstream DIR] [--upstream-cache DIR] [--offline] [--lang zh|en] [--json]
       [--token TOKEN] [--api-url URL]

Prints one finding per line on stdout, `REPORT.md:LINE: error|warning|note CODE: message — fix: …`,
and a count line on stderr. Exit 0 when there is no error (warnings allowed), 1 when there is
an error or a file cannot be read, 2 on usage errors.

Cited vLLM paths are checked (UNKNOWN-PATH warnings) against the PR's files plus one tree, the
first available of: the PR's head and base trees in a local clone (meta.checkout, or --repo),
the head tree from the git trees API (--fetch-tree), vLLM main's saved tree (--vllm-tree, or
references/upstream/vllm-tree.json). stderr names the tree used. Without --pr-json or
--vllm-tree there is no path check: a quick lint must not warn about files the PR itself adds.
Citations of other repositories (OWNER/NAME@REF:PATH[:LINE], github.com blob URLs) are checked
against the files the context pack saved under --upstream (default: pr-N-upstream beside the report),
else against the whole tree at REF the pack cached (--upstream-cache, the pack's default): a file
that exists at REF is fine whether or not it was saved; a line number is checked against the file,
fetched on demand through the cached GitHub client unless --offline. A ref with no cached tree,
or a line that cannot be read offline, is a note, never a warning.
"""

import argparse
import json
from pathlib import Path

from vllm_rocm_review.core.cli import InputError
from vllm_rocm_review.core.cli import add_github_options
from vllm_rocm_review.core.cli import fail
from vllm_rocm_review.core.cli import load_pr_document
from vllm_rocm_review.core.cli import read_input_text
from vllm_rocm_review.core.cli import say
from vllm_rocm_review.github.client import NO_TOKEN_WARNING
from vllm_rocm_review.github.client import GitHubClient
from vllm_rocm_review.github.client import GitHubError
from vllm_rocm_review.github.client import default_cache_dir
from vllm_rocm_review.github.client import discover_token_with_source
from vllm_rocm_review.github.client import resolve_api_url
from vllm_rocm_review.report.path_trees import TreeUnavailable
from vllm_rocm_review.report.path_trees import main_tree
from vllm_rocm_review.report.path_trees import pr_own_tree
from vllm_rocm_review.report.report_check import LEVEL_ERROR
from vllm_rocm_review.report.report_check import LEVEL_WARNING
from vllm_rocm_review.report.report_check import SAVE_VLLM_TREE
from vllm_rocm_review.report.report_check import check_report
from vllm_rocm_review.report.report_check import report_number
from vllm_rocm_review.core.skill_paths import UPSTREAM_DIR
from vllm_rocm_review.core.skill_paths import bundle_relative
from vllm_rocm_review.upstream.pinned_fetch import CitationTrees
from vllm_rocm_review.upstream.tree_check import TREE_FILE_NAME
from vllm_rocm_review.upstream.tree_check import is_saved_tree

DEFAULT_VLLM_TREE = UPSTREAM_DIR / TREE_FILE_NAME
SAVED_AS = f"{SAVE_VLLM_TREE} saves it as {bundle_relative(DEFAULT_VLLM_TREE)}"
MAX_PRINTED = 30


def build_parser():
    parser = argparse.ArgumentParser(
        prog="check_report.py",
        description="Check a vLLM ROCm PR review report against the report contract (SKILL.md step 8).",
        epilog="Exit codes: 0 no errors (warnings allowed); 1 errors found or unreadable input; 2 usage error.",
    )
    parser.add_argument("report", type=file_path, help="the report to check, e.g. outputs/pr-12345-review.md")
    parser.add_argument("--pr-json", type=file_path,
                        help="the PR document from fetch_pr_data.py: header fields must equal its metadata, "
                             "and cited paths must be in its files or in the PR's trees (see --repo)")
    parser.add_argument("--lang", choices=("zh", "en"), default="zh",
                        help="language of the prose (default zh; en when the user asked for English)")
    trees = parser.add_mutually_exclusive_group()
    trees.add_argument("--repo", type=file_path, metavar="CLONE",
                       help="a local vLLM clone holding the PR's head and base commits (fetch_pr_data.py --checkout "
                            "CLONE puts them there): cited paths are checked against those two trees. Default: the "
                            "clone recorded in the PR document's meta.checkout. Needs --pr-json")
    trees.add_argument("--fetch-tree", action="store_true",
                       help="without a clone, fetch the tree at pr.head.sha once through the git trees API "
                            "(uses --token and --api-url). Needs --pr-json")
    parser.add_argument("--vllm-tree", type=file_path, default=None, metavar="PATH",
                        help=f"vLLM main's path list saved by `{SAVE_VLLM_TREE}`, used only when the PR's own trees "
                             "are unavailable: cited paths must be in it or in the PR's files. Also works without "
                             "the PR document (files the PR adds then draw warnings). Default: with --pr-json, "
                             f"{bundle_relative(DEFAULT_VLLM_TREE)} when present; with neither option, "
                             "cited paths are not checked")
    parser.add_argument("--upstream", type=file_path, default=None, metavar="DIR",
                        help="files of other repositories saved by context_pack.py, as DIR/OWNER/NAME@REF/PATH: "
                             "citations like ROCm/aiter@v0.1.10:aiter/ops/quant.py:120 must exist there. "
                             "Default: pr-N-upstream beside the report (N from the report's title)")
    parser.add_argument("--upstream-cache", type=file_path, default=None, metavar="DIR",
                        help="the trees and files context_pack.py cached (default: the same as context_pack.py's, "
                             "the GitHub client's cache directory under upstream/)")
    parser.add_argument("--offline", action="store_true",
                        help="send no request: a cited line in a file not yet cached is left unchecked (a note)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object on stdout")
    add_github_options(parser)
    return parser


def file_path(value):
    """argparse type: a non-empty path (an unset shell variable must not become '.')."""
    if not value.strip():
        raise argparse.ArgumentTypeError("empty path; pass a file")
    return Path(value)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if (args.repo or args.fetch_tree) and not args.pr_json:
        parser.error(f"{'--repo' if args.repo else '--fetch-tree'} needs --pr-json: the PR's commits come from it")
    if args.offline and args.fetch_tree:
        parser.error("--offline sends no request; drop --fetch-tree")
    try:
        text = read_input_text(args.report, "report", "check the path")
        pr_document = load_pr_document(args.pr_json) if args.pr_json else None
        vllm_tree = choose_vllm_tree(args, pr_document)
    except InputError as exc:
        return fail(exc)
    upstream_dir = args.upstream or default_upstream_dir(args.report, pr_document, text)
    try:
        violations = check_report(text, pr_document=pr_document, lang=args.lang, vllm_tree=vllm_tree,
                                  upstream_dir=upstream_dir, upstream_trees=citation_trees(args))
    except InputError as exc:
        return fail(exc)
    counts = {level: sum(1 for item in violations if item.level == level) for level in (LEVEL_ERROR, LEVEL_WARNING)}
    errors, warnings = counts[LEVEL_ERROR], counts[LEVEL_WARNING]
    notes = len(violations) - errors - warnings
    name = str(args.report)
    if args.json:
        print(json.dumps({"report": name, "ok": errors == 0, "errors": errors, "warnings": warnings, "notes": notes,
                          "paths_checked_against": vllm_tree.name if vllm_tree else None,
                          "violations": [item.to_dict() for item in violations]}, ensure_ascii=False, indent=2))
    else:
        for item in violations[:MAX_PRINTED]:
            print(item.render(name))
        if len(violations) > MAX_PRINTED:
            say(f"note: {len(violations) - MAX_PRINTED} more not shown; fix these and re-run, or pass --json")
    if vllm_tree is not None:
        say(f"paths checked against {vllm_tree.name}")
    verdict = "fails" if errors else "passes"
    say(f"{name} {verdict}: {errors} error(s), {warnings} warning(s)" + (f", {notes} note(s)" if notes else ""))
    return 1 if errors else 0


def choose_vllm_tree(args, pr_document):
    """The PR's own trees when a clone or --fetch-tree gives them, else vLLM main's saved tree, else None."""
    if pr_document is not None:
        client = github_client(args) if args.fetch_tree else None
        try:
            tree, notes = pr_own_tree(pr_document, clone=args.repo, client=client)
        except TreeUnavailable as error:
            raise InputError(f"{error}; run fetch_pr_data.py --checkout CLONE first, or drop --repo") from None
        except GitHubError as error:
            raise InputError(f"--fetch-tree: {error}; retry, or drop --fetch-tree to use the saved main tree") from None
        for note in notes:
            say(f"note: {note}")
        if tree is not None:
            return tree
    if pr_document is None and args.vllm_tree is None:
        return None
    return load_main_tree(args.vllm_tree)


def citation_trees(args):
    """The cached upstream trees; files are fetched through the client only when needed and not --offline."""
    cache_dir = args.upstream_cache or default_cache_dir() / "upstream"
    return CitationTrees(cache_dir, client_factory=None if args.offline else lambda: github_client(args))


def github_client(args):
    try:
        api_url = resolve_api_url(args.api_url)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    token, _source = discover_token_with_source(args.token, api_url)
    if token is None:
        say(NO_TOKEN_WARNING)
    return GitHubClient(api_url, token)


def load_main_tree(path):
    """The saved vLLM main tree, or None when the default file is absent (paths then come from the PR only)."""
    if path is None:
        if not DEFAULT_VLLM_TREE.exists():
            return None
        path = DEFAULT_VLLM_TREE
    text = read_input_text(path, "vLLM tree", SAVED_AS)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"vLLM tree {path} is not JSON ({error.msg} at line {error.lineno}); {SAVED_AS}") from None
    if not is_saved_tree(data):
        raise InputError(f"vLLM tree {path} has no 'paths' list of strings; {SAVED_AS}")
    return main_tree(data["paths"], data.get("commit_sha"), path)


def default_upstream_dir(report, pr_document, text):
    """pr-N-upstream beside the report, where context_pack.py saves other repositories' files."""
    number = pr_document["pr"]["number"] if pr_document else report_number(text)
    return Path(report).parent / f"pr-{number}-upstream" if number else None


if __name__ == "__main__":
    raise SystemExit(main())
