"""Issue 27 point 7 on the command line: what every command prints for a person (not its
``--json``, not its files) names models, metrics, columns and codes in words — no snake_case
name, no internal code, no algorithm id — run for real on the bundled sample.

The folder the analyst typed (here the test's temporary folder) is their own word, not ours:
it is taken out of the text before the check, like the uploaded file's name in the app's test.
"""

from __future__ import annotations

import contextlib
import io
import shutil

import numpy as np
import pandas as pd
import pytest
import yaml
from plain_words import internal_words, model_codes

from cx_app.cli import main
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path

pytestmark = pytest.mark.slow  # every command on a trained program (~20 s)

SURVEY = "telecom.xlsx"
WAVE = "wave7.xlsx"
LABELED = "wave7 labeled.xlsx"


def _run(*argv: str) -> str:
    """``cx-app ARGV``: its stdout and stderr (it must succeed)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    assert code == 0, (argv, err.getvalue())
    return out.getvalue() + err.getvalue()


def _matrix_and_plan(folder) -> tuple[str, str]:
    """A crosstab of the sample's scores against the next respondent's (a poor "model"), and
    the sample's own reduction plan as a plan file."""
    survey = load_survey(SURVEY)
    actual = pd.Series(survey.y, name="actual")
    predicted = pd.Series(np.roll(survey.y, 1), name="predicted")
    classes = list(survey.classes)
    pd.crosstab(actual, predicted).reindex(index=classes, columns=classes, fill_value=0).to_csv(
        folder / "matrix.csv")
    plan = {"classes": classes,
            **survey.schema.plan_spec.model_dump(mode="json", exclude_none=True)}
    (folder / "plan.yaml").write_text(yaml.safe_dump(plan, sort_keys=False), encoding="utf-8")
    return "matrix.csv", "plan.yaml"


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> dict[str, str]:
    """Each command's human output, run in a folder holding copies of the bundled sample and
    its wave 7 (unlabelled and labelled)."""
    folder = tmp_path_factory.mktemp("cli")
    for name, sample in ((SURVEY, "telecom_nps"), (WAVE, "telecom_nps_wave7_unlabeled"),
                         (LABELED, "telecom_nps_wave7_labeled")):
        shutil.copyfile(sample_path(sample), folder / name)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.setenv("CX_APP_DATABASE_URL", f"sqlite:///{folder / 'workspace.db'}")
        matrix, plan = _matrix_and_plan(folder)
        runs = {
            "validate": _run("validate", SURVEY),
            "nps": _run("nps", SURVEY, "--by", "Region", "--by", "Wave"),
            "reduce": _run("reduce", matrix, "--plan", plan),
            "evaluate": _run("evaluate", SURVEY, "--algorithms", "lr,nb", "--folds", "3",
                             "--permutation-repeats", "1", "--five-by-two", "lr,nb",
                             "--out", "results"),
            "train": _run("train", SURVEY, "--algorithm", "nb", "--folds", "3",
                          "--report-gaps", "--out", "model.skops"),
            "estimate": _run("estimate", "--model", "model.skops", LABELED),
            "estimate by segment": _run("estimate", "--model", "model.skops", WAVE, LABELED,
                                        "--by", "Region"),
            "program create": _run("program", "create", "telecom", SURVEY,
                                   "--algorithm", "nb", "--preset", "papers", "--folds", "3"),
            "program add-wave": _run("program", "add-wave", "telecom", WAVE, LABELED),
            "program show": _run("program", "show", "telecom"),
            "program list": _run("program", "list"),
        }
    return {command: text.replace(str(folder), "FOLDER") for command, text in runs.items()}


@pytest.mark.parametrize("command", ["validate", "nps", "reduce", "evaluate", "train",
                                     "estimate", "estimate by segment", "program create",
                                     "program add-wave", "program show", "program list"])
def test_a_command_prints_no_internal_word(printed, command):
    lines = printed[command].splitlines()
    assert len(lines) >= 1
    assert internal_words(lines) == [], printed[command]
    assert model_codes(lines) == [], printed[command]


def test_models_columns_and_codes_are_named_in_words(printed):
    # attributes by their headers, the missing-answer policy in words
    assert "Tariff plan 34, Network - voice 30" in printed["validate"]
    # only svm and ordinal add the indicator (models/algorithms.py), so the words say so
    assert ("missing attribute scores: Keep; models fill with the training median (the "
            "support vector machine and ordinal logistic regression also add a 'was missing' "
            "flag)") in printed["validate"]
    # segments by their headers
    assert "By 'Region'" in printed["nps"] and "Region Attica:" in printed["estimate by segment"]
    assert "Region Attica:" in printed["program show"]
    # models by their algorithm's name, a preset in words
    assert "Logistic regression" in printed["evaluate"]
    assert "5×2cv Logistic regression vs Naive Bayes" in printed["evaluate"]
    assert "drivers (relative weights): Network - data, Tariff plan" in printed["evaluate"]
    assert "Naive Bayes (fast settings), 3-fold cross-validation" in printed["train"]
    assert "model Naive Bayes (fast settings), calibration" in printed["estimate"]
    assert "models Naive Bayes (papers' settings)" in printed["program show"]
    assert "model Naive Bayes (papers' settings), calibration" in printed["program create"]
    # metrics by their names, a plan's group code in words
    assert "macro F1" in printed["train"] and "Matthews correlation (MCC)" in printed["reduce"]
    assert "positive group 'passives and promoters'" in printed["reduce"]


def test_the_checks_catch_what_the_commands_once_printed():
    """Lines the commands printed before issue 27's point 7 was done."""
    before = ["missing codes: 99; missing attribute scores: impute_indicator",
              "unanswered attribute scores used by the models: tariff_plan 34",
              "lr     fast    0.373", "model svm papers (calibration isotonic)",
              "  original precision_macro  CM 0.162"]
    assert internal_words(before) == ["impute_indicator", "precision_macro", "tariff_plan"]
    assert model_codes(before) == ["lr", "svm"]
