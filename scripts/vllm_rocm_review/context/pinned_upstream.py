"""The AITER and mori code a PR calls, read at the version vLLM pins.

A Python wrapper rarely tells a reviewer what an upstream kernel accepts: its asserts, its
defaults and its numeric constants (fp8 max 240.0 vs 448.0) do. This module finds the pins
(``ARG AITER_BRANCH=`` / ``ARG MORI_BRANCH=`` of the ROCm base Dockerfile, at the PR's base and
head), the library symbols the added lines call (directly, or through the ``rocm_aiter_ops``
wrappers of ``vllm/_aiter_ops.py``), and fetches each definition from the pinned ref through
the git trees and contents APIs. Which Dockerfile, ARG names, repositories and wrapper module
apply is data: ``upstream_pins`` in references/rocm-surface.yaml.

``build_pinned_upstream(...)`` returns the section (pins, symbols, flags, cost, note) and
``render_pinned_upstream(section)`` its digest lines; ``fetch_upstream_file(...)`` saves any one
file at a pin, following git submodules (AITER's C++ kernels live in composable_kernel).
A symbol's status is ``found``, ``absent-at-pin`` (flag UPSTREAM-SYMBOL-ABSENT), ``ref-not-found``
(flag UPSTREAM-REF-MISSING at the Dockerfile line), ``offline``, or ``error`` (no pin, GitHub
failed, or the trail leads into a compiled extension: then ``path`` is the importing file).

Costs: one trees request per (repository, ref), one commits request to expand an abbreviated
SHA pin, and one contents request per file not yet in the blob cache. Files are cached by git
blob SHA under ``cache_dir`` (a tag that still points at the same commit lists the same blob
SHAs, so nothing is downloaded again), trees of a full commit SHA and expanded abbreviations
are kept for good, and every request goes through the client's ETag cache, so a repeated run
costs no rate-limit units (a pin that names no ref answers 404 again: 1 unit per run).
"""

import ast
import configparser
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from pathlib import PurePosixPath

from ..core.atomic_io import write_atomic
from ..core.surface import load_surface
from ..github.client import RAW_MEDIA_TYPE
from ..github.client import GitHubError
from ..github.client import NotFound
from ..github.git_trees import fetch_full_tree
from ..upstream.sources import git_blob_sha

# Bounds that keep a first run of a large PR to a few dozen requests.
MAX_SYMBOLS = 40
MAX_FILES_PER_SYMBOL = 16
MAX_WRAPPER_DEPTH = 4
MAX_CHECKS = 12
MAX_CONSTANTS = 10
MAX_LINE_CHARS = 200
COMMIT_SHA = re.compile(r"^[0-9a-f]{40}$")
SHORT_SHA = re.compile(r"^[0-9a-f]{7,39}$")
TRIVIAL_NUMBERS = {0, 1, -1}
GITHUB_URL = re.compile(r"github\.com[:/](?P<repo>[^/\s]+/[^/\s]+?)(?:\.git)?/?$")


class _RefMissing(Exception):
    """The pinned ref is not in the repository (404 on its tree)."""


@dataclass
class _Fetched:
    repo: str
    ref: str
    path: str
    text: str
    saved: str


