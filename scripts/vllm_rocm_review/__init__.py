"""Shared code for the vllm-rocm-pr-review skill scripts.

Every script imports this package first, so a missing runtime dependency is reported here as
one line with the install command instead of an ImportError traceback from deep inside.
"""

import sys
from importlib.util import find_spec

RUNTIME_DEPENDENCIES = {"requests": "requests", "yaml": "PyYAML", "jinja2": "jinja2"}

_missing = [package for module, package in RUNTIME_DEPENDENCIES.items() if find_spec(module) is None]
if _missing:
    print(
        f"error: missing Python package(s) {', '.join(_missing)} for {sys.executable}; "
        f"install them with: {sys.executable} -m pip install {' '.join(RUNTIME_DEPENDENCIES.values())}",
        file=sys.stderr,
    )
    raise SystemExit(1)
