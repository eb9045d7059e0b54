"""The AITER and mori code a PR's changed functions use, read at the version vLLM pins.

A Python wrapper rarely tells a reviewer what an upstream kernel accepts: its asserts, its
defaults, its numeric constants (fp8 max 240.0 vs 448.0), the kernel module it dispatches to,
the tuned configs it loads and, for a compiled op, the C++/HIP source do. This module reads the
pins (``ARG AITER_BRANCH=`` / ``ARG MORI_BRANCH=`` of the ROCm base Dockerfile, at the PR's base
and head), the names the changed code uses (``upstream_uses``), locates each definition at the
pinned ref and one level below it (``upstream_locate``), and saves those files for the reviewer
within a per-PR budget (``context_pack.upstream`` in references/rocm-surface.yaml). A name absent
at the pin is looked up in the later release tags: "needs AITER ≥ X; vLLM pins Y; guarded".

Statuses: ``found``; ``absent-at-pin`` (flag UPSTREAM-SYMBOL-ABSENT, with the first tag that has
it when one does); ``ref-not-found`` (flag UPSTREAM-REF-MISSING at the Dockerfile line);
``offline``; ``error`` (no pin, GitHub failed, or the trail leads into a compiled extension:
then ``path`` is the importing file).

Costs: one trees request per (repository, ref), one commits request to expand an abbreviated
SHA pin, one contents request per file not yet in the blob cache, and one tags request when a
name is absent. Everything is cached (``upstream.pinned_fetch``) and every request goes through
the client's ETag cache, so a repeated run costs no rate-limit units (a pin that names no ref
answers 404 again: 1 unit per run).
"""

import functools
import re
from pathlib import Path

from ..core.surface import load_surface
from ..github.client import GitHubError
from ..github.client import NotFound
from ..github.git_trees import tag_names
from ..upstream.pinned_fetch import PinnedFetcher
from ..upstream.pinned_fetch import RefMissing
from ..upstream.pinned_fetch import SaveBudget
from ..upstream.pinned_fetch import save_fetched
from . import upstream_locate as loc
from .upstream_uses import find_uses

MAX_SYMBOLS = 40
# What the per-PR budget saves first: the definitions at the pin, then at a later tag, then below them.
SAVE_ORDER = ("definition", "later", "kernel", "source", "config")
NOT_PINNED = "not pinned"


def build_pinned_upstream(*, read_base, read_head, added_lines, client, cache_dir, save_root, offline,
                          changed_ranges=None, limits=None):
    """The pinned-upstream section of the context pack (see the module docstring).

    ``changed_ranges`` maps a path to the head line ranges of its changed functions; ``limits``
    overrides ``context_pack.upstream`` of the surface file.
    """
    config = _pin_config()
    limits = limits or _limits()
    libraries = config["libraries"]
    pins, pin_lines = _read_pins(config["dockerfile"], libraries, read_base, read_head)
    uses = find_uses(added_lines=added_lines, changed_ranges=changed_ranges or {}, read_base=read_base,
                     read_head=read_head, libraries=libraries, probe=re.compile(limits["availability_probe"]))
    capped = len(uses) > MAX_SYMBOLS
    uses = uses[:MAX_SYMBOLS]
    requests_before = client.requests_made if client is not None else 0
    units_before = client.rate_limit_units if client is not None else 0
    flags = []
    budget = SaveBudget(limits["max_files"], limits["max_bytes"])
    if offline or client is None:
        symbols = [_entry(use, pins, "offline") for use in uses]
        note = "offline: pins read locally, upstream definitions not fetched"
    else:
        run = _Run(PinnedFetcher(client, cache_dir), save_root, budget, limits, pins, flags)
        symbols = [run.resolve(use, config["dockerfile"], pin_lines) for use in uses]
        run.save_pending()
        note = "definitions read at the pinned refs"
        if run.unresolved:
            note += (f"; {run.unresolved} symbol(s) lead outside the Python sources (a compiled extension,"
                     " another package, or past the file budget): status error, path = the importing file")
        if run.stopped:
            note += f"; stopped early: {run.stopped}"
    if capped:
        note += f"; only the first {MAX_SYMBOLS} symbols were looked up"
    return {
        "pins": pins,
        "symbols": symbols,
        "flags": flags,
        "saved_files": budget.saved,
        "cut_files": budget.cut,
        "save_root": str(save_root),
        "requests": (client.requests_made - requests_before) if client is not None else 0,
        "units": (client.rate_limit_units - units_before) if client is not None else 0,
        "note": note,
    }