def build_pinned_upstream(*, read_base, read_head, added_lines, client, cache_dir, save_root, offline):
    """The pinned-upstream section of the context pack (see the module docstring)."""
    config = _pin_config()
    libraries = config["libraries"]
    pins, pin_lines = _read_pins(config["dockerfile"], libraries, read_base, read_head)
    uses = _find_uses(added_lines, read_head, libraries)
    capped = len(uses) > MAX_SYMBOLS
    uses = uses[:MAX_SYMBOLS]
    requests_before = client.requests_made if client is not None else 0
    units_before = client.rate_limit_units if client is not None else 0
    flags = []
    if offline or client is None:
        symbols = [_symbol_entry(use, pins, status="offline") for use in uses]
        note = "offline: pins read locally, upstream definitions not fetched"
    else:
        fetcher = _Fetcher(client, Path(cache_dir), Path(save_root))
        symbols = [_resolve(use, pins, fetcher, config["dockerfile"], pin_lines, flags) for use in uses]
        note = f"definitions fetched at the pinned refs; files saved under {save_root}"
        if fetcher.unresolved:
            note += (f"; {fetcher.unresolved} symbol(s) lead outside the Python sources (a compiled extension,"
                     " another package, or past the file budget): status error, path = the importing file")
        if fetcher.stopped:
            note += f"; stopped early: {fetcher.stopped}"
    if capped:
        note += f"; only the first {MAX_SYMBOLS} symbols were looked up"
    return {
        "pins": pins,
        "symbols": symbols,
        "flags": flags,
        "requests": (client.requests_made - requests_before) if client is not None else 0,
        "units": (client.rate_limit_units - units_before) if client is not None else 0,
        "note": note,
    }


@functools.cache
def _pin_config():
    """``upstream_pins`` of the surface file, read once per process (it is curated, not live)."""
    return load_surface()["upstream_pins"]


def fetch_upstream_file(*, client, repo, ref, path, cache_dir, save_root):
    """Save ``repo@ref:path`` under ``save_root`` and return the saved path, or None if absent.

    A path inside a git submodule (AITER's ``3rdparty/composable_kernel``) is fetched from the
    repository ``.gitmodules`` names, at the commit the superproject's tree records, and saved
    under that repository and commit. Raises ``GitHubError`` (``NotFound`` for an unknown ref).
    """
    try:
        fetched = _Fetcher(client, Path(cache_dir), Path(save_root)).read(repo, ref, path)
    except _RefMissing:
        raise NotFound(f"{repo} has no ref {ref}") from None
    return fetched.saved if fetched else None


def render_pinned_upstream(section):
    """Compact digest lines: the pins, then one block per symbol, then the cost (flags go with the pack's)."""
    lines = []
    for module, pin in section["pins"].items():
        if pin["bumped"]:
            where = f"{pin['base']} -> {pin['head']} (bumped by this PR)"
        else:
            where = pin["head"] or "not pinned"
        lines.append(f"pin {module}: {pin['repo']}@{where}")
    for symbol in section["symbols"]:
        via = f" via {symbol['via']}" if symbol["via"] else ""
        head = f"- {symbol['symbol']} <- {symbol['called_at']}{via}"
        if symbol["status"] != "found":
            where = f"{symbol['repo']}@{symbol['ref']}" if symbol["ref"] else f"{symbol['repo']} (no pin found)"
            if symbol["path"]:
                where += f" (imported from outside the Python sources at {symbol['path']}:{symbol['line']})"
            lines.append(f"{head}: {symbol['status'].upper()} at {where}")
            continue
        lines.append(head)
        lines.append(f"  {symbol['repo']}@{symbol['ref']}:{symbol['path']}:{symbol['line']}  {symbol['signature']}")
        if symbol["asserts"]:
            lines.append("  checks: " + " | ".join(symbol["asserts"]))
        if symbol["constants"]:
            lines.append("  constants: " + " | ".join(symbol["constants"]))
        lines.append(f"  saved: {symbol['saved']}")
    lines.append(f"upstream cost: {section['requests']} requests, {section['units']} rate-limit units; {section['note']}")
    return lines


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


# --- which library symbols the added lines use -------------------------------------------------


@dataclass
class _Use:
    library: dict
    module: str
    name: str
    called_at: str
    via: str = None

    @property
    def symbol(self):
        return f"{self.module}.{self.name}"


