"""A CX program's tracker rows (one per wave, a wave added twice as one), built once.

The deck, ``cx-app program show``, the app and the Excel/HTML reports read the same rows.

The program's view is a protocol: the workspace is a layer above.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from cx_app.survey.nps_flags import flag_changes

if TYPE_CHECKING:
    from cx_app.estimate.document import WaveEstimateDocument

__all__ = ["ALL_RESPONDENTS", "ProgramView", "WaveView", "merged_waves",
           "program_tracker_frame", "tracker_rows"]


class WaveView(Protocol):
    """What the deck reads of a :class:`cx_app.workspace.views.WaveView`."""

    label: str
    filename: str | None
    respondents: int
    estimate: WaveEstimateDocument
    segments: Mapping[str, Mapping[str, Any]]

    @property
    def estimated_nps(self) -> Any: ...
    @property
    def realized_nps(self) -> Any: ...


class SurveyFile(Protocol):
    filename: str | None  # the reference survey's (cx_app.project.SurveyIdentity)


class ProgramView(Protocol):
    name: str
    survey: SurveyFile
    waves: Sequence[WaveView]


ALL_RESPONDENTS = "All respondents"


def merged_waves(waves: Sequence[WaveView]) -> list[tuple[WaveView, WaveView | None]]:
    """A wave added twice under one label, without and with its scores (they arrived later),
    is one wave: the unlabelled one's estimate with the labelled one's (its twin's) realized
    score. Each shown wave with its twin or None, in wave order."""
    shown: list[tuple[WaveView, WaveView | None]] = []
    for label in dict.fromkeys(w.label for w in waves):
        same = [w for w in waves if w.label == label]
        labelled = [w for w in same if w.realized_nps is not None]
        unlabelled = [w for w in same if w.realized_nps is None]
        if labelled and unlabelled:
            shown.extend((w, labelled[0]) for w in unlabelled)
            shown.extend((w, None) for w in labelled[1:])
        else:
            shown.extend((w, None) for w in same)
    return shown


def tracker_rows(view: ProgramView, by: str | None = None) -> pd.DataFrame:
    """The tracker's rows before their change flags (the columns of
    :data:`cx_app.estimate.tracker.TRACKER_COLUMNS`): one per shown wave
    (:func:`merged_waves`) for all respondents, and per value of the segment ``by``."""
    from cx_app.estimate.tracker import TRACKER_COLUMNS, tracker_row

    rows = []
    for wave, twin in merged_waves(view.waves):
        est = wave.estimated_nps
        rows.append(tracker_row(
            wave.label, ALL_RESPONDENTS, wave.respondents, est, (twin or wave).realized_nps,
            "" if est.audited_n is None else
            f"audited ({est.audited_n} answers; label-free {est.label_free:+.1f})",
            wave.estimate.alerts))
        twin_segments = (twin or wave).segments.get(by, {}) if by else {}
        for value, figure in (wave.segments.get(by, {}) if by else {}).items():
            real = twin_segments[value].realized_nps if value in twin_segments else None
            rows.append(tracker_row(wave.label, value, figure.respondents,
                                    figure.estimated_nps, real, figure.note or "", figure.alerts))
    return pd.DataFrame(rows, columns=list(TRACKER_COLUMNS))


def program_tracker_frame(view: ProgramView, by: str | None = None) -> pd.DataFrame:
    """The tracker's data (the columns of :func:`cx_app.estimate.tracker.tracker_frame`):
    :func:`tracker_rows` flagged wave to wave, Holm over every change of the table."""
    return flag_changes(tracker_rows(view, by))
