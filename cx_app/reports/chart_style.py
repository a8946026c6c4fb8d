"""Chart style shared by every chart builder: colours, label text, band heights, axis domains."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from cx_app.safe_text import plain_text, short_labels

CATEGORY_COLOURS: tuple[str, ...] = ("#c0392b", "#9aa5ab", "#2e8b57", "#1f6f8b", "#8e6c8a")
"""The first-step groups in scale order: detractors red, passives grey, promoters green."""

IM_COLOUR_SCHEME = "oranges"
CELL_COLOUR_SCHEME = "blues"


def labels_as_text(values: Sequence[object]) -> list[str]:
    """Without control characters, at most :data:`~cx_app.safe_text.LABEL_LIMIT` characters
    each (distinct values stay distinct)."""
    return short_labels(plain_text(str(v)) for v in values)


def chart_labels(column: pd.Series) -> pd.Series:
    return pd.Series(labels_as_text(column), index=column.index, name=column.name)


def band_height(chart, n: int, step: int = 34, minimum: int = 90):
    """``step`` pixels per band on y; ``fit-x``: the width follows the page while the height is
    the plot's own, so the bands are never squeezed together with the axis and its title."""
    return chart.properties(height=max(minimum, step * n),
                            autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))


BAND_AXIS = alt.Axis(labelLimit=260, labelOverlap=False)


def fitted_domain(low: pd.Series, high: pd.Series, *, include_zero: bool = True) -> list[float]:
    """The intervals' extent plus 5 points, inside −100..100: a fixed −100..100 axis squeezes a
    ten-point gap between segments into a few pixels."""
    values = pd.concat([low, high]).astype(float)
    values = values[np.isfinite(values)]
    lo, hi = (float(values.min()), float(values.max())) if len(values) else (-10.0, 10.0)
    if include_zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return [max(-100.0, lo - 5.0), min(100.0, hi + 5.0)]


# significance colours say direction (blue higher or better, orange lower or worse), not good/bad
HIGHER_COLOUR, LOWER_COLOUR, NO_DIFFERENCE_COLOUR = "#2166ac", "#e08214", "#b8bec2"
