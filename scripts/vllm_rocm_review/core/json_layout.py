"""JSON laid out for reading with grep and an editor: one line per list entry.

Objects are indented one key per line; an object inside a list (a file, a comment, a check)
stays on one line. A 1,000-file PR document is then about 10% smaller than with ``indent=1``
and each entry can be found, and cut out, by line.
"""

import json


def dump_json(value):
    """``value`` as JSON text in the layout above, with a trailing newline."""
    return _render(value, 0) + "\n"


def _render(value, depth):
    pad = " " * depth
    if isinstance(value, dict) and value:
        lines = [f"{pad} {json.dumps(key, ensure_ascii=False)}: {_render(item, depth + 1)}" for key, item in value.items()]
        return "{\n" + ",\n".join(lines) + "\n" + pad + "}"
    if isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
        lines = [pad + " " + json.dumps(item, ensure_ascii=False) for item in value]
        return "[\n" + ",\n".join(lines) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)
