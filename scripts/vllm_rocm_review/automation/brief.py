"""The review brief (outputs/pr-N-brief.md): the one page a reviewing agent reads after prepare_review.py.

It folds the triage result, the context pack's flags and the version skew into at most
``MAX_LINES`` lines: what needs an answer, the reading plan as a checklist with catalog line
ranges, the lenses of a deep review, the next commands and where everything else is. Headings and
the facts quoted from triage and the pack stay in English, as in the triage digest; the
instructions follow ``lang`` (``zh`` default, ``en``), the language of the report.
"""

from ..core.catalog import RULE_ANCHOR_PREFIX
from ..core.catalog import parse_catalog
from ..triage.digest import clip
from ..triage.digest import describe_check_item
from ..triage.digest import is_flagged

MAX_LINES = 200
FILES_SHOWN = 6
QUIET_STATES = ("ok", "none-found")
ALL_ITEMS_NEED_ANSWER = ("mori-symbols", "magic-constants", "ci", "prompt-injection", "context")
BUILD_KINDS = ("ci", "build")

PHRASES = {
    "zh": {
        "language": "中文",
        "languages": "标题和引用的事实为英文，说明为中文",
        "full": "完整评审：第 3–8 步。",
        "partial": "按文件限定范围：ROCm 文件按 ROCm 规则审；共享文件检查跨后端回归。",
        "none": "轻量路径：只做第 3 步、housekeeping 和结论；在报告头和结论里写明 ROCm 不相关。",
        "overrule": "只有能举出证据时才推翻此判断，并在报告中说明。",
        "since": "只审这些改动；未变的旧意见在新 head 上确认仍成立后才沿用。",
        "skew_within": "在 {max_days} 天以内：目录中的平台事实按原文适用。",
        "skew_unknown": "无法得知 PR base 的提交日期（没有 clone）；若 base 与 {commit} 相差超过 {max_days} 天，"
                        "先在 PR 自己的提交上复核下列事实。",
        "skew_recheck": "依赖下列目录事实前，先在 PR 的 base/head 上复核（git show <sha>:<path>）：",
        "skew_surface": "triage 的路径事实（references/rocm-surface.yaml：tiers、共享面、hipify 的 csrc 列表）也描述 {commit}："
                        "文件在 PR 的 base 上若在别的路径，可能被漏分级。",
        "depth_quick": "快速评审：单次通读，不用 lens。",
        "depth_deep": "深度评审（{reasons}）：按下方 lens 并行，再做一次验证。",
        "gate_build": "🔴 门槛（CI/构建/打包改动）：写明会坏的构建、流水线步骤或平台（如某 gfx 目标的 ROCm 镜像构建、某个 AMD CI 步骤、"
                      "某 ROCm/Python 版本），而不是 shape 或 dtype；说不出来就降为 ⚠️。",
        "gate_code": "🔴 门槛：写明触发输入（shape、dtype、arch 或配置），否则降为 ⚠️ 或删除。",
        "answers": "报告里逐条回答或提问（用文字，不写内部代号）；NOTICE 表示那部分没有检查，不能当作干净。",
        "no_answers": "没有需要回答的检查或标记。",
        "clear": "无需处理",
        "plan": "探索之后再扫一遍。只有当某行的关注点可能适用时才按行号打开（Read 的 offset/limit）；"
                "◆ 表示 diff 中有它的触发点，应打开。",
        "once": "每个会话读一次",
        "over_budget": "超出 {budget:.0%} 预算、降为清单行：{rules}",
        "lenses_none": "快速评审不用 lens。",
        "lenses_capped": "深度评审，但 lens 上限为 0：单次通读。",
        "lenses": "每个 lens 一个子代理（或依次执行）：给它 lens-common 和该 lens 的文本（按行号）、本 brief、上下文包和 PR JSON 的路径。"
                  "然后自己做一次验证：每个 🔴/⚠️ 候选都要有决定，写入 {validated}。",
        "commands": "依次运行：",
        "scaffold": "报告骨架（替换每一行 TODO(agent)）：",
        "merge": "深度评审：先合并 lens 结果，骨架加 --findings：",
        "check": "检查一次，修正每个错误：",
        "files": "其余文件（需要时再读）：",
        "pack_md": "上下文包摘要：在读代码之前读（调用点、孪生实现、环境变量、pin 住的 AITER/mori 代码、CI 覆盖）",
        "pack_json": "上下文包全部内容",
        "code_map": "代码图：改动的函数（head 与 base）、调用行、孪生实现、pin 住的上游定义；探索与每个 lens 从这里开始",
        "triage": "triage 摘要（本 brief 的来源）",
        "pr_json": "PR 文档（正文、评论、review、CI）",
        "clone": "代码：clone {path}，head {head}，base {base}（git -C {path} show {head}:<path>）",
        "sources": "代码：head 版本在 {path}/<path>；base 侧只有 diff 的 - 行，依赖未读 base 代码的结论标 [推测]",
        "upstream": "pin 住的上游代码（AITER/mori）",
        "example": "范例报告：会话中的第一次评审前读一次（风格参照）",
        "warnings": "抓取警告：",
        "not_possible": "上下文包未能收集：{what}；这些请手工检查。",
    },
    "en": {
        "language": "English",
        "languages": "headings, quoted facts and instructions in English",
        "full": "Full review: steps 3-8.",
        "partial": "Scoped per file: ROCm files get the ROCm rules; shared files need a cross-backend regression check.",
        "none": "Light path: step 3, housekeeping and the verdict only; say in the header and the verdict that the PR "
                "is not ROCm-relevant.",
        "overrule": "Overrule the gate only with evidence you can name, and say so in the report.",
        "since": "Review these changes only; carry an unchanged earlier finding over after confirming it at the new head.",
        "skew_within": "Within {max_days} days: the catalog's platform facts apply as written.",
        "skew_unknown": "The PR base's commit date is unknown (no clone); if the base is more than {max_days} days from "
                        "{commit}, re-check these facts at the PR's own commits first.",
        "skew_recheck": "Re-check these catalog facts at the PR's base and head before relying on them "
                        "(git show <sha>:<path>):",
        "skew_surface": "Triage's path facts (references/rocm-surface.yaml: tiers, shared surface, hipified csrc lists) "
                        "describe {commit} too: a file at another path at the PR's base may be missed.",
        "depth_quick": "Quick review: one pass, no lenses.",
        "depth_deep": "Deep review ({reasons}): run the lenses below, then one validator pass.",
        "gate_build": "🔴 gate (CI, build or packaging changes): name the build, pipeline step or platform that breaks (the ROCm "
                      "image build for a gfx target, a named AMD CI step, a ROCm or Python version), not a shape or dtype; "
                      "if you cannot, downgrade to ⚠️.",
        "gate_code": "🔴 gate: name the triggering input (shape, dtype, arch or config), else downgrade to ⚠️ or drop it.",
        "answers": "Answer or ask about each in the report, in words (no internal codes); a NOTICE means that part was "
                   "not checked: never report it as clean.",
        "no_answers": "No check or flag needs an answer.",
        "clear": "clear",
        "plan": "Sweep after exploring. Open a range (Read with offset and limit) only when its line may apply; "
                "◆ marks a rule whose trigger the diff shows: open it.",
        "once": "once per session",
        "over_budget": "over the {budget:.0%} budget, kept as checklist lines: {rules}",
        "lenses_none": "Quick review: no lenses.",
        "lenses_capped": "Deep review with the lens cap at 0: one pass.",
        "lenses": "One sub-agent per lens (or one after another): give it lens-common and its lens text (by line range), "
                  "this brief, the context pack and the PR JSON. Then validate yourself: every 🔴/⚠️ candidate gets a "
                  "decision in {validated}.",
        "commands": "Run, in order:",
        "scaffold": "report skeleton (replace every TODO(agent) line):",
        "merge": "deep review: merge the lens findings first, and scaffold with --findings:",
        "check": "check once, fix every error:",
        "files": "Everything else (read when needed):",
        "pack_md": "context pack digest: read before the code (callers, twins, env vars, pinned AITER/mori code, CI coverage)",
        "pack_json": "context pack, everything",
        "code_map": "code map: changed functions at head and base, call lines, twins, pinned upstream definitions; "
                    "exploring and every lens start here",
        "triage": "triage digest (this brief's source)",
        "pr_json": "PR document (body, comments, reviews, CI)",
        "clone": "code: clone {path}, head {head}, base {base} (git -C {path} show {head}:<path>)",
        "sources": "code: head versions under {path}/<path>; the base side is only the diff's - lines, so mark claims "
                   "that rest on unread base code [推测]",
        "upstream": "pinned upstream code (AITER/mori)",
        "example": "example report: read once before the first review of a session (style anchor)",
        "warnings": "fetch warnings:",
        "not_possible": "The context pack could not collect: {what}; check these by hand.",
    },
}


