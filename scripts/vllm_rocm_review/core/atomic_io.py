"""Write files so that readers see either the old content or the new, never half."""

import errno
import os
import secrets
from pathlib import Path

# Like any new file: 0666 minus the umask. Private files (the HTTP cache, which may hold
# private-repository answers) are for their owner only.
PUBLIC_MODE = 0o666
PRIVATE_MODE = 0o600


def write_atomic(path, data, *, private=False):
    """Write ``data`` (str or bytes) to ``path`` through a temporary file and a rename.

    Missing parent directories are created. On any failure the temporary file is removed and an
    existing ``path`` is left untouched; an ``OSError`` names ``path`` (or the file in its way),
    never the temporary file.
    """
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    _make_directory(path.parent)
    try:
        tmp_path, fd = _create_temporary(path, PRIVATE_MODE if private else PUBLIC_MODE)
    except OSError as error:
        raise _naming(error, path) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_path, path)
    except BaseException as error:
        try:
            os.unlink(tmp_path)
        except FileNotFoundError:
            pass
        if isinstance(error, OSError):
            raise _naming(error, path) from None
        raise


def _make_directory(directory):
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in (directory, *directory.parents) if p.exists() and not p.is_dir()), directory)
        raise NotADirectoryError(errno.ENOTDIR, "is a file, not a directory", str(blocker)) from None
    except OSError as error:
        raise _naming(error, directory) from None


def _create_temporary(path, mode):
    """A new hidden file beside ``path``, created with ``mode`` (the umask applies)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        candidate = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return candidate, os.open(candidate, flags, mode)
        except FileExistsError:
            continue


def _naming(error, path):
    """``error`` with ``path`` as its file name, so messages show the user's path."""
    if error.errno is None:
        return error
    return type(error)(error.errno, error.strerror, str(path))
