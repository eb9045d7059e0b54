"""The pack as a Markdown digest of at most ``max_lines`` lines; the JSON keeps everything."""

import ast

from .pinned_upstream import render_pinned_upstream
from .symbols import signature_arguments

DEFAULT_MAX_LINES = 150
COMMON_NAME_SITES = 60
TEST_PREFIX = "tests/"
SIGNATURE_CHARS = 90


def render_digest(pack, json_name, max_lines=DEFAULT_MAX_LINES):
    meta = pack["meta"]
    head = [f"# Context pack for PR #{pack['pr']['number']}: {pack['pr']['title']}",
            f"mode {meta['mode']}, base {str(meta['base_sha'])[:12]}, head {str(meta['head_sha'])[:12]}; "
            f"everything in {json_name}"]
    head += [f"not possible: {item}" for item in meta["not_possible"]]
    head += _code_map(pack.get("code_map") or {})
    if "pins" not in pack["upstream"]:
        head.append("pinned upstream code (AITER/mori): not collected")
    sections = [
        ("Pinned upstream (AITER/mori)", render_pinned_upstream(pack["upstream"]) if "pins" in pack["upstream"] else []),
        ("Flags", [f"- {f['code']} {f['path']}{':' + str(f['line']) if f['line'] else ''}: {f['message']}"
                   for f in pack["flags"]]),
        ("Changed symbols (product code first)",
         [_symbol(s) for s in sorted(pack["symbols"], key=lambda s: s["path"].startswith(TEST_PREFIX))]),
        ("Callers at head (outside the diff first)", _callers(pack["callers"])),
        ("Twins", _twins(pack["twins"])),
        ("Env vars", [_env(name, info) for name, info in pack["env_vars"].items()]),
        ("CI coverage (AMD steps at head)", _coverage(pack["ci_coverage"])),
        ("Custom ops", [f"- {o['path']}:{o['line']} {o['op']}: impl {o['impl']}, mutates_args {o['mutates_args']}, "
                        f"fake {o['fake_impl']}, returns inputs {o['returns_inputs'] or 'none'}"
                        for o in pack["custom_ops"]]),
        ("Hot-path copies", [f"- {c['path']}:{c['line']} {c['op']} on {c['tensor'] or 'new tensor'} ({c['role']}) "
                             f"in {c['function']}" for c in pack["hot_path_copies"]]),
        ("Undone fixes (recent fixes whose lines the PR deletes)", [_fix(e) for e in pack.get("undone_fixes") or []]),
        ("Platform twins (changed method against its twin)", [_platform(e) for e in pack.get("platform_twins") or []]),
        ("Call sites of changed parameters", [_call_sites(e) for e in pack.get("stale_call_sites") or []]),
    ]
    sections = [(title, items) for title, items in sections if items]
    budget = max_lines - len(head) - 2 * len(sections)
    cap = _cap([len(items) for _, items in sections], budget)
    lines = list(head)
    for title, items in sections:
        lines += ["", f"## {title} ({len(items)})"]
        shown = items if len(items) <= cap else items[:max(cap - 1, 0)]
        lines += shown
        if len(shown) < len(items):
            lines.append(f"- … {len(items) - len(shown)} more in the JSON")
    return "\n".join(lines[:max_lines]) + "\n"


def _code_map(summary):
    """One line naming the code map, when one was written."""
    if "path" not in summary:
        return []
    cut = f"; {len(summary['cut'])} block(s) cut, listed at its top" if summary["cut"] else ""
    return [f"code map: {summary['path']} ({summary['lines']} lines: {summary['definitions']} definitions, "
            f"{summary['hunks']} hunk runs{cut}); each lens starts there"]


def _cap(sizes, budget):
    """The largest per-section item count that keeps the sections within ``budget`` lines."""
    if sum(sizes) <= budget:
        return max(sizes, default=0)
    low, high = 1, max(sizes)
    while low < high:
        middle = (low + high + 1) // 2
        if sum(min(size, middle) for size in sizes) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def _symbol(entry):
    sides = " → ".join(f"{side} {entry[side]['start']}-{entry[side]['end']}" for side in ("base", "head") if entry[side])
    text = f"- {entry['path']} {entry['qualname']} [{entry['kind']}, {entry['change']}] {sides}"
    if entry["signature_changed"]:
        text += "; signature " + _signature_delta(entry["base"]["signature"], entry["head"]["signature"])
    return text


def _parameters(signature):
    """The parameter texts and return annotation of a ``def`` signature, or None for anything else."""
    node = signature_arguments(signature)
    if node is None:
        return None
    args = node.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    texts = [_parameter(arg, default) for arg, default in zip(positional, defaults)]
    texts += [_parameter(arg, default) for arg, default in zip(args.kwonlyargs, args.kw_defaults)]
    texts += [f"*{args.vararg.arg}"] if args.vararg else []
    texts += [f"**{args.kwarg.arg}"] if args.kwarg else []
    return texts, ast.unparse(node.returns) if node.returns else None


