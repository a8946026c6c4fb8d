"""A chart kept as its Vega-Lite spec, for a page to cache and draw again.

:func:`vega_lite_spec` gives the spec Streamlit draws, so a page need not build and validate the
Altair chart on every run."""

from __future__ import annotations

from collections.abc import Mapping

import altair as alt

__all__ = ["vega_lite_spec"]


def vega_lite_spec(chart: alt.TopLevelMixin) -> dict:
    """The chart's Vega-Lite spec (validated against the schema, its data inline in
    ``datasets``) as a host with a theme of its own draws it: without what Altair's
    ``"default"`` theme adds (a 300 × 300 view size), as Streamlit's ``st.altair_chart`` does.
    A plain dict, so that a page can keep it (``st.cache_data``) and draw it again with
    ``st.vega_lite_chart`` without building and validating the chart on every run."""
    spec = chart.to_dict()
    if alt.theme.active == "default":
        _drop_defaults(spec, alt.theme.get()())
    return spec


def _drop_defaults(spec: dict, defaults: Mapping) -> None:
    """Remove from ``spec`` (in place) every leaf equal to the same leaf of ``defaults``, and
    the dicts that leaves empty."""
    for key, default in defaults.items():
        value = spec.get(key)
        if isinstance(default, Mapping) and isinstance(value, dict):
            _drop_defaults(value, default)
            if not value:
                del spec[key]
        elif key in spec and value == default:
            del spec[key]