def render_brief(document, result, pack, paths, lenses_text, skew, file_kinds, lang="zh"):
    """The brief's text, at most MAX_LINES lines.

    ``file_kinds`` maps each changed path to its kinds (code, tests, ci, build, ...): a PR whose
    non-test changes are all CI or build files gets the build form of the 🔴 gate.

    ``paths`` maps pr_json, pack_md, pack_json, triage, brief, review, validated, findings, upstream
    (None when absent), sources (None with a clone) and example to the paths the brief names.
    ``lenses_text`` is the text of references/review-lenses.md (its anchors give the line ranges).
    """
    say = PHRASES[lang]
    pr = result["pr"]
    head = _header(document, result, pack, paths, say)
    blocks = [
        _relevance(result, say),
        _since(result.get("since"), say),
        _skew(skew, say),
        _types(result, file_kinds, say),
        _answers(result, pack, document, say),
        _plan(result["reading_plan"], say),
        _lenses(result["lenses"], lenses_text, paths, say),
        _commands(pr["number"], paths, result, say, lang),
        _files(document, paths, say),
    ]
    return _fit(head, [block for block in blocks if block], MAX_LINES)


# --- sections: each is (fixed lines, cuttable items, tail lines, where the cut items are) ---------------------------------


def _header(document, result, pack, paths, say):
    pr, meta = document["pr"], document["meta"]
    checkout = meta.get("checkout")
    mode = f"clone {checkout['path']}" if checkout else f"sources {paths['sources']}" if paths.get("sources") else "no code"
    return [f"# Review brief for PR #{pr['number']}: {pr['title']}",
            f"{meta['repo']}#{pr['number']} by {pr['author']}, {pr['state']}; {result['pr']['files']} files "
            f"+{pr['additions']} -{pr['deletions']}; base {pr['base']['sha'][:12]}, head {pr['head']['sha'][:12]}; {mode}",
            f"report: {paths['review']} ({say['language']}); {say['languages']}"]


