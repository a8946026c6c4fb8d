"""Issue 25 point 6: only a recommend question on 0–10 is an NPS. ``cx-app nps`` on any other
target prints a net score with neutral group names — no "NPS", "promoter" or "detractor" in its
text, nor in its JSON (keys and values) — and still says NPS on a real recommend question."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from cx_app.cli import main

NPS_WORDS = re.compile(r"nps|promoter|detractor", re.IGNORECASE)
ATTITUDE = "Overall opinion of Bank X (0-10)"
RECOMMEND = "How likely are you to recommend Bank X? (0-10)"
SATISFACTION = "Overall satisfaction (1-3)"


def survey_file(folder, target: str, scale: tuple[int, int], seed: int = 5) -> str:
    rng = np.random.default_rng(seed)
    n = 240
    attributes = rng.integers(1, 6, size=(n, 3))
    lo, hi = scale
    score = np.clip(np.rint(lo + (hi - lo) * (attributes.mean(axis=1) - 1) / 4
                            + rng.normal(0, 1, n)), lo, hi).astype(int)
    frame = pd.DataFrame({"Customer ID": np.arange(1, n + 1), "Wave": rng.choice(["W1", "W2"], n),
                          target: score, "Staff (1-5)": attributes[:, 0],
                          "Prices (1-5)": attributes[:, 1], "App (1-5)": attributes[:, 2]})
    path = folder / "survey.csv"
    frame.to_csv(path, index=False)
    return str(path)


def words_in(document: object) -> list[str]:
    """Every key and string value of a JSON document."""
    if isinstance(document, dict):
        return [w for k, v in document.items() for w in (str(k), *words_in(v))]
    if isinstance(document, list):
        return [w for v in document for w in words_in(v)]
    return [document] if isinstance(document, str) else []


def run(capsys, *argv: str) -> tuple[str, dict]:
    assert main(["nps", *argv]) == 0
    text = capsys.readouterr().out
    assert main(["nps", *argv, "--json"]) == 0
    return text, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("target, scale, groups", [
    (ATTITUDE, (0, 10), ("low", "middle", "high")),
    (SATISFACTION, (1, 3), ("dissatisfied", "neutral", "satisfied")),
])
def test_a_target_that_is_no_recommend_question_is_a_net_score(tmp_path, capsys, target, scale,
                                                                groups):
    path = survey_file(tmp_path, target, scale)
    text, document = run(capsys, path, "--by", "Wave")
    assert not NPS_WORDS.search(text), text
    found = [w for w in words_in(document) if NPS_WORDS.search(w)]
    assert found == []
    assert document["score"] == {"name": "net score (top box − bottom box)",
                                 "recommend_question": False}
    names = (document["groups"]["negative"]["name"], document["groups"]["neutral"]["name"],
             document["groups"]["positive"]["name"])
    assert names == groups
    assert "Net score = % " + groups[2] in text
    # the value is still top box − bottom box, by hand; a 0–10 item that is no recommend
    # question splits symmetrically: low 0–4, high 6–10 (issue 37)
    scores = pd.read_csv(path)[target]
    top, bottom = (scores >= 6, scores <= 4) if scale == (0, 10) else (scores == 3, scores == 1)
    assert document["overall"]["value"] == pytest.approx(100 * (top.mean() - bottom.mean()))


def test_a_recommend_question_on_0_to_10_is_still_an_nps(tmp_path, capsys):
    text, document = run(capsys, survey_file(tmp_path, RECOMMEND, (0, 10)), "--by", "Wave")
    assert "NPS = % promoters (9–10) − % detractors (0–6)" in text
    assert document["score"] == {"name": "NPS", "recommend_question": True}
    assert document["groups"]["positive"]["name"] == "promoters"
    assert document["groups"]["negative"]["name"] == "detractors"


def test_the_mapping_flags_follow_the_same_rule(tmp_path, capsys):
    path = survey_file(tmp_path, ATTITUDE, (0, 10))
    flags = ["--target", ATTITUDE, "--scale", "0-10", "--attributes",
             "Staff (1-5),Prices (1-5),App (1-5)"]
    text, document = run(capsys, path, *flags)
    assert not NPS_WORDS.search(text)
    assert document["score"]["recommend_question"] is False
    # the analyst may say it is a recommend question after all (--kind nps)
    text, document = run(capsys, path, *flags, "--kind", "nps")
    assert "NPS = % promoters" in text and document["score"]["recommend_question"] is True


def test_the_analyst_chooses_the_groups_of_an_opinion_item(tmp_path, capsys):
    """Issue 37, point 7: the default groups of a 0–10 opinion item are the symmetric split,
    said in the output; --low-up-to / --high-from choose others (hand-computed values)."""
    path = survey_file(tmp_path, ATTITUDE, (0, 10))
    scores = pd.read_csv(path)[ATTITUDE]
    text, document = run(capsys, path)
    assert "a symmetric split around the middle of the scale" in text
    assert not NPS_WORDS.search(text)
    assert document["groups"]["negative"]["scores"] == [0, 1, 2, 3, 4]
    assert document["groups"]["positive"]["scores"] == [6, 7, 8, 9, 10]
    assert document["overall"]["value"] == pytest.approx(
        100 * ((scores >= 6).mean() - (scores <= 4).mean()))
    text, document = run(capsys, path, "--low-up-to", "3", "--high-from", "8")
    assert document["groups"]["negative"]["scores"] == [0, 1, 2, 3]
    assert document["groups"]["neutral"]["scores"] == [4, 5, 6, 7]
    assert document["overall"]["value"] == pytest.approx(
        100 * ((scores >= 8).mean() - (scores <= 3).mean()))
    assert main(["nps", path, "--low-up-to", "7", "--high-from", "5"]) == 2
    assert "must end below" in capsys.readouterr().err
