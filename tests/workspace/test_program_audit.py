"""``cx-app program add-wave … --audit SAMPLE``: the tracker shows the audited net score (the
library's :func:`cx_app.estimate.audit.audit_wave` on the same files) and says so."""

from __future__ import annotations

import contextlib
import io
import json

import pandas as pd
import pytest
from workspace_helpers import copy_of

from cx_app.cli import main
from cx_app.estimate.audit import audit_wave
from cx_app.estimate.new_wave import estimate_wave
from cx_app.survey.importing import load_survey
from cx_app.workspace.programs import Workspace

TARGET = "Likelihood to recommend (0-10)"


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_add_wave_with_an_audit_shows_the_audited_estimate(program_file, survey_files,
                                                           tmp_path):
    url = copy_of(program_file, tmp_path)
    labelled = pd.read_csv(survey_files["W03"])
    wave, sample = tmp_path / "wave.csv", tmp_path / "audit.csv"
    labelled.drop(columns=[TARGET]).to_csv(wave, index=False)
    labelled.sample(60, random_state=0).to_csv(sample, index=False)
    code, _, err = _cli("program", "add-wave", "telecom", str(wave), "--audit", str(sample),
                        "--db", url)
    assert code == 0, err
    code, out, err = _cli("program", "show", "telecom", "--json", "--db", url)
    assert code == 0, err
    shown = json.loads(out)["waves"][0]["estimated_nps"]
    with Workspace.open(url) as ws:  # the library path on the same files
        model = ws.program_model("telecom")
    read = dict(schema=model.schema, require_target=False, scoring=True,
                require_attributes=False)
    survey = load_survey(wave, **read)
    est = estimate_wave(model, survey)
    audited = audit_wave(model, survey, est, load_survey(sample, **read)).audited_nps
    assert shown["value"] == audited.value and shown["ci95"] == audited.ci95
    assert shown["audited_n"] == 60
    assert shown["label_free"] == pytest.approx(est.estimated_nps.value, abs=1e-9)
    assert shown["covers"].startswith("audited")
    code, out, _ = _cli("program", "show", "telecom", "--db", url)
    assert "audited NPS" in out and "from 60 audited answers" in out
    # two wave files with one audit sample: refused in one sentence
    code, _, err = _cli("program", "add-wave", "telecom", str(wave), str(survey_files["W01"]),
                        "--audit", str(sample), "--db", url)
    assert code != 0 and "one wave" in err
    # the wave again with an audit: not silently kept without it
    code, _, err = _cli("program", "add-wave", "telecom", str(wave), "--audit", str(sample),
                        "--db", url)
    assert code != 0 and "remove it first" in err