def _relevance(result, say):
    evidence = result["relevance_evidence"]
    fixed = [f"## Relevance: {result['relevance']}", evidence["reason"], say[result["relevance"]]]
    items = []
    for title, entries in (("ROCm-exposed", result["rocm_files"]), ("shared: check for cross-backend regressions",
                                                                   result["shared_files"]),
                           ("set aside: ROCm never runs these changes (overrule if it does)",
                            evidence.get("demoted") or [])):
        if entries:
            items.append(f"{title} ({len(entries)}):")
            said = set()
            for entry in entries[:FILES_SHOWN]:
                why = "; ".join(entry["why"])
                items.append(f"  {entry['path']}" + ("" if why in said else f" — {clip(why, 90)}"))
                said.add(why)
            if len(entries) > FILES_SHOWN:
                items.append(f"  … {len(entries) - FILES_SHOWN} more in the triage digest")
    return fixed, items, [say["overrule"]], "the triage digest"


def _since(since, say):
    if since is None:
        return None
    fixed = [f"## Since {since['reviewed_head'][:7]}",
             f"previous review: head {since['reviewed_head'][:7]}; now {since['head'][:7]}"
             + ("; the branch was rewritten (rebase or force-push)" if since["rebased"] else "")]
    if not since["files"]:
        fixed.append("no PR file changed since: only the base moved; confirm the previous verdict still holds")
    items = [f"- {entry['path']} [{entry['status']}]: " + (", ".join(
        f"{hunk['start']}-{hunk['start'] + max(hunk['lines'], 1) - 1}" for hunk in entry["hunks"][:6]) or "no hunks")
        for entry in since["files"]]
    return fixed, items, [say["since"]], "the triage digest"


