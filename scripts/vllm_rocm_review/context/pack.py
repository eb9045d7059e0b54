"""Build the context pack of a PR document from a local clone (or its --sources), and its digest."""

from . import changes
from .call_sites import stale_call_sites
from .ci_coverage import ci_coverage
from .code_map import NOT_BUILT as CODE_MAP_NOT_BUILT
from .custom_ops import custom_ops
from .env_vars import env_vars
from .git_reader import CommitReader
from .git_reader import SourcesReader
from .git_reader import resolve_git_dir
from .hazards import hazards
from .hot_path import hot_path_copies
from .pinned_upstream import build_pinned_upstream
from .platform_twins import platform_twins
from .undone_fixes import undone_fixes
from .workspace import Workspace
from ..core.diff_parse import diff_from_document

UPSTREAM_NOT_COLLECTED = "not collected"
NO_TREE = "no checkout at head"


class PackError(Exception):
    """The pack cannot be built from these inputs; str() is the problem and the remedy."""


def open_workspace(document, repo, settings, surface):
    """A Workspace over the checkout in ``repo`` (meta.checkout), else over meta.sources."""
    meta = document.get("meta") or {}
    checkout = meta.get("checkout") or {}
    diffs = diff_from_document(document)
    repo = repo or checkout.get("path")
    if repo:
        reader = CommitReader(resolve_git_dir(repo))
        head = checkout.get("head_sha") or document["pr"]["head"].get("sha")
        base = checkout.get("merge_base") or checkout.get("base_sha") or document["pr"]["base"].get("sha")
        if not reader.has_commit(head):
            raise PackError(f"head commit {str(head)[:12]} is not in {repo}; "
                            "run scripts/fetch_pr_data.py --checkout DIR first, or pass the clone that holds it")
        if not reader.has_commit(base):
            raise PackError(f"base commit {str(base)[:12]} is not in {repo}; re-run scripts/fetch_pr_data.py --checkout DIR")
        return Workspace(diffs, reader, base, head, True, settings, surface), "checkout", []
    sources = meta.get("sources")
    if sources:
        reader = SourcesReader(sources["dir"], sources.get("fetched") or [])
        not_possible = [f"{section}: {NO_TREE}" for section in
                        ("base spans and signatures", "callers", "twins", "env-var readers and base registration",
                         "CI coverage", "undone fixes", "platform twins", "stale call sites")]
        if sources.get("skipped"):
            not_possible.append(f"head files not downloaded: {len(sources['skipped'])}")
        return Workspace(diffs, reader, None, "head", False, settings, surface), "sources", not_possible
    raise PackError("the PR document has neither meta.checkout nor meta.sources and no --repo was given; "
                    "re-fetch it with scripts/fetch_pr_data.py --checkout DIR, or pass --repo CLONE")


def offline_upstream(save_root):
    """Upstream settings that read the pins and fetch nothing."""
    return {"client": None, "cache_dir": None, "save_root": save_root, "offline": True}


def pinned_upstream(ws, upstream, symbols=()):
    """Section 5: the AITER/mori definitions the changed functions use, at the refs vLLM pins.

    ``upstream`` holds ``client`` (None when offline), ``cache_dir``, ``save_root`` and ``offline``;
    ``symbols`` (the changed symbols) give the changed functions whose unchanged calls count too.
    """
    def reader(commit):
        return lambda path: ws.reader.read_many(commit, [path]).get(path) if commit else None

    added = [{"path": diff.path, "line": number, "text": text} for diff in ws.diffs for number, text in diff.added]
    changed_ranges = {}
    for entry in symbols:
        if entry["kind"] == "function" and entry["head"]:
            changed_ranges.setdefault(entry["path"], []).append((entry["head"]["start"], entry["head"]["end"]))
    return build_pinned_upstream(read_base=reader(ws.base), read_head=reader(ws.head), added_lines=added,
                                 changed_ranges=changed_ranges, **upstream)


def build_pack(document, repo, settings, surface, upstream=None, code_map=None):
    """The pack as a dict with the fixed key order of outputs/pr-N-context.json.

    Without ``upstream`` (see ``pinned_upstream``) section 5 is left out and the pack says so.
    With ``code_map`` (a ``code_map.CodeMap``) the map is built last, from the other sections:
    its page is ``code_map.text``, its path and cuts are the pack's ``code_map``.
    """
    ws, mode, not_possible = open_workspace(document, repo, settings, surface)
    ws.load_python()
    symbols = changes.changed_symbols(ws)
    flags = changes.capability_flags(ws, symbols)
    callers = changes.callers(ws, symbols) if ws.searchable else None
    twins, twin_flags = changes.twins(ws, symbols) if ws.searchable else (None, [])
    env, env_flags = env_vars(ws)
    coverage, ci_flags = ci_coverage(ws) if ws.searchable else (None, [])
    ops, op_flags = custom_ops(ws)
    copies, copy_flags = hot_path_copies(ws)
    fixes, fix_flags = undone_fixes(ws) if ws.searchable else (None, [])
    platform, platform_flags = platform_twins(ws, symbols) if ws.searchable else (None, [])
    stale, stale_flags = stale_call_sites(ws, symbols) if ws.searchable else (None, [])
    hazard_flags = hazards(ws)
    section = pinned_upstream(ws, upstream, symbols) if upstream is not None else {"status": UPSTREAM_NOT_COLLECTED}
    flags = (env_flags + ci_flags + op_flags + twin_flags + flags + copy_flags + hazard_flags
             + section.get("flags", []) + fix_flags + platform_flags + stale_flags)
    flags = [found for found in flags if found["code"] not in settings["flags_off"]]
    pr = document["pr"]
    pack = {
        "pr": {"number": pr["number"], "title": pr["title"]},
        "meta": {"base_sha": ws.base, "head_sha": ws.head if mode == "checkout" else pr["head"].get("sha"),
                 "mode": mode, "not_possible": not_possible,
                 "upstream": section.get("note", UPSTREAM_NOT_COLLECTED)},
        "symbols": symbols,
        "callers": callers,
        "twins": twins,
        "env_vars": env,
        "upstream": section,
        "ci_coverage": coverage,
        "custom_ops": ops,
        "hot_path_copies": copies,
        "undone_fixes": fixes,
        "platform_twins": platform,
        "stale_call_sites": stale,
        "flags": flags,
    }
    pack["code_map"] = code_map.build(ws, pack) if code_map is not None else {"status": CODE_MAP_NOT_BUILT}
    return pack
