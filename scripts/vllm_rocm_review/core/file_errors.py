"""One-line reasons for a file that cannot be read or written, worded the same everywhere."""


def read_failure(error):
    """Why a text file could not be read: not found, not UTF-8 text, or the system's reason."""
    if isinstance(error, FileNotFoundError):
        return "not found"
    if isinstance(error, UnicodeDecodeError):
        return (f"not UTF-8 text (byte 0x{error.object[error.start]:02x} at offset {error.start}: a binary file, "
                "or text in another encoding to convert with `iconv -t UTF-8`)")
    reason = error.strerror or type(error).__name__
    return reason[:1].lower() + reason[1:]


def describe_os_error(error):
    """``path: reason`` of an OSError, without errno noise."""
    reason = error.strerror or type(error).__name__
    return f"{error.filename}: {reason}" if error.filename else reason