def _parameter(arg, default):
    text = arg.arg + (f": {ast.unparse(arg.annotation)}" if arg.annotation else "")
    return text + (f"={ast.unparse(default)}" if default is not None else "")


def _signature_delta(before, after):
    """What changed between two signatures: removed (-) and added (+) parameters, return type."""
    old, new = _parameters(before), _parameters(after)
    if old is None or new is None:
        return f"{_clip(before)} → {_clip(after)}"
    changes = [f"-{p}" for p in old[0] if p not in new[0]] + [f"+{p}" for p in new[0] if p not in old[0]]
    if old[1] != new[1]:
        changes.append(f"returns {old[1]} → {new[1]}")
    return ", ".join(changes) or "reordered"


def _clip(text, limit=SIGNATURE_CHARS):
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _callers(callers):
    """Most specific names first; a name with more than COMMON_NAME_SITES sites gets no site list."""
    if not callers:
        return []
    lines = []
    for name, info in sorted(callers.items(), key=lambda item: (item[1]["total"], item[0])):
        if info["total"] > COMMON_NAME_SITES:
            lines.append(f"- {name}: {info['total']} site(s), too common a name to list here")
            continue
        sites = ", ".join(f"{s['path']}:{s['line']}" + ("" if not s["in_diff"] else " (in diff)") for s in info["sites"][:4])
        more = info["total"] - min(4, len(info["sites"]))
        lines.append(f"- {name}: {info['total']} site(s), {info['outside_diff']} outside the diff"
                     + (f": {sites}" if sites else "") + (f" (+{more} more)" if more > 0 else ""))
    return lines


def _twins(twins):
    return [f"- {t['family']} {t['name']}: changed in {len(t['changed_in'])}, unchanged twins "
            f"{len(t['unchanged_twins'])}" + (f": {', '.join(t['unchanged_twins'][:3])}" if t["unchanged_twins"] else "")
            + (" …" if len(t["unchanged_twins"]) > 3 else "") for t in twins or []]


def _registration(side):
    if side == "unknown":
        return "unknown"
    return f"default {side['default']} (envs.py:{side['line']})" if side else "unregistered"


def _env(name, info):
    uses = sorted({f"{u['kind']}{'+' if u['side'] == 'added' else '-'}" for u in info["uses"]})
    readers = info["readers_at_head"]
    reader_text = "unknown" if readers == "unknown" else str((readers or {}).get("total", 0))
    return (f"- {name} [{', '.join(uses) or 'registry default'}]: base {_registration(info['base'])}; "
            f"head {_registration(info['head'])}; readers at head {reader_text}")


def _coverage(coverage):
    return [f"- {path}: " + ("; ".join(steps[:3]) + (f" (+{len(steps) - 3} more)" if len(steps) > 3 else "")
                             if steps else "NOT run by any AMD step") for path, steps in (coverage or {}).items()]


def _fix(entry):
    dropped = [line for line in entry["lines"] if not line["re_added"]]
    where = f"; moved to {entry['moved_to']}" if entry["moved_to"] else ""
    text = (f"- {entry['path']}:{entry['lines'][0]['line']} {entry['commit']} {entry['date']} "
            f"\"{_clip(entry['subject'], 70)}\": {len(entry['lines']) - len(dropped)} of {len(entry['lines'])} "
            f"deleted line(s) re-added{where}")
    return text + (f"; dropped `{_clip(dropped[0]['text'], 60)}`" if dropped else "")


def _platform(entry):
    gaps = [f"PR adds, twin lacks {', '.join(entry['added_here_twin_lacks'])}"] if entry["added_here_twin_lacks"] else []
    gaps += [f"PR removes, twin keeps {', '.join(entry['removed_here_twin_keeps'])}"] if entry["removed_here_twin_keeps"] else []
    gaps += [f"standing: twin only {', '.join(entry['standing_twin_only'][:3])}"] if entry["standing_twin_only"] else []
    return f"- {entry['path']}:{entry['line']} {entry['method']} vs {entry['twin']}: " + ("; ".join(gaps) or "no step differs")


def _call_sites(entry):
    sites = f": {', '.join(entry['stale_sites'][:3])}" if entry["stale_sites"] else ""
    return (f"- {entry['function']} `{entry['parameter']}` {entry['change']}: {entry['passing']} of "
            f"{entry['call_sites']} call site(s) pass it; {entry['stale_outside_diff']} outside the diff do not{sites}")