def _find_uses(added_lines, read_head, libraries):
    """Library symbols imported or called on added lines, first use first, one entry each."""
    by_path = {}
    for entry in added_lines:
        by_path.setdefault(entry["path"], {})[entry["line"]] = entry["text"]
    roots = {library["module"]: library for library in libraries}
    wrappers = _Wrappers(libraries, read_head)
    needles = (*roots, *wrappers.class_names)
    uses, seen = [], set()
    for path in sorted(by_path):
        if not path.endswith(".py"):
            continue
        head_text = read_head(path)
        if not any(needle in (head_text or "\n".join(by_path[path].values())) for needle in needles):
            continue  # no library or wrapper name anywhere in the file: nothing to parse
        found = _uses_in_file(path, by_path[path], head_text, roots, wrappers)
        for line, module, name, via in sorted(found, key=lambda item: item[0]):
            key = (module, name)
            if key not in seen:
                seen.add(key)
                uses.append(_Use(roots[module.split(".")[0]], module, name, f"{path}:{line}", via))
    return uses


def _uses_in_file(path, added, head_text, roots, wrappers):
    """``(line, module, name, via)`` for every library use on the ``added`` lines of one file."""
    tree = _parse(head_text)
    if tree is None:  # no parsable head version: read the added lines on their own
        tree = _parse("\n".join(added.get(n, "") for n in range(1, max(added) + 1)))
    if tree is None:
        return []
    aliases, names = _import_maps(tree, roots)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _library_module(node.module, roots) and node.level == 0:
            for alias in node.names:
                line = getattr(alias, "lineno", node.lineno)
                if line in added and alias.name != "*":
                    found.append((line, node.module, alias.name, None))
        elif isinstance(node, ast.Call) and node.lineno in added:
            target = _call_target(node.func, aliases, names)
            if target:
                found.append((node.lineno, *target, None))
                continue
            method = _wrapper_call(node.func, wrappers.class_names)
            if method:
                for module, name in wrappers.targets(method):
                    found.append((node.lineno, module, name, f"{wrappers.class_of(method)}.{method}"))
        elif isinstance(node, ast.Attribute) and node.lineno in added and isinstance(node.value, ast.Name):
            module = aliases.get(node.value.id, "")
            if "." in module:  # `import aiter.ops.x as m` then `m.CONFIG`: a name of that module
                found.append((node.lineno, module, node.attr, None))
    return found


def _library_module(module, roots):
    return bool(module) and module.split(".")[0] in roots