def _skew(skew, say):
    if skew is None:
        return None
    fixed = ["## Version skew", f"catalog facts checked at vLLM {skew['commit']} ({skew['date']}); limit {skew['max_days']} days"]
    if skew["base"]:
        fixed.append(f"PR base (merge base) {skew['base'][:12]} committed {skew['base_date']}: "
                     + _days(skew["days"]))
    elif skew["state"] == "older":
        fixed.append(f"PR last updated {skew['updated_at']}, so its base is at least {-skew['days']} days older")
    if skew["state"] == "within":
        return fixed, [], [say["skew_within"].format(**skew)], None
    lead = say["skew_unknown"] if skew["state"] == "unknown" else say["skew_recheck"]
    items = [f"- [ ] {_label(anchor)} {f'lines {start}-{end}' if end > start else f'line {start}'}: "
             f"{clip(text.strip(), 110)}" for anchor, start, end, text in sorted(skew["recheck"], key=lambda p: p[1])]
    return fixed + [lead.format(**skew)], items, [say["skew_surface"].format(**skew)], f"the catalog (grep {skew['commit']})"


def _label(anchor):
    """``rule-e2`` -> ``E2``; other anchors as they are."""
    return anchor[len(RULE_ANCHOR_PREFIX):].upper() if anchor.startswith(RULE_ANCHOR_PREFIX) else anchor


def _days(days):
    if days == 0:
        return "same day"
    return f"{abs(days)} days {'newer' if days > 0 else 'older'}"


def _types(result, file_kinds, say):
    plan = result["reading_plan"]
    fixed = ["## PR types, tiers and depth", "types: " + ", ".join(t["id"] for t in result["pr_types"] if t["id"] != "any")]
    if plan["depth"] == "deep":
        fixed.append(say["depth_deep"].format(reasons="; ".join(plan["deep_reasons"])))
    else:
        fixed.append(say["depth_quick"])
    build = any(set(kinds) & set(BUILD_KINDS) for kinds in file_kinds.values())
    code = any("code" in kinds for kinds in file_kinds.values())
    fixed += ([say["gate_code"]] if code or not build else []) + ([say["gate_build"]] if build else [])
    items = [f"T{entry['tier']} {entry['path']}" + (f" (as {entry['as']})" if entry.get("as") else "")
             for entry in result["tiers"]]
    items += [f"family {family['id']} -> {' '.join(family['rules'])}: "
              + "; ".join(_where(item) for item in family["evidence"][:1]) for family in result["families"]]
    return fixed, items, [], "the triage digest"


def _where(item):
    if item.get("path") and item.get("line"):
        return f"{item['path']}:{item['line']}"
    return item.get("path") or clip(item["text"], 60)


def _answers(result, pack, document, say):
    fixed = ["## Answer these", say["answers"]]
    items, clear = [], []
    for name, flag in result["flags"].items():
        if flag["state"] in ("raised", "unknown"):
            evidence = f" [{', '.join(flag['evidence'][:3])}]" if flag["evidence"] and flag["state"] == "raised" else ""
            items.append(f"- [ ] flag {name} {flag['state']}: {flag['detail']}{evidence}")
    for name, check in result["checks"].items():
        if check["status"] in QUIET_STATES and not check.get("notice"):
            clear.append(f"{name} {check['status']}")
            continue
        items.append(f"- [ ] {name} {check['status']}: {check['summary']}")
        if check.get("notice"):
            items.append(f"  NOTICE: {check['notice']}")
        items += ["  " + clip(describe_check_item(name, item), 200) for item in check["items"]
                  if name in ALL_ITEMS_NEED_ANSWER or is_flagged(name, item)]
        if check.get("omitted"):
            items.append(f"  … {check['omitted']} more: triage_pr.py PR_JSON --json (checks.{name})")
    if pack is not None and pack["meta"].get("not_possible"):
        items.append(say["not_possible"].format(what="; ".join(pack["meta"]["not_possible"])))
    warnings = document["meta"].get("warnings") or []
    if warnings:
        items.append(say["warnings"] + " " + " | ".join(clip(warning, 160) for warning in warnings))
    if not items:
        fixed.append(say["no_answers"])
    return fixed, items, [f"{say['clear']}: {', '.join(clear)}"] if clear else [], "the triage digest and the context pack"


def _plan(plan, say):
    fixed = [f"## Reading plan: {plan['depth']}, {plan['lines']} of {plan['catalog_lines']} lines of {plan['catalog']}",
             say["plan"]]
    items = []
    for section in plan["sections"]:
        note = f" — {say['once']}" if section["anchor"] == "core-discipline" else ""
        items.append(f"- [ ] ◆ {clip(section['title'], 110)} (lines {section['start_line']}-{section['end_line']}){note}")
    items += [f"- [ ] {clip(item['title'], 110)} (lines {item['start_line']}-{item['end_line']})"
              for item in plan["checklist"]]
    tail = [say["over_budget"].format(budget=plan["budget"], rules=", ".join(plan["over_budget"]))] if plan["over_budget"] else []
    return fixed, items, tail, "triage_pr.py PR_JSON --expand"


