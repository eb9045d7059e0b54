"""Citations of other repositories in a report, checked against the pinned trees, never copied.

A finding cites AITER or mori code as ``OWNER/NAME@REF:PATH[:LINE]`` or as a github.com blob
URL. The cited file is checked, in this order, against:

1. the copy the context pack saved (``upstream_dir/OWNER/NAME@REF/PATH``), line count included;
2. the whole tree at REF that the pack cached (``trees``, an upstream.pinned_fetch.CitationTrees):
   a path in it is fine; a line number is checked against the file, read from the blob cache or
   fetched on demand (not with --offline: then the line is left unchecked, with a note);
3. neither (or a path inside a git submodule): a note, never a warning.

A path that is not in the tree at REF is a warning naming the nearest real path.
"""

import difflib
import re
from functools import lru_cache
from pathlib import Path

from ..core.surface import SurfaceError
from ..core.surface import load_surface
from .check_finding import LEVEL_NOTE
from .check_finding import LEVEL_WARNING
from .check_finding import Finding

# Another repository, cited the way SKILL.md teaches: ROCm/aiter@v0.1.10:aiter/ops/quant.py[:120].
EXTERNAL_CITATION = re.compile(r"(?<![\w./-])(?P<owner>[A-Za-z0-9][A-Za-z0-9-]*)/(?P<name>[A-Za-z0-9._-]+)"
                               r"@(?P<ref>[A-Za-z0-9._-]+):(?P<path>[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*?)"
                               r"(?::(?P<line>\d+))?(?![\w/.-])")
BLOB_URL = re.compile(r"https?://github\.com/(?P<owner>[A-Za-z0-9-]+)/(?P<name>[A-Za-z0-9._-]+)/blob/"
                      r"(?P<ref>[A-Za-z0-9._-]+)/(?P<path>[^\s#?)`>]+)(?:#L(?P<line>\d+)(?:-L\d+)?)?")
URL = re.compile(r"https?://\S+")
MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
SUBMODULE = "commit"


def without_citations(line):
    """The line without other-repository citations, URLs, and Markdown links whose target is one
    (the link text of ``[aiter/ops/quant.py](ROCm/aiter@v0.1.19:aiter/ops/quant.py)`` is no vLLM path)."""
    line = MARKDOWN_LINK.sub(lambda match: " " if _is_explicit(match.group("target")) else match.group(0), line)
    return URL.sub(" ", EXTERNAL_CITATION.sub(" ", line))


def _is_explicit(target):
    return bool(BLOB_URL.fullmatch(target) or EXTERNAL_CITATION.fullmatch(target))


@lru_cache(maxsize=1)
def upstream_owners():
    """Top folder -> repository for the upstream repositories the skill knows (aiter -> ROCm/aiter)."""
    try:
        sources = load_surface()["upstream_sources"]
    except SurfaceError:
        return {}
    return {source["repo"].split("/")[1].lower(): source["repo"] for source in sources}


def external_citations(line):
    """(repo, ref, path, line or None) for each OWNER/NAME@REF:PATH[:LINE] or github.com blob URL in a line."""
    matches = [*EXTERNAL_CITATION.finditer(line), *BLOB_URL.finditer(line)]
    return [(f"{match.group('owner')}/{match.group('name')}", match.group("ref"), match.group("path").rstrip("."),
             int(match.group("line")) if match.group("line") else None) for match in matches]


def check_external_citations(findings, upstream_dir, trees=None):
    """UNKNOWN-UPSTREAM-PATH and UPSTREAM-LINE warnings, UPSTREAM-UNCHECKED notes (see the module docstring)."""
    found = []
    seen = set()
    for finding in findings:
        for number, line in finding.body:
            for repo, ref, path, line_number in external_citations(line):
                cited = f"{repo}@{ref}:{path}" + (f":{line_number}" if line_number else "")
                if cited in seen:
                    continue
                seen.add(cited)
                found += _check_one(number, repo, ref, path, line_number, upstream_dir, trees, seen)
    return found


def _check_one(number, repo, ref, path, line_number, upstream_dir, trees, seen):
    cited = f"{repo}@{ref}:{path}" + (f":{line_number}" if line_number else "")
    saved = Path(upstream_dir).joinpath(*repo.split("/")[:-1], f"{repo.split('/')[-1]}@{ref}") if upstream_dir else None
    target = saved.joinpath(*path.split("/")) if saved else None
    if target is not None and target.is_file():
        total = len(target.read_text(encoding="utf-8", errors="replace").splitlines())
        return _line_problem(number, cited, line_number, total)
    tree = trees.tree(repo, ref) if trees is not None else None
    if tree is None:
        if f"{repo}@{ref}" in seen:
            return []
        seen.add(f"{repo}@{ref}")
        return [Finding(LEVEL_NOTE, number, "UPSTREAM-UNCHECKED",
                        f"{repo}@{ref} citations are not checked: no cached tree of that ref"
                        + (f" and no saved copy under {upstream_dir}" if upstream_dir else ""),
                        "nothing to fix; context_pack.py caches the trees of the refs vLLM pins")]
    entry = tree.get(path)
    if entry is None and _in_submodule(tree, path):
        return [Finding(LEVEL_NOTE, number, "UPSTREAM-UNCHECKED",
                        f"{cited}: inside a git submodule of {repo}@{ref}; its own tree is not checked",
                        "nothing to fix; the saved copy, when the pack saved one, is under the submodule's name")]
    if entry is None or entry.get("type") != "blob":
        nearest = _nearest(tree, path)
        return [Finding(LEVEL_WARNING, number, "UNKNOWN-UPSTREAM-PATH", f"{path} is not a file at {repo}@{ref}",
                        f"cite a file that exists at {repo}@{ref}"
                        + (f"; the nearest is {repo}@{ref}:{nearest}" if nearest else ""))]
    if not line_number:
        return []
    total = trees.line_count(repo, ref, path)
    if total is None:
        return [Finding(LEVEL_NOTE, number, "UPSTREAM-UNCHECKED",
                        f"{cited}: the path exists at {repo}@{ref}; the line was not checked (file not cached, offline)",
                        "nothing to fix; run check_report.py without --offline to check the line")]
    return _line_problem(number, cited, line_number, total)


def _line_problem(number, cited, line_number, total):
    if line_number and line_number > total:
        return [Finding(LEVEL_WARNING, number, "UPSTREAM-LINE", f"{cited}: the file has {total} lines",
                        "cite the line where the code is")]
    return []


def _in_submodule(tree, path):
    parts = path.split("/")
    return any((tree.get("/".join(parts[:cut])) or {}).get("type") == SUBMODULE for cut in range(1, len(parts)))


def _nearest(tree, path):
    """The real file most like ``path``: same file name first, else the closest spelling."""
    files = [candidate for candidate, entry in tree.items() if entry.get("type") == "blob"]
    name = path.rsplit("/", 1)[-1]
    same_name = [candidate for candidate in files if candidate.rsplit("/", 1)[-1] == name]
    pool = same_name or files
    close = difflib.get_close_matches(path, pool, n=1, cutoff=0.0 if same_name else 0.6)
    return close[0] if close else None
