"""Model display names (issue 27 point 7): a model id read as the algorithm's name, its preset
and its changed settings; ids that are not of that form are kept."""

from __future__ import annotations

import pytest

from cx_app.models.algorithms import ALGORITHMS, PRESETS, default_preset, preset_label
from cx_app.models.names import PRESET_WORDS, model_display_name, names_in_text


@pytest.mark.parametrize("algorithm_id", list(ALGORITHMS))
def test_every_algorithm_and_preset_reads_as_its_name(algorithm_id):
    name = ALGORITHMS[algorithm_id].name
    for preset in PRESETS:
        shown = model_display_name(preset_label(algorithm_id, preset))
        if preset == default_preset(algorithm_id):
            assert shown == name
        else:
            assert shown == f"{name} ({PRESET_WORDS[preset]})"


def test_changed_settings_and_seed_are_said():
    # the ids the app's model_label gives: changed settings after the preset, then the seed
    assert model_display_name("lr C=0.5") == "Logistic regression (C = 0.5)"
    assert model_display_name("svm papers C=2 seed=3") == (
        "Support vector machine (papers' settings, C = 2, seed 3)")
    assert model_display_name("rf n_estimators=500") == "Random forest (n estimators = 500)"
    assert len({model_display_name(m) for m in ("lr", "lr C=0.5", "lr seed=1", "lr fast")}) == 4


@pytest.mark.parametrize("model_id", ["my model", "lr-2", "lr C", "=HYPERLINK(\"x\")", "", "LR"])
def test_a_name_that_is_no_id_of_ours_is_kept(model_id):
    assert model_display_name(model_id) == model_id


def test_ids_in_a_sentence_are_read_as_names_whole_words_only():
    text = "svm papers is better than lr on original accuracy; widths and nbs stay"
    assert names_in_text(text, ["lr", "svm papers", "svm", "dt", "nb"]) == (
        "Support vector machine (papers' settings) is better than Logistic regression on "
        "original accuracy; widths and nbs stay")
    assert names_in_text("lr vs nb", []) == "lr vs nb"
