"""``cx-app report``: re-render saved results (and a new-wave estimate) to .xlsx or .html."""

from __future__ import annotations

import json

import openpyxl
from report_fixtures import HOSTILE_MODEL, make_new_wave, make_results

from cx_app.cli import main
from cx_app.models.names import model_display_name
from cx_app.reports import write_reports


def _write_inputs(tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps(make_results()), encoding="utf-8")
    wave = tmp_path / "estimate.json"
    wave.write_text(json.dumps(make_new_wave()), encoding="utf-8")
    return results, wave


def test_report_to_xlsx_with_new_wave(tmp_path, capsys):
    results, wave = _write_inputs(tmp_path)
    out = tmp_path / "report.xlsx"
    assert main(["report", str(results), "--new-wave", str(wave), "--out", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    book = openpyxl.load_workbook(out)
    assert "New wave" in book.sheetnames
    about = book["About"]
    assert "results.json" in [c.value for row in about.iter_rows() for c in row]


def test_report_to_html_without_new_wave(tmp_path):
    results, _ = _write_inputs(tmp_path)
    out = tmp_path / "report.html"
    assert main(["report", str(results), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and 'id="sec-new_wave"' not in text
    assert "=HYPERLINK(&quot;http://evil.example&quot;,&quot;x&quot;)" in text


def test_bad_inputs_are_one_clear_sentence(tmp_path, capsys):
    results, _ = _write_inputs(tmp_path)
    assert main(["report", str(tmp_path / "missing.json"), "--out", str(tmp_path / "r.xlsx")]) == 2
    assert "missing.json does not exist" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert main(["report", str(broken), "--out", str(tmp_path / "r.html")]) == 2
    assert "cannot be read as JSON" in capsys.readouterr().err
    assert main(["report", str(results), "--out", str(tmp_path / "r.pdf")]) == 2
    assert "use a name ending in .xlsx or .html" in capsys.readouterr().err
    assert not (tmp_path / "r.pdf").exists()


def test_write_reports_writes_both_files(tmp_path):
    paths = write_reports(make_results(), tmp_path / "out")
    assert set(paths) == {"xlsx", "html"}
    assert paths["xlsx"].name == "report.xlsx" and paths["html"].name == "report.html"
    book = openpyxl.load_workbook(paths["xlsx"])
    models = [c.value for row in book["Metrics"].iter_rows() for c in row]
    assert HOSTILE_MODEL in models
    assert "window.vegaEmbed" in paths["html"].read_text(encoding="utf-8")


def test_report_from_a_real_evaluate_run(tmp_path):
    """``cx-app evaluate`` on a small sample (3 folds, lr + nb), then ``cx-app report``: every
    level's metrics and matrices in the workbook equal results.json."""
    from pathlib import Path

    sample = Path(__file__).resolve().parents[2] / "sample_surveys" / "retail_csat.csv"
    lines = sample.read_text(encoding="utf-8").splitlines()[:241]
    survey = tmp_path / "small.csv"
    survey.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out_dir = tmp_path / "ev"
    assert main(["evaluate", str(survey), "--algorithms", "lr,nb", "--folds", "3",
                 "--permutation-repeats", "1", "--out", str(out_dir)]) == 0
    results_path = out_dir / "results.json"
    results = json.loads(results_path.read_text(encoding="utf-8"))
    xlsx, html = tmp_path / "r.xlsx", tmp_path / "r.html"
    assert main(["report", str(results_path), "--out", str(xlsx)]) == 0
    assert main(["report", str(results_path), "--out", str(html)]) == 0

    book = openpyxl.load_workbook(xlsx)
    assert all(c.data_type != "f" for ws in book for row in ws.iter_rows() for c in row)
    metrics = book["Metrics"]
    for level_name in ("original", "3x3+IM", "2x2+IM"):
        title_row = next(r for r in range(1, metrics.max_row + 1)
                         if metrics.cell(r, 1).value == f"Level {level_name}")
        header = {metrics.cell(title_row + 1, c).value: c
                  for c in range(1, metrics.max_column + 1)}
        for offset, model_id in enumerate(results["models"]):
            row = title_row + 2 + offset
            assert metrics.cell(row, 1).value == model_display_name(model_id)
            values = results["models"][model_id]["levels"][level_name]["metrics"]
            assert metrics.cell(row, header["Accuracy"]).value == values["accuracy"]
            if level_name == "2x2+IM":
                assert metrics.cell(row, header["Matthews correlation (MCC)"]).value == values["mcc"]
                assert metrics.cell(row, header["Positive intragroup mismatch (IMP)"]).value == \
                    values["imp"]
    assert "Data quality" in book.sheetnames and "About" in book.sheetnames
    about = [c.value for row in book["About"].iter_rows() for c in row]
    assert results["provenance"]["sha256"] in about
    prov = results["provenance"]
    import hashlib

    from cx_app.provenance import library_versions
    assert prov["inputs"] == {"small.csv": hashlib.sha256(survey.read_bytes()).hexdigest()}
    assert prov["schema_sha256"] == hashlib.sha256(prov["schema_yaml"].encode()).hexdigest()
    assert "name: small" in prov["schema_yaml"] or "target:" in prov["schema_yaml"]
    assert (prov["seed"], prov["folds"], prov["preset"]) == (0, 3, "fast")  # the default preset
    assert prov["versions"] == library_versions() and prov["created"].endswith("+00:00")
    assert prov["schema_sha256"] in about and prov["created"] in about
    text = html.read_text(encoding="utf-8")
    assert 'id="sec-drivers"' in text and "window.vegaEmbed" in text


def _estimate_with(tmp_path, name, **model_changes):
    wave = make_new_wave()
    wave["model"].update(model_changes)
    path = tmp_path / name
    path.write_text(json.dumps(wave), encoding="utf-8")
    return path


def test_a_foreign_estimate_is_refused_naming_both_sides(tmp_path, capsys):
    results, _ = _write_inputs(tmp_path)
    out = tmp_path / "r.xlsx"
    other = _estimate_with(tmp_path, "other.json", training_sha256="cd" * 32,
                           training_file="bank.csv")
    assert main(["report", str(results), "--new-wave", str(other), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "other.json was made with a model trained on bank.csv (SHA-256 cdcdcdcdcdcd…)" in err
    assert "results.json are of wave =1.xlsx (SHA-256 abababababab…)" in err
    assert not out.exists()

    renamed = _estimate_with(tmp_path, "renamed.json", attributes=["-price", "speed"])
    assert main(["report", str(results), "--new-wave", str(renamed), "--out", str(out)]) == 2
    assert "renamed.json was made with a model of the attributes -price, speed" in \
        capsys.readouterr().err

    old = _estimate_with(tmp_path, "old.json", attributes=None)
    assert main(["report", str(results), "--new-wave", str(old), "--out", str(out)]) == 2
    assert "old.json does not record which model" in capsys.readouterr().err
    assert not out.exists()


def test_foreign_classes_are_refused(tmp_path, capsys):
    results, _ = _write_inputs(tmp_path)
    wave = make_new_wave()
    wave["classes"] = [0, 1, 2, 3]
    path = tmp_path / "classes.json"
    path.write_text(json.dumps(wave), encoding="utf-8")
    assert main(["report", str(results), "--new-wave", str(path), "--out",
                 str(tmp_path / "r.html")]) == 2
    assert "classes.json has the classes [0, 1, 2, 3], but results.json have" in \
        capsys.readouterr().err


def test_an_estimate_of_another_model_file_is_refused_with_a_project(tmp_path, capsys):
    """With a project, the estimate's model file must be one of the project's final models."""
    from unittest import mock

    from cx_app.project import Project

    results, wave = _write_inputs(tmp_path)
    project = Project(schema_yaml="", plan={}, survey=None, results=results.read_text())
    with mock.patch("cx_app.project.read_project", return_value=project), \
            mock.patch.object(Project, "final_model_sha256", return_value=["34" * 32]):
        assert main(["report", "--project", "p.cxproj", "--new-wave", str(wave),
                     "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "estimate.json was made with the model file 121212121212…, which is not one of the " \
           "models of p.cxproj (343434343434…)" in err
    assert not (tmp_path / "out").exists()


def test_real_estimates_are_accepted_or_refused_by_their_training_survey(tmp_path, capsys):
    """evaluate + train on one survey, estimate a wave: the report takes it; a model trained
    on other respondents gives an estimate the same report refuses, naming both files."""
    from pathlib import Path

    sample = Path(__file__).resolve().parents[2] / "sample_surveys" / "retail_csat.csv"
    lines = sample.read_text(encoding="utf-8").splitlines()
    first, other = tmp_path / "first.csv", tmp_path / "other.csv"
    first.write_text("\n".join(lines[:241]) + "\n", encoding="utf-8")
    other.write_text("\n".join([lines[0], *lines[241:481]]) + "\n", encoding="utf-8")
    assert main(["evaluate", str(first), "--algorithms", "lr", "--folds", "3",
                 "--permutation-repeats", "1", "--out", str(tmp_path / "ev")]) == 0
    # the wave to estimate: one month of the other respondents (a file of several months is
    # tracked month by month, not estimated as one wave)
    month = lines[241].split(",")[2]
    wave = tmp_path / "wave.csv"
    wave.write_text("\n".join([lines[0], *(r for r in lines[241:481]
                                           if r.split(",")[2] == month)]) + "\n",
                    encoding="utf-8")
    estimates = {}
    for survey in (first, other):
        model = tmp_path / f"{survey.stem}.skops"
        assert main(["train", str(survey), "--algorithm", "lr", "--calibration", "none",
                     "--folds", "3", "--out", str(model)]) == 0
        capsys.readouterr()
        assert main(["estimate", "--model", str(model), str(wave), "--json"]) == 0
        estimates[survey.stem] = tmp_path / f"est_{survey.stem}.json"
        estimates[survey.stem].write_text(capsys.readouterr().out, encoding="utf-8")
    results = tmp_path / "ev" / "results.json"
    out = tmp_path / "r.html"
    assert main(["report", str(results), "--new-wave", str(estimates["first"]),
                 "--out", str(out)]) == 0
    assert 'id="sec-new_wave"' in out.read_text(encoding="utf-8")
    import hashlib

    model_sha = hashlib.sha256((tmp_path / "first.skops").read_bytes()).hexdigest()
    assert model_sha in out.read_text(encoding="utf-8")  # About: the model file's SHA-256
    capsys.readouterr()
    assert main(["report", str(results), "--new-wave", str(estimates["other"]),
                 "--out", str(tmp_path / "r2.html")]) == 2
    err = capsys.readouterr().err
    assert "est_other.json was made with a model trained on other.csv" in err
    assert "but results.json are of first.csv" in err
