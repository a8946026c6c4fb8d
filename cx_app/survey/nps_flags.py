"""Which segment and wave differences are real: significance flags for the NPS charts.

Each flag is a test between independent groups (:func:`cx_app.survey.nps.nps_change`): a
segment against the rest, a wave against the one before. Several are shown together, so the
flags use Holm-adjusted p-values over the tests of one table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cx_app.multiple_testing import holm
from cx_app.survey.nps import (
    NPS_GROUPS,
    NetScoreGroups,
    change_test,
    nps_by_results,
    nps_change,
    nps_summary,
    segment_frames,
)

__all__ = ["FLAG_ABOVE", "FLAG_BELOW", "FLAG_DOWN", "FLAG_NONE", "FLAG_UP", "flag_changes",
           "segments_vs_rest", "wave_trend"]

FLAG_ABOVE = "significantly above the rest"
FLAG_BELOW = "significantly below the rest"
FLAG_UP = "significant rise"
FLAG_DOWN = "significant fall"
FLAG_NONE = "no significant difference"


def _weights(frame: pd.DataFrame, weight: str | None) -> np.ndarray | None:
    return None if weight is None else frame[weight].to_numpy()


def segments_vs_rest(frame: pd.DataFrame, target: str, by: str, *,
                     groups: NetScoreGroups = NPS_GROUPS, weight: str | None = None,
                     alpha: float = 0.05) -> pd.DataFrame:
    """Each segment of ``by`` against the other respondents of ``frame`` (``difference``:
    segment − rest, NPS points). A segment that is the whole base has no rest: p is NaN.

    >>> df = pd.DataFrame({"s": [10] * 60 + [0] * 60, "g": ["a"] * 60 + ["b"] * 60})
    >>> segments_vs_rest(df, "s", "g")[["segment", "difference", "flag"]].to_dict("records")
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'segment': 'a', 'difference': 200.0, 'flag': 'significantly above the rest'},
     {'segment': 'b', 'difference': -200.0, 'flag': 'significantly below the rest'}]
    """
    rows = []
    for label, part in segment_frames(frame, by, target):
        rest = frame.drop(index=part.index)
        seg = nps_summary(part[target].to_numpy(), groups=groups, label=label,
                          weights=_weights(part, weight))
        if len(rest) and np.isfinite(pd.to_numeric(rest[target], errors="coerce")).any():
            other = nps_summary(rest[target].to_numpy(), groups=groups, label="rest",
                                weights=_weights(rest, weight))
            change = nps_change(other, seg)
            rest_n, rest_nps, diff, p = other.n, other.value, change.delta, change.p
        else:
            rest_n, rest_nps, diff, p = 0, np.nan, np.nan, np.nan
        rows.append({"segment": label, "n": seg.n, "nps": seg.value, "rest_n": rest_n,
                     "rest_nps": rest_nps, "difference": diff, "p": p})
    table = pd.DataFrame(rows, columns=["segment", "n", "nps", "rest_n", "rest_nps",
                                        "difference", "p"])
    return _flagged(table, "difference", alpha, FLAG_ABOVE, FLAG_BELOW)


def wave_trend(frame: pd.DataFrame, target: str, wave: str, *, split: str | None = None,
               groups: NetScoreGroups = NPS_GROUPS, weight: str | None = None,
               alpha: float = 0.05) -> pd.DataFrame:
    """NPS per wave, one series per value of ``split``, flagged by :func:`flag_changes`."""
    series = ([("All respondents", frame)] if split is None
              else segment_frames(frame, split, target))
    rows = []
    for name, part in series:
        for result in nps_by_results(part, target, wave, groups=groups, weight=weight):
            rows.append({"series": name, "wave": result.label, "n": result.n,
                         "nps": result.value, "ci_low": result.ci95[0],
                         "ci_high": result.ci95[1], "se": result.se})
    table = pd.DataFrame(rows, columns=["series", "wave", "n", "nps", "ci_low", "ci_high", "se"])
    return flag_changes(table, alpha=alpha)


def flag_changes(table: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Add ``change``, ``p``, ``p_holm`` and ``flag`` to a table of net scores in time order
    (columns ``series``, ``nps``, ``se``): each row against the previous row of its series with
    an estimate (NaN rows are skipped); Holm over every change of the table.

    >>> t = pd.DataFrame({"series": ["all"] * 3, "nps": [10.0, 11.0, 20.0], "se": [2.0] * 3})
    >>> flag_changes(t)["flag"].tolist()
    ['no significant difference', 'no significant difference', 'significant rise']
    """
    out = table.copy()
    change = np.full(len(out), np.nan)
    p = np.full(len(out), np.nan)
    values = pd.to_numeric(out["nps"], errors="coerce").to_numpy(dtype=float)
    ses = pd.to_numeric(out["se"], errors="coerce").to_numpy(dtype=float)
    for _, positions in out.groupby("series", sort=False).indices.items():
        previous = None
        for i in positions:
            if not np.isfinite(values[i]):
                continue
            if previous is not None:
                delta = values[i] - values[previous]
                change[i], p[i] = delta, change_test(delta, float(np.hypot(ses[i],
                                                                           ses[previous])))[1]
            previous = i
    out["change"], out["p"] = change, p
    return _flagged(out, "change", alpha, FLAG_UP, FLAG_DOWN)


def _flagged(table: pd.DataFrame, delta: str, alpha: float, up: str, down: str) -> pd.DataFrame:
    """``table`` with ``p_holm`` (Holm over its ``p``) and ``flag`` (by the sign of ``delta``)."""
    table["p_holm"] = holm(table["p"].tolist())
    significant = table["p_holm"] < alpha
    table["flag"] = np.where(significant & (table[delta] > 0), up,
                             np.where(significant & (table[delta] < 0), down, FLAG_NONE))
    return table