def _import_maps(tree, roots):
    """``(aliases, names)``: local name -> module for ``import``, -> (module, name) for ``from``."""
    aliases, names = {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _library_module(alias.name, roots):
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        aliases[root] = root
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _library_module(node.module, roots):
            for alias in node.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = (node.module, alias.name)
    return aliases, names


def _call_target(func, aliases, names):
    """``(module, name)`` a call resolves to through the file's library imports, or None."""
    if isinstance(func, ast.Name):
        return names.get(func.id)
    chain = _attribute_chain(func)
    if chain and len(chain) >= 2:
        if chain[0] in aliases:
            return ".".join([aliases[chain[0]], *chain[1:-1]]), chain[-1]
        if chain[0] in names:
            module, name = names[chain[0]]
            return ".".join([module, name, *chain[1:-1]]), chain[-1]
    return None


def _attribute_chain(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _wrapper_call(func, class_names):
    chain = _attribute_chain(func)
    if chain and len(chain) == 2 and chain[0] in class_names:
        return chain[1]
    return None


class _Wrappers:
    """The wrapper classes (``rocm_aiter_ops``) and what each method calls in its library.

    A method reaches the library directly (``from aiter import X`` in its body, then ``X(...)``),
    through a registered custom op (``torch.ops.vllm.<op>(...)`` -> the ``op_func`` given to
    ``direct_register_custom_op``), or through another method or module function of the file.
    """

    def __init__(self, libraries, read_head):
        self.methods, self.functions, self.ops = {}, {}, {}
        self.module_aliases, self.module_names = {}, {}
        self.roots = {library["module"]: library for library in libraries}
        self._class_of = {}
        self.class_names = set()
        for library in libraries:
            if not library.get("wrappers"):
                continue
            tree = _parse(read_head(library["wrappers"]))
            if tree is None:
                continue
            self.class_names.add(library["wrapper_class"])
            imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
            aliases, names = _import_maps(ast.Module(body=imports, type_ignores=[]), self.roots)
            self.module_aliases.update(aliases)
            self.module_names.update(names)
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.functions[node.name] = node
                elif isinstance(node, ast.ClassDef) and node.name == library["wrapper_class"]:
                    for item in node.body:
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            self.methods[item.name] = item
                            self._class_of[item.name] = node.name
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and _attribute_chain(node.func) == ["direct_register_custom_op"]:
                    keywords = {keyword.arg: keyword.value for keyword in node.keywords}
                    op, func = keywords.get("op_name"), keywords.get("op_func")
                    if isinstance(op, ast.Constant) and isinstance(func, ast.Name):
                        self.ops[op.value] = func.id

    def class_of(self, method):
        return self._class_of.get(method, "")

    def targets(self, method):
        if method not in self.methods:
            return []
        found = []
        self._walk(self.methods[method], 0, set(), found)
        return found

    def _walk(self, function, depth, visited, found):
        if depth > MAX_WRAPPER_DEPTH or id(function) in visited:
            return
        visited.add(id(function))
        local_aliases, local_names = _import_maps(function, self.roots)
        aliases = {**self.module_aliases, **local_aliases}
        names = {**self.module_names, **local_names}
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            target = _call_target(node.func, aliases, names)
            if target:
                if target not in found:
                    found.append(target)
                continue
            chain = _attribute_chain(node.func) or []
            callee = None
            if chain[:3] == ["torch", "ops", "vllm"] and len(chain) >= 4:
                callee = self.functions.get(self.ops.get(chain[3], ""))
            elif len(chain) == 2 and (chain[0] in self.class_names or chain[0] == "cls"):
                callee = self.methods.get(chain[1])
            elif len(chain) == 1:
                callee = self.functions.get(chain[0])
            if callee is not None:
                self._walk(callee, depth + 1, visited, found)


# --- fetching at the pinned ref -----------------------------------------------------------------


class _Fetcher:
    """Trees and files of (repository, ref) pairs, with the blob cache and saved copies."""

    def __init__(self, client, cache_dir, save_root):
        self.client = client
        self.cache_dir = cache_dir
        self.save_root = save_root
        self.trees = {}
        self.commits = {}
        self.stopped = None
        self.unresolved = 0

    def tree(self, repo, ref):
        """``{path: entry}`` of the whole tree at ``ref``; raises _RefMissing on a 404."""
        key = (repo, ref)
        if key not in self.trees:
            self.trees[key] = self._load_tree(repo, ref)
        if self.trees[key] is None:
            raise _RefMissing(ref)
        return self.trees[key]

    def commit_of(self, repo, ref):
        """The full commit SHA for an abbreviated one (the trees and contents APIs want it whole).

        Kept in the cache: the commit an abbreviation named once stays that commit.
        """
        if not SHORT_SHA.match(ref):
            return ref
        stored = self.cache_dir / "commits" / repo / ref
        if (repo, ref) not in self.commits:
            try:
                self.commits[(repo, ref)] = stored.read_text(encoding="ascii").strip()
            except OSError:
                self.commits[(repo, ref)] = self._full_sha(repo, ref)
                if self.commits[(repo, ref)] != ref:
                    _store(stored, self.commits[(repo, ref)].encode("ascii"))
        return self.commits[(repo, ref)]

    def _full_sha(self, repo, ref):
        try:
            data = self.client.get_json(f"/repos/{repo}/commits/{ref}")
        except GitHubError as error:
            if error.status not in (404, 422):  # GitHub answers 422 "No commit found for SHA"
                raise
            return ref  # no such commit: the tree request decides, and a 404 there is the finding
        full = data.get("sha") if isinstance(data, dict) else None
        return full if isinstance(full, str) and COMMIT_SHA.match(full) else ref

    def _load_tree(self, repo, ref):
        ref = self.commit_of(repo, ref)
        stored = self.cache_dir / "trees" / repo / f"{ref}.json"
        if COMMIT_SHA.match(ref):
            try:
                return json.loads(stored.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                pass
        try:
            data = self.client.get_json(f"/repos/{repo}/git/trees/{ref}", params={"recursive": "1"})
        except NotFound:
            return None
        entries = data.get("tree") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise GitHubError(f"GET /repos/{repo}/git/trees/{ref}: the answer has no tree list")
        if data.get("truncated"):
            entries = fetch_full_tree(self.client, repo, data["sha"])
        tree = {entry["path"]: {"type": entry.get("type"), "sha": entry.get("sha")} for entry in entries}
        if COMMIT_SHA.match(ref):
            _store(stored, json.dumps(tree).encode("utf-8"))
        return tree

    def read(self, repo, ref, path):
        """The file at ``path`` (following a submodule entry on the way), or None if absent."""
        tree = self.tree(repo, ref)
        entry = tree.get(path)
        if entry is None:
            return self._read_in_submodule(repo, ref, path, tree)
        if entry["type"] != "blob":
            return None
        data = self._blob(repo, self.commit_of(repo, ref), path, entry["sha"])
        saved = self.save_root.joinpath(*repo.split("/")[:-1], f"{repo.split('/')[-1]}@{ref.replace('/', '_')}", path)
        write_atomic(saved, data)
        return _Fetched(repo, ref, path, data.decode("utf-8", errors="replace"), str(saved))

    def _read_in_submodule(self, repo, ref, path, tree):
        parts = PurePosixPath(path).parts
        for cut in range(len(parts) - 1, 0, -1):
            prefix = "/".join(parts[:cut])
            entry = tree.get(prefix)
            if entry is None:
                continue
            if entry["type"] != "commit":
                return None
            target = self._submodule_repo(repo, ref, prefix)
            if target is None:
                return None
            return self.read(target, entry["sha"], "/".join(parts[cut:]))
        return None

    def _submodule_repo(self, repo, ref, prefix):
        """OWNER/NAME of the submodule at ``prefix``, from ``.gitmodules`` at the ref."""
        gitmodules = self.read(repo, ref, ".gitmodules")
        if gitmodules is None:
            return None
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(gitmodules.text)
        except configparser.Error:
            return None
        for section in parser.sections():
            if parser.get(section, "path", fallback="").strip().strip("/") == prefix:
                url = parser.get(section, "url", fallback="").strip()
                match = GITHUB_URL.search(url)
                if match:
                    return match.group("repo")
                if url.startswith("../"):  # relative to the superproject's owner
                    return f"{repo.split('/')[0]}/{url[3:].removesuffix('.git')}"
        return None

    def _blob(self, repo, ref, path, sha):
        stored = self.cache_dir / "blobs" / sha[:2] / sha
        try:
            return stored.read_bytes()
        except OSError:
            pass
        data = self.client.get_bytes(f"/repos/{repo}/contents/{path}", params={"ref": ref}, accept=RAW_MEDIA_TYPE)
        if git_blob_sha(data) == sha:
            _store(stored, data)
        return data


def _store(path, data):
    try:
        write_atomic(path, data)
    except OSError:
        pass  # an unwritable cache only costs requests next time


# --- one symbol ---------------------------------------------------------------------------------


def _symbol_entry(use, pins, status, **found):
    return {
        "repo": found.get("repo", use.library["repo"]),
        "ref": found.get("ref", pins[use.library["module"]]["head"]),
        "symbol": use.symbol,
        "called_at": use.called_at,
        "via": use.via,
        "status": status,
        "path": found.get("path"),
        "line": found.get("line"),
        "signature": found.get("signature"),
        "asserts": found.get("asserts", []),
        "constants": found.get("constants", []),
        "saved": found.get("saved"),
    }


def _resolve(use, pins, fetcher, dockerfile, pin_lines, flags):
    repo, ref = use.library["repo"], pins[use.library["module"]]["head"]
    called_path, _, called_line = use.called_at.rpartition(":")
    if ref is None:
        return _symbol_entry(use, pins, "error")
    if fetcher.stopped:
        return _symbol_entry(use, pins, "error")
    try:
        found = _locate(fetcher, use.library, ref, use.module, use.name)
    except _RefMissing:
        code = "UPSTREAM-REF-MISSING"
        if not any(flag["code"] == code and ref in flag["message"] and repo in flag["message"] for flag in flags):
            flags.append({
                "code": code,
                "path": dockerfile,
                "line": pin_lines[use.library["module"]],
                "message": f"{use.library['arg']}={ref} names no ref of {repo} (404 on its tree)",
            })
        return _symbol_entry(use, pins, "ref-not-found")
    except GitHubError as error:
        fetcher.stopped = str(error)
        return _symbol_entry(use, pins, "error")
    if isinstance(found, _Outside):
        fetcher.unresolved += 1
        if found.fetched is None:
            return _symbol_entry(use, pins, "error")
        return _symbol_entry(use, pins, "error", repo=found.fetched.repo, ref=found.fetched.ref,
                             path=found.fetched.path, line=found.line, saved=found.fetched.saved)
    if found is None:
        flags.append({
            "code": "UPSTREAM-SYMBOL-ABSENT",
            "path": called_path,
            "line": int(called_line),
            "message": f"{use.symbol} is not defined at {repo}@{ref} (a hallucinated or newer API than the pin)",
        })
        return _symbol_entry(use, pins, "absent-at-pin")
    fetched, node, tree = found
    return _symbol_entry(
        use,
        pins,
        "found",
        repo=fetched.repo,
        ref=fetched.ref,
        path=fetched.path,
        line=node.lineno,
        signature=_signature(node),
        asserts=_checks(node),
        constants=_constants(node, tree, fetched.text),
        saved=fetched.saved,
    )


def _locate(fetcher, library, ref, module, name):
    """Where ``module.name`` is defined at ``ref``: ``(fetched file, node, module tree)``, an
    ``_Outside`` when the trail leaves the library's Python sources, or None when it is absent.

    Starts at the module's own file and follows the re-exports it makes (``from .x import name``
    and ``from .x import *``, the way ``aiter/__init__.py`` exposes its ops), best-named first.
    """
    tree = fetcher.tree(library["repo"], ref)
    while "." in module and not any(path in tree for path in _module_files(library, module)):
        module, name = module.rsplit(".", 1)  # `Class.member(...)`: the class is the definition to read
    queue = [(path, name) for path in _module_files(library, module)]
    visited = set()
    outside = None
    while queue and len(visited) < MAX_FILES_PER_SYMBOL:
        path, wanted = queue.pop(0)
        if (path, wanted) in visited:
            continue
        visited.add((path, wanted))
        fetched = fetcher.read(library["repo"], ref, path)
        parsed = _parse(fetched.text) if fetched else None
        if parsed is None:
            continue
        node = _definition(parsed, wanted)
        if node is not None:
            return fetched, node, parsed
        package = _package_of(library, path)
        explicit, starred = [], []
        for statement in _top_level(parsed.body):
            if not isinstance(statement, ast.ImportFrom):
                continue
            relevant = [alias for alias in statement.names if alias.name == "*" or (alias.asname or alias.name) == wanted]
            if not relevant:
                continue
            source = _absolute_module(package, statement)
            files = [candidate for candidate in _module_files(library, source or "") if candidate in tree]
            if source is None or not _library_module(source, {library["module"]: library}) or not files:
                outside = outside or _Outside(fetched, statement.lineno)  # a compiled extension or another package
                continue
            for alias in relevant:
                if alias.name == "*":
                    starred.extend((candidate, wanted) for candidate in files)
                else:
                    explicit.extend((candidate, alias.name) for candidate in files)
        starred.sort(key=lambda item: -_shared_words(item[0], wanted))
        queue = explicit + queue + starred
    if queue and outside is None:
        outside = _Outside(None, None)  # the file budget ran out before the trail ended
    return outside


@dataclass
class _Outside:
    """The definition lies beyond the Python sources: ``fetched`` file and ``line`` import it."""

    fetched: _Fetched
    line: int


def _module_files(library, module):
    parts = module.split(".")[1:]
    base = "/".join([library["package_dir"], *parts])
    if not parts:
        return [f"{base}/__init__.py"]
    return [f"{base}.py", f"{base}/__init__.py"]


def _package_of(library, path):
    """The dotted package a file in the library belongs to (its own name for ``__init__.py``)."""
    relative = PurePosixPath(path).relative_to(library["package_dir"]).parts
    return ".".join([library["module"], *relative[:-1]])


def _absolute_module(package, statement):
    if statement.level == 0:
        return statement.module
    parts = package.split(".")
    if statement.level > len(parts):
        return None
    base = parts[: len(parts) - statement.level + 1]
    return ".".join(base + ([statement.module] if statement.module else []))


def _shared_words(path, name):
    words = set(re.split(r"[^a-z0-9]+", path.lower()))
    return len(words & set(name.lower().split("_")))


def _top_level(statements):
    """Module-level statements, looking inside top-level ``if`` / ``try`` blocks."""
    for statement in statements:
        yield statement
        if isinstance(statement, ast.If):
            yield from _top_level(statement.body + statement.orelse)
        elif isinstance(statement, ast.Try):
            yield from _top_level(statement.body + statement.orelse + statement.finalbody)


def _definition(tree, name):
    for statement in _top_level(tree.body):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and statement.name == name:
            return statement
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(isinstance(target, ast.Name) and target.id == name for target in targets):
                return statement
    return None


def _signature(node):
    decorators = "".join(f"@{ast.unparse(decorator)} " for decorator in getattr(node, "decorator_list", []))
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
        text = f"{decorators}def {node.name}({ast.unparse(node.args)}){returns}"
    elif isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(base) for base in node.bases)
        text = f"{decorators}class {node.name}({bases})"
        init = next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
        if init is not None:
            text += f"; __init__({ast.unparse(init.args)})"
    else:
        text = ast.unparse(node)
    return _one_line(text, 400)


def _checks(node):
    """The asserts and raises in the definition's body, ``L<line> <statement>``."""
    found = []
    for child in ast.walk(node):
        if isinstance(child, (ast.Assert, ast.Raise)):
            found.append((child.lineno, _one_line(ast.unparse(child))))
    return [f"L{line} {statement}" for line, statement in sorted(found)[:MAX_CHECKS]]


def _constants(node, tree, text):
    """Source lines of the definition (and module constants it names) holding numeric literals."""
    source = text.splitlines()
    lines = set()
    defaults = {id(d) for d in ast.walk(node.args) if isinstance(d, ast.Constant)} if hasattr(node, "args") else set()
    used_names = {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}
    for child in ast.walk(node):
        if _is_number(child) and id(child) not in defaults:
            lines.add(child.lineno)
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and _is_number(statement.value):
            if any(isinstance(target, ast.Name) and target.id in used_names for target in statement.targets):
                lines.add(statement.lineno)
    return [f"L{line} {_one_line(source[line - 1].strip())}" for line in sorted(lines)[:MAX_CONSTANTS] if line <= len(source)]


def _is_number(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
        and node.value not in TRIVIAL_NUMBERS
    )


def _parse(text):
    if not text:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _one_line(text, limit=MAX_LINE_CHARS):
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
