"""The table-header checker of issue 37 point 3, shared by the app's, the reports' and the deck's
tests (imported by its plain module name, like ``plain_words``): every table declares its own
headers, so none is duplicated, none is a raw identifier, and none heads a column that holds
another kind of value.

A table is given as (title, [(key, header, values)]): the data key of each column, the header a
reader sees, and the column's values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

SNAKE = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]")
RAW_HEADERS = {"None", "none", "nan", "", "se", "series", "nps", "n"}
"""Headers that are data keys, not words (the tracker once showed ``series`` and ``se``)."""
TEXT_HEADERS = {"model", "algorithm", "attribute", "class", "level", "wave", "drift",
                "quadrant", "metric", "segment", "preset", "significant?"}
"""Headers of columns that hold words: a number under one is a mislabelled column."""
NUMBER_WORDS = ("respondents", "share", "accuracy", "interval", "95% low", "95% high", "gap",
                "p (holm)", "standard error", "seconds")
"""Words of headers of columns that hold numbers."""
DRIFT_LEVELS = {"stable", "moderate", "major"}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _missing(value: Any) -> bool:
    if isinstance(value, str):
        return value in ("", "—")
    if isinstance(value, float):
        return math.isnan(value)
    return value is None or type(value).__name__ in ("NAType", "NaTType")


def header_problems(title: str, columns: Sequence[tuple[str, Any, Sequence[Any]]]) -> list[str]:
    """What is wrong with one table's headers (empty when nothing)."""
    problems = []
    headers = [str(h) for _, h, _ in columns]
    duplicated = sorted({h for h in headers if headers.count(h) > 1})
    if duplicated:
        problems.append(f"{title}: duplicate headers {duplicated}")
    for key, header, values in columns:
        shown = str(header)
        low = shown.strip().lower()
        present = [v for v in values if not _missing(v)]
        if shown.strip() in RAW_HEADERS or SNAKE.search(shown) or (
                "_" in str(key) and shown == str(key).replace("_", " ")):
            problems.append(f"{title}: header {shown!r} is a raw identifier (column {key!r})")
        if any(isinstance(v, str) and v.strip() in ("None", "nan") for v in values):
            problems.append(f"{title}: column {shown!r} shows a missing value as 'None'/'nan'")
        if not present:
            continue
        numbers = [v for v in present if _is_number(v)]
        if low in TEXT_HEADERS and len(numbers) == len(present):
            problems.append(f"{title}: {shown!r} heads numbers {present[:3]}")
        yes_no = all(isinstance(v, bool) for v in present)
        if any(w in low for w in NUMBER_WORDS) and not yes_no and not numbers and not any(
                isinstance(v, str) and re.search(r"\d", v) for v in present):
            problems.append(f"{title}: {shown!r} heads words {present[:3]}")
        if low == "drift" and not set(map(str, present)) <= DRIFT_LEVELS:
            problems.append(f"{title}: 'Drift' heads {sorted(set(map(str, present)))[:4]}")
        if "gap" in low and numbers and all(float(v).is_integer() for v in numbers) \
                and len(numbers) > 3:
            problems.append(f"{title}: {shown!r} heads whole numbers {numbers[:4]} (scores?)")
    return problems