def _lenses(lenses, lenses_text, paths, say):
    if not lenses["chosen"]:
        return ["## Lenses", say["lenses_none"] if lenses["depth"] != "deep" else say["lenses_capped"]], [], [], None
    text = parse_catalog(lenses_text)
    path = lenses["chosen"][0]["text"].split("#")[0]
    fixed = [f"## Lenses: {len(lenses['chosen'])}, ~{lenses['extra_cost_tokens'] // 1000}k tokens with the validator; "
             f"texts in {path}", say["lenses"].format(validated=paths["validated"]), _lens_range(text, "lens-common")]
    items = [f"- {lens['id']}: {_lens_range(text, lens['text'].split('#')[1])}; writes {lens['output']}; "
             f"why: {clip('; '.join(lens['why']), 80)}" for lens in lenses["chosen"]]
    return fixed, items, [], "the triage digest"


def _lens_range(text, anchor):
    section = text.section(anchor)
    return f"{anchor} lines {section.start + 1}-{section.end}" if section else anchor


def _commands(number, paths, result, say, lang):
    since = f" --since {result['since']['reviewed_head'][:12]}" if result.get("since") else ""
    scaffold = (f"python3 scripts/triage_pr.py {paths['pr_json']} --context {paths['pack_json']}{since} "
                f"--scaffold {paths['review']}")
    lang_option = " --lang en" if lang == "en" else ""
    fixed = ["## Commands", say["commands"], f"1. {say['scaffold']}", f"   {scaffold}"]
    if result["lenses"]["chosen"]:
        lens_files = paths["findings"].replace("-findings.json", "-lens-*.json")
        fixed += [f"   {say['merge']}",
                  f"   python3 scripts/merge_findings.py {lens_files} --validated {paths['validated']} "
                  f"--output {paths['findings']}",
                  f"   {scaffold} --findings {paths['findings']}"]
    fixed += [f"2. {say['check']}",
              f"   python3 scripts/check_report.py {paths['review']} --pr-json {paths['pr_json']}{lang_option}"]
    return fixed, [], [], None


def _files(document, paths, say):
    checkout = document["meta"].get("checkout")
    lines = ["## Files", say["files"],
             f"- {paths['pack_md']}: {say['pack_md']}",
             f"- {paths['pack_json']}: {say['pack_json']}",
             f"- {paths['triage']}: {say['triage']}",
             f"- {paths['pr_json']}: {say['pr_json']}"]
    if paths.get("code_map"):
        lines.append(f"- {paths['code_map']}: {say['code_map']}")
    if checkout:
        lines.append("- " + say["clone"].format(path=checkout["path"], head=checkout["head_sha"][:12],
                                                base=(checkout.get("merge_base") or checkout["base_sha"])[:12]))
    elif paths.get("sources"):
        lines.append("- " + say["sources"].format(path=paths["sources"]))
    if paths.get("upstream"):
        lines.append(f"- {paths['upstream']}/: {say['upstream']}")
    lines.append(f"- {paths['example']}: {say['example']}")
    return lines, [], [], None


# --- fitting ---------------------------------------------------------------------------------------


def _fit(head, blocks, limit):
    """Join the blocks under ``head``, cutting the longest item lists so the text fits ``limit`` lines.

    A cut list ends with one ``… N more`` line; fixed lines and tails are never cut.
    """
    fixed = len(head) + sum(1 + len(block[0]) + len(block[2]) for block in blocks)
    budget = limit - fixed
    sizes = [len(block[1]) for block in blocks]
    cap = max(sizes, default=0)
    while cap > 2 and sum(min(size, cap) for size in sizes) > budget:
        cap -= 1
    lines = list(head)
    for fixed_lines, items, tail, where in blocks:
        shown = items if len(items) <= cap else items[:cap - 1]
        lines += [""] + fixed_lines + shown
        if len(shown) < len(items):
            lines.append(f"- … {len(items) - len(shown)} more: see {where}")
        lines += tail
    return "\n".join(lines[:limit]) + "\n"
