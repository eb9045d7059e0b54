"""The code map's page: a header that says how to read it and what was left out, then the blocks by file.

Blocks are kept in priority order (product definitions, then product hunks, then twins, then
tests, docs, benchmarks and examples; each in file order) while they fit the line cap; a block that does
not fit is cut whole, and a later, smaller one may still fit. Only the list of what was cut
(one line per file) can take the page past the cap.
"""

MAX_UNMAPPED_NAMES = 12


def render_code_map(pack, blocks, missing, unmapped, settings, max_lines):
    """``(text, kept blocks, cut blocks)`` for the page of at most ``max_lines`` lines."""
    cut_lines = 0
    while True:
        head = _header(pack, missing, unmapped, settings, max_lines)
        kept, cut = _select(blocks, max_lines - len(head) - cut_lines)
        cut_section = _cut_section(cut, max_lines)
        if len(cut_section) <= cut_lines or max_lines - len(head) - len(cut_section) <= 0:
            break
        cut_lines = len(cut_section)
    lines = head + cut_section
    current = None
    for block in sorted(kept, key=lambda b: b.page_rank()):
        if block.path != current:
            current = block.path
            lines += ["", f"## {block.path}"]
        lines += [""] + block.lines
    counts = {kind: sum(1 for b in kept if b.kind == kind) for kind in ("definition", "hunks", "twins")}
    lines[1] = lines[1].format(files=len({b.path for b in kept}), **counts)
    return "\n".join(lines) + "\n", kept, cut


def _header(pack, missing, unmapped, settings, max_lines):
    meta = pack["meta"]
    lines = [f"# Code map for PR #{pack['pr']['number']}: {pack['pr']['title']}",
             f"base {str(meta['base_sha'])[:12]}, head {str(meta['head_sha'])[:12]}; "
             "{definition} definitions, {hunks} hunk runs and {twins} twin blocks from {files} files; "
             f"at most {max_lines} lines",
             "Head text is numbered by head line. A modified definition's base is shown in full when it has at "
             f"most {settings['base_in_full_up_to']} lines or its diff would be as long, else as a base→head diff. "
             "A class shows as its outline; its changed methods have their own blocks. Callers are call lines at "
             "head; twins and the pinned upstream definitions called are shown as text. Open other code only to "
             "verify."]
    lines += [f"missing: {item}" for item in missing]
    if unmapped:
        names = ", ".join(unmapped[:MAX_UNMAPPED_NAMES])
        more = f" (+{len(unmapped) - MAX_UNMAPPED_NAMES} more)" if len(unmapped) > MAX_UNMAPPED_NAMES else ""
        lines.append(f"not mapped (neither Python nor a context_pack.code_map.hunk_globs file): {names}{more}")
    return lines


def _select(blocks, budget):
    kept, cut, files, used = [], [], set(), 0
    for block in sorted(blocks, key=lambda b: b.keep_rank()):
        cost = len(block.lines) + 1 + (0 if block.path in files else 2)
        if used + cost <= budget:
            kept.append(block)
            files.add(block.path)
            used += cost
        else:
            cut.append(block)
    return kept, cut


def _cut_section(cut, max_lines):
    if not cut:
        return []
    by_path = {}
    for block in cut:
        by_path.setdefault(block.path, []).append(block)
    lines = [f"cut to fit {max_lines} lines: {len(cut)} block(s) of {sum(len(b.lines) for b in cut)} lines "
             "(open them in the clone if a lens needs them):"]
    lines += [f"- {path}: " + ", ".join(f"{b.name} ({len(b.lines)} lines)" for b in sorted(found, key=lambda b: b.start))
              for path, found in sorted(by_path.items())]
    return lines
