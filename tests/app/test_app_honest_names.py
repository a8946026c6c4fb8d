"""Issue 25 point 6 in the app: the Data page asks "Is this an NPS (recommend) question?" with
the inferred answer; on a 0–10 item that is no recommend question the NPS page shows a net
score with low / middle / high groups and no "NPS", "promoter" or "detractor" anywhere (title,
metrics, texts, tables, charts); answering "Yes" turns it into an NPS with promoters and
detractors, computed from the same scores."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from cx_app.survey.importing import load_survey
from cx_app.survey.nps import groups_for_schema, nps_summary

sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
from test_cli_honest_names import ATTITUDE, survey_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 120
NPS_WORDS = re.compile(r"nps|promoter|detractor", re.IGNORECASE)
QUESTION = "Is this an NPS (recommend) question?"


def page_text(at: AppTest) -> list[str]:
    """Every text the page shows: titles, texts, captions, markdown, metric labels and values,
    table headers and cells, chart specs (axis titles, tooltips, data)."""
    texts: list[str] = []
    for kind in ("title", "header", "subheader", "caption", "text", "markdown", "info",
                 "warning", "success"):
        texts += [str(e.value) for e in getattr(at, kind)]
    texts += [f"{m.label} {m.value}" for m in at.metric]
    texts += [s.label for s in at.selectbox]
    for frame in at.dataframe:
        value: pd.DataFrame = frame.value
        texts += [str(c) for c in value.columns] + [str(v) for v in value.to_numpy().ravel()]
    for chart in at.get("vega_lite_chart"):
        texts += shown_in_chart(json.loads(chart.proto.spec))
    return texts


def shown_in_chart(spec: object, key: str = "") -> list[str]:
    """The strings a Vega-Lite spec shows: titles, texts and data values (not the data's
    column names, e.g. ``nps``, which no reader sees)."""
    if isinstance(spec, dict):
        return [t for k, v in spec.items() if k not in ("field", "$schema")
                for t in shown_in_chart(v, k)]
    if isinstance(spec, list):
        return [t for v in spec for t in shown_in_chart(v, key)]
    return [spec] if isinstance(spec, str) else []


@pytest.fixture(scope="module")
def upload(tmp_path_factory):
    path = Path(survey_file(tmp_path_factory.mktemp("attitude"), ATTITUDE, (0, 10)))
    return path, load_survey(path)


def test_a_non_recommend_item_is_a_net_score_and_the_analyst_can_say_otherwise(upload):
    path, expected = upload
    assert not expected.schema.is_nps  # inferred: an attitude item, not a recommend question
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.file_uploader(key="uploader").upload(path.name, path.read_bytes(), "text/csv").run()
    assert not at.exception
    question = next(r for r in at.radio if r.label == QUESTION)
    assert question.value == "No"  # the inferred answer
    at.switch_page("app_pages/nps.py").run()
    assert not at.exception and not at.error
    texts = page_text(at)
    assert [t for t in texts if NPS_WORDS.search(t)] == []
    assert "Net score" in texts  # the wave trend's axis: the charts are read too
    assert "where high and low differ most" in " ".join(texts)
    net = nps_summary(expected.scores, groups=groups_for_schema(expected.schema))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Net score (top box − bottom box)"] == f"{net.value:+.1f}"
    assert metrics["High"] == f"{100 * net.shares['high']:.1f}%"
    assert metrics["Low"] == f"{100 * net.shares['low']:.1f}%"
    assert at.title[0].value == "Net score overview"
    # the groups are said in words (issue 37): the symmetric split, not the NPS cut points
    assert any("Groups: low 0–4, middle 5, high 6–10, a symmetric split" in e.label
               for e in at.expander)
    # the analyst's own groups on this page: low up to 3, high from 8 (by hand)
    at.select_slider(key="groups_low").set_value(3).run()
    at.select_slider(key="groups_high").set_value(8).run()
    assert not at.exception and not at.error
    scores = pd.Series(expected.scores)
    chosen = 100 * ((scores >= 8).mean() - (scores <= 3).mean())
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Net score (top box − bottom box)"] == f"{chosen:+.1f}"
    assert "Groups chosen here: low 0–3, middle 4–7, high 8–10." in [c.value for c in at.caption]

    # the analyst says it is a recommend question: the same scores become an NPS, at the NPS
    # cut points (0–6 / 9–10)
    at.switch_page("app_pages/data.py").run()
    next(r for r in at.radio if r.label == QUESTION).set_value("Yes").run()
    assert not at.exception
    schema = at.session_state["analysis"].survey.schema
    assert schema.target.recommend is True and schema.is_nps
    at.switch_page("app_pages/nps.py").run()
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    nps = nps_summary(expected.scores)  # the NPS groups, by hand below
    assert nps.value == pytest.approx(100 * ((scores >= 9).mean() - (scores <= 6).mean()))
    assert metrics["NPS"] == f"{nps.value:+.1f}"
    assert metrics["Promoters"] == f"{100 * nps.shares['promoters']:.1f}%"
    assert metrics["Detractors"] == f"{100 * nps.shares['detractors']:.1f}%"
    assert "(the NPS cut points of a recommend question)" in " ".join(
        c.value for c in at.caption)
    assert at.title[0].value == "NPS overview"
