"""Files written whole or not at all: a killed run leaves the old file or no file.

Every file the CLI and the app write (results.json, reports, projects, models, the deck) is
first written to a temporary file in the same folder, flushed to disk (``fsync``) and then
moved over the target with :func:`os.replace`, which is atomic on POSIX and Windows when both
names are on one file system (hence the same folder). A reader therefore sees either the
previous complete file or the new complete file, never a truncated one; a run killed midway
leaves at most a hidden ``.NAME.*.tmp`` file beside the target, which the next write of the
same target does not need and which is safe to delete.
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
    """A temporary path beside ``path`` to write to; on a clean exit it replaces ``path``.

    For libraries that write to a path themselves (openpyxl's ``save``, skops' ``dump``).
    On an exception the temporary file is removed and ``path`` is left as it was.

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
        _fsync_file(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_folder(folder)


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (see the module docstring); returns the path."""
    with atomic_path(path) as tmp, open(tmp, "wb") as out:
        out.write(data)
    return Path(path)


def write_text_atomic(path: str | Path, text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see the module docstring); returns the path."""
    return write_bytes_atomic(path, text.encode(encoding))


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


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
