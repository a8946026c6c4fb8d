"""What one user's session keeps per survey file while they switch files and pages.

The column-mapping edits (no streamlit import): switching from file A to file B and back must
not lose work. Per session, never shared; the least recently used file is forgotten first.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cx_app.app.store import digest
from cx_app.provenance import sha256_hex

if TYPE_CHECKING:
    from cx_app.survey.schema import SurveySchema

__all__ = ["MappingMemory", "mapping_file_key"]


def mapping_file_key(content: bytes, sheet: str | None, base: SurveySchema) -> str:
    """Keyed by content, sheet and the layout the edits start from, so that edits made on one
    layout are never applied to another."""
    return digest({"sha256": sha256_hex(content), "sheet": sheet, "base": base.to_yaml()})


@dataclass
class _Edits:
    generation: int
    seed: tuple  # (schema, table) the editor widgets of this generation started from
    latest: tuple  # the last valid (schema, table) the user made from it
    changed: bool = False


def _same(a: tuple, b: tuple) -> bool:
    return a[0] == b[0] and (a[1] is b[1] or (a[1] is not None and b[1] is not None
                                              and a[1].equals(b[1])))


class MappingMemory:
    """The column mapping of each file as the user last left it (schema and editor table).

    Editor widgets lose their state when they leave the screen, so the page asks :meth:`seed`
    what to show, and puts the *generation* (:meth:`prefix`) in the widget keys: a fresh editor
    starts from the kept edit instead of replaying stale changes on top of it.

    >>> from cx_app.survey.schema import schema_from_mapping
    >>> base = schema_from_mapping(target="NPS", scale="0-10", attributes=["Price", "Network"])
    >>> memory = MappingMemory()
    >>> memory.seed("f", base, editing=False) == (base, None), memory.prefix("f")
    (True, 'mapping::f::0')
    >>> edited = base.model_copy(update={"missing_attributes": "exclude"})
    >>> memory.keep("f", edited)
    >>> memory.seed("f", base, editing=True)[0] is base  # the editor is on screen: unchanged
    True
    >>> memory.seed("f", base, editing=False)[0] is edited, memory.prefix("f")  # back again
    (True, 'mapping::f::1')
    """

    def __init__(self, max_files: int = 16) -> None:
        if max_files < 1:
            raise ValueError("max_files must be at least 1")
        self.max_files = max_files
        self._files: OrderedDict[str, _Edits] = OrderedDict()

    def prefix(self, file_key: str) -> str:
        entry = self._files.get(file_key)
        return f"mapping::{file_key}::{0 if entry is None else entry.generation}"

    def seed(self, file_key: str, base: SurveySchema, *,
             editing: bool) -> tuple[SurveySchema, Any]:
        """``(schema, table)`` the editor starts from: ``(base, None)`` the first time, then
        the last kept edit; ``editing``: the widgets still hold their state (nothing changes)."""
        entry = self._files.get(file_key)
        if entry is None:
            entry = self._files[file_key] = _Edits(0, (base, None), (base, None))
        elif not editing and entry.changed:
            entry.generation += 1
            entry.seed, entry.changed = entry.latest, False
        self._files.move_to_end(file_key)
        while len(self._files) > self.max_files:
            self._files.popitem(last=False)
        return entry.seed

    def keep(self, file_key: str, schema: SurveySchema, table: Any = None) -> None:
        entry = self._files.get(file_key)
        if entry is None:
            self._files[file_key] = entry = _Edits(0, (schema, table), (schema, table))
        entry.latest = (schema, table)
        entry.changed = not _same(entry.latest, entry.seed)

    def __len__(self) -> int:
        return len(self._files)
