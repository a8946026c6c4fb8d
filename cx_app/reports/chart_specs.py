"""A chart kept as its Vega-Lite spec, for a page to cache and draw again."""

from __future__ import annotations

from collections.abc import Mapping

import altair as alt

__all__ = ["vega_lite_spec"]


def vega_lite_spec(chart: alt.TopLevelMixin) -> dict:
    """The validated spec as a host with a theme of its own draws it: without what Altair's
    ``"default"`` theme adds (a 300 × 300 view), as ``st.altair_chart`` does."""
    spec = chart.to_dict()
    if alt.theme.active == "default":
        _drop_defaults(spec, alt.theme.get()())
    return spec


def _drop_defaults(spec: dict, defaults: Mapping) -> None:
    """In place, every leaf equal to the default's, and the dicts that leaves empty."""
    for key, default in defaults.items():
        value = spec.get(key)
        if isinstance(default, Mapping) and isinstance(value, dict):
            _drop_defaults(value, default)
            if not value:
                del spec[key]
        elif key in spec and value == default:
            del spec[key]
