"""The metric catalogue covers every metric the engine computes, with a format and a direction."""

from __future__ import annotations

import numpy as np

from cx_app.engine import catalogue
from cx_app.engine.binary import BINARY_KEYS
from cx_app.engine.confusion import ConfusionMatrix, multiclass_metrics


def test_every_binary_key_of_the_engine_is_in_the_catalogue():
    assert set(BINARY_KEYS) <= set(catalogue.BINARY_METRICS)


def test_every_scalar_multiclass_metric_is_listed_and_defined():
    metrics = multiclass_metrics(ConfusionMatrix((0, 1, 2), np.array([[3, 1, 0], [1, 4, 1],
                                                                      [0, 2, 5]]))).to_dict()
    scalar = {k for k, v in metrics.items() if isinstance(v, float)}
    assert scalar == set(catalogue.MULTICLASS_ALL)
    assert set(catalogue.MULTICLASS_ALL) <= set(catalogue.MULTICLASS_METRICS)


def test_directions_and_formats():
    d = catalogue.metric_definition
    assert d("accuracy").direction == "higher" and d("accuracy").format == "percent"
    assert d("fnr", binary=True).direction == "lower"
    assert d("pimr", binary=True).direction == "lower"
    assert d("phi", binary=True).direction == "neither" and d("phi").format == "number"
    assert d("imp", binary=True).format == "count" and d("imp").direction == "lower"
    assert d("mcc", binary=True).format == "number" and d("mcc").direction == "higher"
    assert d("support").format == "count"


def test_summary_lists_name_defined_metrics_only():
    for keys, binary in ((catalogue.MULTICLASS_SUMMARY, False), (catalogue.BINARY_SUMMARY, True),
                         (catalogue.WAVE_SUMMARY, None), (catalogue.MACRO_SUMMARY, False)):
        for key in keys:
            assert catalogue.metric_definition(key, binary=binary) is not None, key
    assert catalogue.compared_metrics(True) == ("accuracy", "mcc")
    assert catalogue.compared_metrics(False) == ("accuracy", "f1_macro")
    assert catalogue.metric_name("no_such_metric") == "no_such_metric"
    assert catalogue.short_name("f1_macro") == "macro F1"
