"""Write files so that readers see either the old content or the new, never half."""

import os
import tempfile
from pathlib import Path


def write_atomic(path, data):
    """Write ``data`` (str or bytes) to ``path`` through a temporary file and a rename.

    On any failure the temporary file is removed and an existing ``path`` is left untouched.
    """
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
