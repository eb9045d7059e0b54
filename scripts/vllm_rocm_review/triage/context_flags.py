"""The context pack's flags (scripts/context_pack.py) as the mechanical check ``context``.

The pack is read as a file, so triage stays offline and deterministic; a pack for another
PR, or a file that is not a pack, is an input error rather than a silent empty check.
"""

import json

from .mechanical import _item
from .mechanical import _result

FLAG_KEYS = ("code", "path", "line", "message")
REBUILD = "rebuild it with scripts/context_pack.py PR_JSON"


class ContextPackError(ValueError):
    """The --context file is unusable; str() is the problem and the remedy."""


def load_context_pack(path, number):
    """The flags of the pack at ``path``, checked to be for PR ``number``."""
    try:
        pack = json.loads(open(path, encoding="utf-8").read())
    except FileNotFoundError:
        raise ContextPackError(f"context pack {path} does not exist; {REBUILD}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ContextPackError(f"cannot read context pack {path}: {error}; {REBUILD}") from None
    except json.JSONDecodeError as error:
        raise ContextPackError(f"context pack {path} is not JSON ({error.msg} at line {error.lineno}); {REBUILD}") from None
    if not isinstance(pack, dict) or not isinstance(pack.get("flags"), list) or not isinstance(pack.get("pr"), dict):
        raise ContextPackError(f"{path} is not a context pack (no pr and flags); {REBUILD}")
    if pack["pr"].get("number") != number:
        raise ContextPackError(f"{path} is the context pack of PR {pack['pr'].get('number')}, not of PR {number}; {REBUILD}")
    for index, entry in enumerate(pack["flags"]):
        if not isinstance(entry, dict) or any(key not in entry for key in FLAG_KEYS):
            raise ContextPackError(f"{path}: flags[{index}] lacks one of {', '.join(FLAG_KEYS)}; {REBUILD}")
    return pack


def context_check(pack):
    """The check result: ``attention`` with one item per flag, ``ok`` when the pack raised none."""
    if pack is None:
        return None
    items = [_item(code=f["code"], path=f["path"], line=f["line"], message=f["message"]) for f in pack["flags"]]
    mode = (pack.get("meta") or {}).get("mode", "unknown")
    not_possible = (pack.get("meta") or {}).get("not_possible") or []
    notice = ("the pack could not collect: " + "; ".join(not_possible)) if not_possible else None
    if not items:
        return _result("ok", f"context pack ({mode}): no flags", notice=notice)
    codes = sorted({item["code"] for item in items})
    summary = f"context pack ({mode}): {len(items)} flag(s): " + ", ".join(
        f"{code} {sum(1 for item in items if item['code'] == code)}" for code in codes)
    return _result("attention", summary, items, notice=notice)
