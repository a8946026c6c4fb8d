"""One slide of the program deck and how survey text and numbers read on a slide."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cx_app.reports.blocks import Table
from cx_app.reports.formatting import format_value
from cx_app.safe_text import plain_text, short_label


@dataclass(frozen=True)
class DeckSlide:
    """One slide: its title is the message; the notes say how the numbers were made."""

    title: str
    bullets: tuple[str, ...] = ()
    table: Table | None = None
    chart: dict | None = None
    notes: str = ""
    subtitle: str = ""  # the title slide's second line


def label(text: Any) -> str:
    """Survey text as a slide shows it: plain, on one line, at most a label's length."""
    return short_label(" ".join(plain_text(str(text)).split()))


def score(value: float | None) -> str:
    return "—" if value is None else format_value(value, "score")


def interval(ci95: Sequence[float] | None) -> str:
    ci = [c for c in list(ci95 or [])[:2] if c is not None]
    return f"{ci[0]:.1f} to {ci[1]:.1f}" if len(ci) == 2 else "—"


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def segment_title(by: str, titles: Mapping[str, str]) -> str:
    return label(titles.get(by) or by.replace("_", " ").capitalize())


def segment_value(by: str, value: str, titles: Mapping[str, str]) -> str:
    """With its segment when the value does not name it ("Crete (Region)", "Operator B")."""
    name, shown = segment_title(by, titles), label(value)
    return shown if name.lower() in shown.lower() else f"{shown} ({name})"
