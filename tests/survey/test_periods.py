"""Segment values in the order a person reads them (cx_app.survey.periods): the changes between
consecutive waves are between the right waves."""

import numpy as np
import pandas as pd
import pytest

from cx_app.cli import main
from cx_app.survey.nps import MISSING_SEGMENT, segment_frames
from cx_app.survey.periods import label_order


def test_months_and_quarters_sort_in_time_and_other_labels_naturally():
    frame = pd.DataFrame({"wave": ["April 2026", "March 2026", "May 2026", None, "March 2026"],
                          "y": [1, 2, 3, 4, 5]})
    assert [label for label, _ in segment_frames(frame, "wave")] == [
        "March 2026", "April 2026", "May 2026", MISSING_SEGMENT]
    assert label_order(["Q1 2027", "Q4 2026", "2026 Q3"]) == ["2026 Q3", "Q4 2026", "Q1 2027"]
    # a column where one label names no period is sorted naturally, as text with numbers
    assert label_order(["Store 10", "Store 9", "Store 1"]) == ["Store 1", "Store 9", "Store 10"]
    assert label_order(["May", "April 2026"]) == ["April 2026", "May"]
    assert label_order(["Bank B", "Bank A"]) == ["Bank A", "Bank B"]


def test_wave_on_wave_changes_are_between_consecutive_months(tmp_path, capsys):
    rng = np.random.default_rng(3)
    months = ["April 2026", "March 2026", "May 2026"]  # the file's order is not the waves'
    scores = {m: rng.integers(0, 11, 60) for m in months}
    rows = [(m, s, 1 + i % 5, 1 + (i * 2) % 5) for m in months for i, s in enumerate(scores[m])]
    path = tmp_path / "waves.csv"
    pd.DataFrame(rows, columns=["Survey wave", "How likely are you to recommend us?",
                                "Speed", "Price"]).to_csv(path, index=False)
    assert main(["nps", str(path), "--by", "survey_wave", "--json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    waves = next(b for b in doc["by"] if b["results"][0]["label"] == "March 2026")
    assert [r["label"] for r in waves["results"]] == ["March 2026", "April 2026", "May 2026"]

    def nps(s):
        return 100 * ((s >= 9).mean() - (s <= 6).mean())

    assert [c["delta"] for c in waves["changes"]] == pytest.approx(
        [nps(scores["April 2026"]) - nps(scores["March 2026"]),
         nps(scores["May 2026"]) - nps(scores["April 2026"])])
