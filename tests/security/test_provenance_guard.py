"""Issue 24, case 10: ``cx-app report --new-wave`` must refuse an estimate of a model that is not
one of the results' models, even when that model was trained on the very same survey file.

Reproduced as the probe did it: ``cx-app evaluate`` with ``lr`` only, ``cx-app train`` of ``lr``
and of ``dt`` on the same file, an estimate of a wave with each. Before, both estimates were
accepted; now the ``dt`` one is refused in one sentence naming both sides, the ``lr`` one still
goes into the report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_fixtures import make_new_wave, make_results

from cx_app.cli import main
from cx_app.estimate.document import WaveEstimateDocument, check_estimate_belongs
from cx_app.models.results import Results, ResultsError

ROOT = Path(__file__).resolve().parents[2]


def test_an_estimate_of_a_model_the_results_do_not_hold_is_refused(tmp_path, capsys,
                                                                   json_estimates):
    out = tmp_path / "r.html"
    assert main(["report", str(json_estimates["results"]), "--new-wave",
                 str(json_estimates["dt"]), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("error: estimate_dt.json was made with a model of the algorithm dt (fast "
                   "preset), which is not one of the models of results.json (lr): they do not "
                   "belong together.")
    assert not out.exists()


def test_an_estimate_of_the_results_own_model_is_accepted(tmp_path, capsys, json_estimates):
    out = tmp_path / "r.html"
    assert main(["report", str(json_estimates["results"]), "--new-wave",
                 str(json_estimates["lr"]), "--out", str(out)]) == 0
    assert 'id="sec-new_wave"' in out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def json_estimates(tmp_path_factory) -> dict[str, Path]:
    """The estimates as ``cx-app estimate --json`` prints them, written to files."""
    import contextlib
    import io

    tmp = tmp_path_factory.mktemp("guard")
    lines = (ROOT / "sample_surveys" / "retail_csat.csv").read_text(encoding="utf-8")
    lines = lines.splitlines()
    survey, wave = tmp / "survey.csv", tmp / "wave.csv"
    survey.write_text("\n".join(lines[:241]) + "\n", encoding="utf-8")
    month = lines[241].split(",")[2]
    wave.write_text("\n".join([lines[0], *(r for r in lines[241:481]
                                           if r.split(",")[2] == month)]) + "\n",
                    encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["evaluate", str(survey), "--algorithms", "lr", "--folds", "3",
                     "--permutation-repeats", "1", "--out", str(tmp / "ev")]) == 0
    paths = {"results": tmp / "ev" / "results.json"}
    for algorithm in ("lr", "dt"):
        model = tmp / f"{algorithm}.skops"
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["train", str(survey), "--algorithm", algorithm, "--calibration",
                         "none", "--folds", "3", "--out", str(model)]) == 0
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            assert main(["estimate", "--model", str(model), str(wave), "--json"]) == 0
        paths[algorithm] = tmp / f"estimate_{algorithm}.json"
        paths[algorithm].write_text(printed.getvalue(), encoding="utf-8")
    return paths


@pytest.mark.parametrize("change, refused", [
    ({"algorithm": "rf"}, "a model of the algorithm rf (papers preset), which is not one of "
                          "the models of results.json"),
    ({"preset": "fast"}, "a model of the algorithm lr (fast preset), which is not one of the "
                         "models of results.json"),
    ({}, None),
])
def test_the_model_identity_is_its_algorithm_and_preset_among_the_results(change, refused):
    """The results' models of the fixture are evaluated under the papers preset (documents
    written before presets existed): only an estimate by one of them belongs."""
    results = Results.from_dict(make_results(), source="results.json")
    wave = make_new_wave()
    wave["model"].update(change)
    estimate = WaveEstimateDocument.from_dict(wave)
    if refused is None:
        check_estimate_belongs(results, estimate, results_name="results.json")
        return
    with pytest.raises(ResultsError) as info:
        check_estimate_belongs(results, estimate, results_name="results.json",
                               estimate_name="w.json")
    assert str(info.value).startswith(f"w.json was made with {refused} (")
    assert "\n" not in str(info.value)


def test_with_a_project_the_model_file_itself_must_be_one_of_its_final_models():
    """A project names its final model files: the same algorithm from another file is not
    enough."""
    results = Results.from_dict(make_results(), source="results.json")
    estimate = WaveEstimateDocument.from_dict(make_new_wave())
    own = estimate.model.file_sha256
    check_estimate_belongs(results, estimate, model_sha256=[own])
    with pytest.raises(ResultsError, match=r"was made with the model file 121212121212…, which "
                                           r"is not one of the models of p.cxproj"):
        check_estimate_belongs(results, estimate, results_name="p.cxproj",
                               model_sha256=["34" * 32])
    assert json.loads(estimate.to_json())["model"]["file_sha256"] == own
