"""Issue 33, case 2: a model whose arrays make one prediction need gigabytes (a neural network
with one hidden layer of 400,000 units, and a deep one) inside a real model file.

The wide one passes every structural check and the sandbox's 9-row prediction; before the fix
estimating a 1,200-row wave with it took the CLI to 4.2 GB. Now a wave is predicted in batches
whose memory is computed from the model's arrays (``CX_APP_PREDICT_BATCH_MB``), so the CLI's
peak stays within the normal model's peak + the model's own arrays + one batch + 200 MB; the
deep one holds more numbers than ``CX_APP_MODEL_MAX_PARAMETERS`` and is refused in one sentence
by the limited child before the CLI's process opens it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from crafted_models import DEEP, WAVE, WIDE, honest_network, reshaped, untrusted_file

from cx_app.errors import ModelFileError
from cx_app.estimate.model_size import (
    DEFAULT_BATCH_MB,
    DEFAULT_MAX_PARAMETERS,
    batch_rows,
    check_model_size,
    limits,
    model_size,
)
from cx_app.survey.importing import load_survey

ROOT = Path(__file__).resolve().parents[2]
MB = 1024 * 1024
PEAK = """
import resource, sys
from cx_app.cli import main
code = main(sys.argv[1:])
print("PEAK_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""
"""The CLI in a process of its own, which reports its peak resident memory (kB) at exit."""


@pytest.fixture(scope="module")
def network():
    """A small network (``ann``) fitted on the bundled sample: the honest model."""
    return honest_network()


def _estimate(model_file: Path, checks: Path, extra: dict[str, str] | None = None
              ) -> tuple[int, str, str, int]:
    """``cx-app estimate --json`` of the sample's unlabelled wave in a process of its own:
    exit code, stdout, stderr, peak memory in bytes."""
    env = {**os.environ, "CX_APP_MODEL_CHECKS_DIR": str(checks), **(extra or {})}
    child = subprocess.run([sys.executable, "-c", PEAK, "estimate", "--model", str(model_file),
                            str(WAVE), "--json"], capture_output=True, text=True, env=env,
                           cwd=ROOT, timeout=600, check=False)
    peak = next(int(line.split()[1]) for line in child.stderr.splitlines()
                if line.startswith("PEAK_KB"))
    return child.returncode, child.stdout, child.stderr, peak * 1024


def test_the_size_of_a_network_is_counted_from_its_arrays(network):
    wide = reshaped(network, (WIDE,))
    inputs, classes = network.estimator[-1].coefs_[0].shape[0], len(network.classes)
    size, honest = model_size(wide.estimator[-1]), model_size(network.estimator[-1])
    hidden = network.estimator[-1].coefs_[0].shape[1]  # the papers' network: 6 units
    assert size.parameters - honest.parameters == (  # only the layers changed
        (inputs + 1 + classes) * WIDE - (inputs + 1 + classes) * hidden)
    assert size.widest == WIDE
    assert size.row_bytes == WIDE * 8 * 4
    assert batch_rows(size) == DEFAULT_BATCH_MB * MB // (WIDE * 32) == 5
    deep = reshaped(network, DEEP)
    assert model_size(deep.estimator[-1]).parameters - honest.parameters == (
        inputs * 300 + 300 + 39 * (300 * 300 + 300) + 300 * classes
        - (inputs + 1 + classes) * hidden)
    assert limits({}) == (DEFAULT_MAX_PARAMETERS, DEFAULT_BATCH_MB * MB) == (20_000_000, 64 * MB)
    counted = f"{model_size(deep.estimator).parameters:,}"
    with pytest.raises(ModelFileError, match=rf"^deep.skops: the model holds {counted} "
                                             r"numbers, more than the 1,000,000 .*"
                                             r"\(CX_APP_MODEL_MAX_PARAMETERS\); it was not used\.$"):
        check_model_size(deep.estimator, "deep.skops", {"CX_APP_MODEL_MAX_PARAMETERS": "1e6"})
    with pytest.raises(ModelFileError, match="a layer of 400,000 units.* 1 MB of one prediction"):
        check_model_size(wide.estimator, "wide.skops", {"CX_APP_PREDICT_BATCH_MB": "1"})


def test_batches_give_the_probabilities_of_one_prediction(network):
    survey = load_survey(WAVE, schema=network.schema, require_target=False, scoring=True)
    whole = network.predict_proba(survey.X)
    batched = dataclasses.replace(network)
    batched.__dict__["batch_rows"] = 7  # 7 rows a batch
    assert len(survey.X) > 7 * 10
    np.testing.assert_allclose(batched.predict_proba(survey.X), whole, rtol=0, atol=1e-12)


@pytest.mark.slow  # three CLI processes with their model checks (~40 s on two busy cores)
def test_the_cli_estimates_with_a_wide_network_within_its_cap_and_refuses_a_deep_one(
        network, tmp_path):
    honest = untrusted_file(network, tmp_path / "honest.skops")
    wide = untrusted_file(reshaped(network, (WIDE,)), tmp_path / "wide.skops")
    code, honest_out, err, honest_peak = _estimate(honest, tmp_path / "checks")
    assert code == 0, err
    code, wide_out, err, wide_peak = _estimate(wide, tmp_path / "checks")
    assert code == 0, err
    rows = json.loads(wide_out)["n"]
    assert rows >= 1_000
    arrays = model_size(reshaped(network, (WIDE,)).estimator).parameters * 8
    # unbatched, one prediction of these rows needed rows × 400,000 × 8 bytes per layer copy
    assert rows * WIDE * 8 > 3 * 1024 * MB
    assert wide_peak < honest_peak + 2 * arrays + DEFAULT_BATCH_MB * MB + 200 * MB, (
        wide_peak / MB, honest_peak / MB)
    deep = untrusted_file(reshaped(network, DEEP), tmp_path / "deep.skops")
    code, out, err, _ = _estimate(deep, tmp_path / "checks",
                                  {"CX_APP_MODEL_MAX_PARAMETERS": "1000000"})
    assert (code, out) == (2, "")
    assert "deep.skops: the model holds 3," in err and "CX_APP_MODEL_MAX_PARAMETERS" in err