@functools.cache
def _pin_config():
    """``upstream_pins`` of the surface file, read once per process (it is curated, not live)."""
    return load_surface()["upstream_pins"]


@functools.cache
def _limits():
    return load_surface()["context_pack"]["upstream"]


def fetch_upstream_file(*, client, repo, ref, path, cache_dir, save_root):
    """Save ``repo@ref:path`` under ``save_root`` and return the saved path, or None if absent.

    A path inside a git submodule (AITER's ``3rdparty/composable_kernel``) is fetched from the
    repository ``.gitmodules`` names, at the commit the superproject's tree records, and saved
    under that repository and commit. Raises ``GitHubError`` (``NotFound`` for an unknown ref).
    """
    try:
        fetched = PinnedFetcher(client, cache_dir).read(repo, ref, path)
    except RefMissing:
        raise NotFound(f"{repo} has no ref {ref}") from None
    return save_fetched(fetched, save_root, SaveBudget(1, float("inf"))) if fetched else None


# --- pins -------------------------------------------------------------------------------------


def _read_pins(dockerfile, libraries, read_base, read_head):
    """``({module: pin}, {module: head line of its ARG})`` from the Dockerfile at base and head."""
    base_text, head_text = read_base(dockerfile), read_head(dockerfile)
    pins, lines = {}, {}
    for library in libraries:
        base_ref, _ = _arg_value(base_text, library["arg"])
        head_ref, head_line = _arg_value(head_text, library["arg"])
        pins[library["module"]] = {
            "repo": library["repo"],
            "base": base_ref,
            "head": head_ref,
            "bumped": base_ref is not None and head_ref is not None and base_ref != head_ref,
        }
        lines[library["module"]] = head_line
    return pins, lines


def _arg_value(text, name):
    """``(value, line)`` of the first ``ARG name=value`` line, quotes and comments dropped."""
    pattern = re.compile(rf"^\s*ARG\s+{re.escape(name)}\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s#]+))")
    for number, line in enumerate((text or "").splitlines(), 1):
        match = pattern.match(line)
        if match:
            value = next(group for group in match.groups() if group is not None).strip()
            return (value or None), number
    return None, None


# --- one symbol ---------------------------------------------------------------------------------


def _entry(use, pins, status, **found):
    return {
        "repo": found.get("repo", use.library["repo"]),
        "ref": found.get("ref", pins[use.library["module"]]["head"]),
        "symbol": use.symbol,
        "called_at": use.called_at,
        "via": use.via,
        "change": use.change,
        "guarded": use.guarded,
        "status": status,
        "path": found.get("path"),
        "line": found.get("line"),
        "signature": found.get("signature"),
        "asserts": found.get("asserts", []),
        "constants": found.get("constants", []),
        "reexported_by": found.get("reexported_by", []),
        "saved": found.get("saved"),
        "depth": found.get("depth", []),
        "first_tag": found.get("first_tag"),
        "tags_listed": found.get("tags_listed"),
    }


