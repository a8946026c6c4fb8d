"""Bounded zip members: every byte an archive unpacks to, at every level, counted against one limit.

A project's ``.npz`` and ``.skops`` members are zips too: counting the outer archive only lets a
4 MB project hide a 3 GB array (issue 24). :func:`read_members` refuses too many members or too
large declared sizes before inflating anything, inflates in 1 MB chunks against one running
count for the whole tree (:class:`InflationBudget`; :mod:`zipfile` checks sizes and CRCs), reads
every ``.npy`` header first (objects, or a shape claiming more than the limit or than the member
holds, are refused before numpy allocates), and checks nested archives one level down. The
limits are the survey workbooks' (:mod:`cx_app.survey.limits`); every refusal is one sentence of
the caller's error type naming the file and member.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

import numpy as np
from numpy.lib import format as npy_format

__all__ = ["CHUNK", "NESTED_ARCHIVES", "InflationBudget", "megabytes", "read_members"]

MB = 1024 * 1024
CHUNK = MB
NESTED_ARCHIVES = (".npz", ".skops")
"""Members that are zip archives themselves, checked one level down."""
_MAX_DEPTH = 2  # a project's models/NNN.skops holds .npy arrays: nothing deeper is ours


def megabytes(n: float) -> str:
    """``n`` bytes as a short KB/MB figure for messages.

    >>> megabytes(512 * 1024), megabytes(3.25 * MB), megabytes(1500 * MB)
    ('512.0 KB', '3.2 MB', '1,500 MB')
    """
    if n < MB:
        return f"{n / 1024:,.1f} KB"
    return f"{n / MB:,.1f} MB" if n < 10 * MB else f"{n / MB:,.0f} MB"


@dataclass
class InflationBudget:
    """What one archive and the archives nested in it may unpack to, and what they have so far."""

    max_bytes: int
    max_entries: int
    used: int = 0

    @property
    def left(self) -> int:
        return self.max_bytes - self.used

    def limit_text(self) -> str:
        return f"the limit of {megabytes(self.max_bytes)} (CX_APP_MAX_DECOMPRESSED_MB)"


def read_members(data: bytes, *, label: str, error: type[Exception], budget: InflationBudget,
                 keep: bool = True, _depth: int = 0) -> dict[str, bytes]:
    """Every member of the zip archive ``data``, inflated within ``budget``; ``keep=False``
    checks and counts without keeping the bytes. ``error(sentence)`` for anything refused."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
        raise error(f"{label} is damaged and cannot be unpacked ({exc}).") from None
    if len(infos) > budget.max_entries:
        raise error(f"{label} holds {len(infos):,} files, more than the {budget.max_entries:,} "
                    "an archive may hold (CX_APP_MAX_ZIP_ENTRIES).")
    declared = sum(info.file_size for info in infos)
    if declared > budget.left:
        total = megabytes(budget.used + declared)
        total = "" if total == megabytes(declared) else f" ({total} with the rest of the file)"
        raise error(f"{label} would unpack to {megabytes(declared)}{total}, more than "
                    f"{budget.limit_text()}; it was refused before unpacking.")
    members: dict[str, bytes] = {}
    with archive:
        for info in infos:
            if info.is_dir():
                continue
            nested = _depth + 1 < _MAX_DEPTH and info.filename.endswith(NESTED_ARCHIVES)
            content = _inflate(archive, info, label, error, budget, keep or nested)
            if nested:
                read_members(content, label=f"{label}: {info.filename}", error=error,
                             budget=budget, keep=False, _depth=_depth + 1)
            if keep:
                members[info.filename] = content
    return members


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, label: str,
             error: type[Exception], budget: InflationBudget, keep: bool) -> bytes:
    """One member, chunk by chunk, counted against ``budget``; its bytes when ``keep``."""
    kept = bytearray() if keep else None
    size = 0
    npy = info.filename.endswith(".npy")
    try:
        with archive.open(info) as member:
            while chunk := member.read(CHUNK):
                if npy and size == 0:
                    _check_npy_header(chunk, info, label, error, budget)
                size += len(chunk)
                budget.used += len(chunk)
                if budget.used > budget.max_bytes:
                    raise error(f"{label} unpacks to more than {budget.limit_text()}; it was "
                                "refused.")
                if kept is not None:
                    kept += chunk
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError,
            NotImplementedError) as exc:
        raise error(f"{label} is damaged: its member {info.filename} cannot be unpacked "
                    f"({exc}).") from None
    return b"" if kept is None else bytes(kept)


def _check_npy_header(first: bytes, info: zipfile.ZipInfo, label: str, error: type[Exception],
                      budget: InflationBudget) -> None:
    """Refuse an ``.npy`` member whose header claims objects, more bytes than the budget has
    left, or another size than the member holds."""
    where = f"{label}: the array {info.filename}"
    buffer = io.BytesIO(first)
    try:
        version = npy_format.read_magic(buffer)
        read = (npy_format.read_array_header_1_0 if version == (1, 0)
                else npy_format.read_array_header_2_0)
        shape, _fortran, dtype = read(buffer)
    except (ValueError, TypeError, SyntaxError, EOFError) as exc:
        raise error(f"{where} has a damaged header ({exc}).") from None
    if dtype.hasobject:
        raise error(f"{where} holds Python objects, which cx-app never writes; it was refused.")
    claimed = int(np.prod([int(n) for n in shape], dtype=object)) * dtype.itemsize
    if claimed > budget.left:
        raise error(f"{where} claims {megabytes(claimed)} (shape {tuple(shape)} of {dtype}), "
                    f"more than {budget.limit_text()}; it was refused before allocating it.")
    if buffer.tell() + claimed != info.file_size:
        raise error(f"{where} is damaged: its header claims shape {tuple(shape)} of {dtype} "
                    f"({claimed:,} bytes), but the member holds "
                    f"{info.file_size - buffer.tell():,} bytes of data.")
