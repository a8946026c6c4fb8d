"""Files written whole or not at all: a killed run leaves the old file or no file.

Written to a temporary file in the same folder, fsynced, then moved over the target with
:func:`os.replace` (atomic when both names are on one file system); a killed run leaves at most
a hidden ``.NAME.*.tmp`` beside the target, safe to delete.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "write_bytes_atomic", "write_text_atomic"]


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; on a clean exit it replaces ``path``
    (for libraries that write to a path themselves: openpyxl, skops).

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text()
    'done'
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    os.close(handle)
    tmp = Path(name)
    try:
        # mkstemp makes a private (0600) file; give it the target's mode, or a plain file's
        os.chmod(tmp, target.stat().st_mode & 0o777 if target.exists() else 0o644)
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_folder(folder)


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    with atomic_path(path) as tmp, open(tmp, "wb") as out:
        out.write(data)
    return Path(path)


def write_text_atomic(path: str | Path, text: str, *, encoding: str = "utf-8") -> Path:
    return write_bytes_atomic(path, text.encode(encoding))


def _fsync_folder(folder: Path) -> None:
    # the rename itself is durable only once the folder's entry is on disk (POSIX)
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