class _Run:
    """One pack's lookups: the fetcher, the save budget, the tag lists, and what went wrong."""

    def __init__(self, fetcher, save_root, budget, limits, pins, flags):
        self.fetcher, self.save_root, self.budget, self.limits = fetcher, save_root, budget, limits
        self.pins, self.flags = pins, flags
        self.tags = {}
        self.pending = []
        self.stopped = None
        self.unresolved = 0

    def resolve(self, use, dockerfile, pin_lines):
        library, pins = use.library, self.pins
        repo, ref = library["repo"], pins[library["module"]]["head"]
        if ref is None or self.stopped:
            return _entry(use, pins, "error")
        try:
            found = loc.locate(self.fetcher, library, ref, use.module, use.name)
            if isinstance(found, loc.Found):
                return self._found(use, ref, found)
            if isinstance(found, loc.Outside):
                self.unresolved += 1
                if found.fetched is None:
                    return _entry(use, pins, "error")
                return _entry(use, pins, "error", repo=found.fetched.repo, ref=found.fetched.ref,
                              path=found.fetched.path, line=found.line)
            return self._absent(use, ref)
        except RefMissing:
            code = "UPSTREAM-REF-MISSING"
            message = f"{library['arg']}={ref} names no ref of {repo} (404 on its tree)"
            if not any(flag["code"] == code and flag["message"] == message for flag in self.flags):
                self.flags.append({"code": code, "path": dockerfile, "line": pin_lines[library["module"]],
                                   "message": message})
            return _entry(use, pins, "ref-not-found")
        except GitHubError as error:
            self.stopped = str(error)
            return _entry(use, pins, "error")

    def _details(self, library, ref, found):
        """Entry fields of a found definition; the files one level below it wait to be saved."""
        node = found.node
        details = {"repo": found.fetched.repo, "ref": found.fetched.ref, "path": found.fetched.path,
                   "line": node.lineno, "signature": loc.signature(node), "asserts": loc.checks(node),
                   "constants": loc.constants(node, found.tree, found.fetched.text),
                   "reexported_by": found.reexported_by, "saved": None, "depth": []}
        for kind, path in loc.depth_files(self.fetcher, library, ref, found, self.limits):
            fetched = self.fetcher.read(library["repo"], ref, path)
            if fetched is not None:
                item = {"kind": kind, "path": f"{fetched.repo}@{fetched.ref}:{fetched.path}", "saved": None}
                details["depth"].append(item)
                self._queue(kind, fetched, item)
        return details

    def _queue(self, kind, fetched, holder):
        self.pending.append((SAVE_ORDER.index(kind), len(self.pending), fetched, holder))

    def save_pending(self):
        """Save what the lookups found, pinned definitions first, until the budget is spent."""
        for _, _, fetched, holder in sorted(self.pending, key=lambda item: item[:2]):
            holder["saved"] = save_fetched(fetched, self.save_root, self.budget)

    def _found(self, use, ref, found):
        entry = _entry(use, self.pins, "found", **self._details(use.library, ref, found))
        self._queue("definition", found.fetched, entry)
        return entry

    def _absent(self, use, ref):
        library = use.library
        repo = library["repo"]
        later = None
        if repo not in self.tags:
            try:
                self.tags[repo] = tag_names(self.fetcher.client, repo)
            except GitHubError:
                self.tags[repo] = None  # the finding stands; only the first release is unknown
        if self.tags[repo]:
            later = loc.first_tag_with(self.fetcher, library, self.tags[repo], ref, use.module, use.name)
        first_tag = None
        if later is not None:
            tag, found = later
            first_tag = {"tag": tag, "path": found.fetched.path, "line": found.node.lineno,
                         "signature": loc.signature(found.node), "saved": None}
            self._queue("later", found.fetched, first_tag)
        called_path, _, called_line = use.called_at.rpartition(":")
        self.flags.append({"code": "UPSTREAM-SYMBOL-ABSENT", "path": called_path, "line": int(called_line),
                           "message": absent_message(use, repo, ref, first_tag, self.tags[repo] is not None)})
        return _entry(use, self.pins, "absent-at-pin", first_tag=first_tag, tags_listed=self.tags[repo] is not None)


def absent_message(use, repo, ref, first_tag, tags_listed=True):
    """``needs AITER ≥ X; vLLM pins Y; the import is guarded: yes/no`` for an absent name."""
    if first_tag:
        needs = f"needs {use.library['module'].upper()} ≥ {first_tag['tag']}"
    elif tags_listed:
        needs = f"no later release tag of {repo} defines it"
    else:
        needs = f"the release tags of {repo} could not be listed"
    return (f"{use.symbol} is not defined at {repo}@{ref}: {needs}; vLLM pins {ref}; "
            f"the import is guarded: {'yes' if use.guarded else 'no'}")


# --- digest ---------------------------------------------------------------------------------------


def render_pinned_upstream(section):
    """Digest lines: the pins, one block per symbol, the files saved (or none), then the cost."""
    lines = []
    for module, pin in section["pins"].items():
        if pin["bumped"]:
            where = f"{pin['repo']}@{pin['base']} -> {pin['head']} (bumped by this PR)"
        elif pin["head"]:
            where = f"{pin['repo']}@{pin['head']}"
        else:
            where = NOT_PINNED
        lines.append(f"pin {module}: {where}")
    for symbol in section["symbols"]:
        via = f" via {symbol['via']}" if symbol["via"] else ""
        guarded = ", guarded" if symbol.get("guarded") else ""
        head = f"- {symbol['symbol']} [{symbol.get('change', 'added')}{guarded}] <- {symbol['called_at']}{via}"
        if symbol["status"] == "absent-at-pin":
            later = symbol.get("first_tag")
            lines.append(f"{head}: ABSENT at {symbol['repo']}@{symbol['ref']}; "
                         + (f"first in {later['tag']}: {symbol['repo']}@{later['tag']}:{later['path']}:{later['line']}"
                            if later else "in no later release tag" if symbol.get("tags_listed")
                            else "release tags not listed"))
            continue
        if symbol["status"] != "found":
            where = f"{symbol['repo']}@{symbol['ref']}" if symbol["ref"] else f"{symbol['repo']} (no pin found)"
            if symbol["path"]:
                where += f" (imported from outside the Python sources at {symbol['path']}:{symbol['line']})"
            lines.append(f"{head}: {symbol['status'].upper()} at {where}")
            continue
        lines.append(head)
        reexported = f" (re-exported at {', '.join(symbol['reexported_by'])})" if symbol.get("reexported_by") else ""
        lines.append(f"  {symbol['repo']}@{symbol['ref']}:{symbol['path']}:{symbol['line']}{reexported}  "
                     f"{symbol['signature']}")
        if symbol["asserts"]:
            lines.append("  checks: " + " | ".join(symbol["asserts"]))
        if symbol["constants"]:
            lines.append("  constants: " + " | ".join(symbol["constants"]))
        if symbol.get("depth"):
            lines.append("  below: " + ", ".join(f"{item['kind']} {item['path'].split(':', 1)[1]}"
                                                 for item in symbol["depth"]))
    lines += _saved_lines(section)
    lines.append(f"upstream cost: {section['requests']} requests, {section['units']} rate-limit units; {section['note']}")
    return lines


def _saved_lines(section):
    """Exactly which files were saved, per repository@ref, and what the budget cut."""
    saved = section.get("saved_files") or []
    root = Path(section.get("save_root") or ".")
    lines = [f"files saved: {len(saved)} under {root}" if saved else "files saved: none"]
    groups = {}
    for path in saved:
        parts = Path(path).relative_to(root).parts
        groups.setdefault("/".join(parts[:2]), []).append("/".join(parts[2:]))
    lines += [f"  {where}: {', '.join(paths)}" for where, paths in sorted(groups.items())]
    cut = section.get("cut_files") or []
    if cut:
        lines.append(f"  not saved (over the per-PR budget): {len(cut)}: " + ", ".join(cut[:4]) + (" …" if len(cut) > 4 else ""))
    lines.append("  cite any file at the pin as OWNER/NAME@REF:PATH[:LINE], saved or not: check_report.py checks it")
    return lines
