"""Model names as a person reads them: the algorithm's name, its preset and changed settings.

A model's id (``lr``, ``svm papers``, ``rf seed=3``) is a stable key of files and JSON;
wherever a person reads a model it is named by :func:`model_display_name` instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cx_app.models.algorithms import ALGORITHMS, PRESETS

PRESET_WORDS: dict[str, str] = {"papers": "papers' settings", "fast": "fast settings"}
"""A preset in a model's display name."""

_SETTING = re.compile(r"(\w+)=(.*?)(?=\s+\w+=|$)")


def _setting_words(name: str, value: str) -> str:
    return f"seed {value}" if name == "seed" else f"{name.replace('_', ' ')} = {value}"


def model_display_name(model_id: object) -> str:
    """The model id as a person reads it; an id not of our form (a name the analyst gave) is
    kept as it is.

    >>> model_display_name("lr"), model_display_name("svm papers")
    ('Logistic regression', "Support vector machine (papers' settings)")
    >>> model_display_name("rf seed=3"), model_display_name("lr C=0.5 max_iter=500")
    ('Random forest (seed 3)', 'Logistic regression (C = 0.5, max iter = 500)')
    >>> model_display_name("ann hidden_layer_sizes=(6, 6)"), model_display_name("my model")
    ('Neural network (hidden layer sizes = (6, 6))', 'my model')
    """
    text = str(model_id)
    algorithm, _, rest = text.partition(" ")
    spec = ALGORITHMS.get(algorithm)
    if spec is None:
        return text
    words = []
    preset, _, settings = rest.partition(" ")
    if preset in PRESETS:
        words.append(PRESET_WORDS[preset])
        rest = settings
    found = _SETTING.findall(rest)
    if rest and " ".join(f"{k}={v}" for k, v in found) != rest:
        return text  # not an id of ours
    words += [_setting_words(k, v) for k, v in found]
    return f"{spec.name} ({', '.join(words)})" if words else spec.name


def names_in_text(text: str, model_ids: Iterable[object]) -> str:
    """``text`` (e.g. a stored t-test verdict) with each of ``model_ids`` by its display name.

    >>> names_in_text("lr is better than svm papers on original accuracy", ["svm papers", "lr"])
    "Logistic regression is better than Support vector machine (papers' settings) on original accuracy"
    """
    ids = sorted({str(m) for m in model_ids}, key=len, reverse=True)  # "svm papers" before "svm"
    if not ids:
        return text
    pattern = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, ids)) + r")(?!\w)")
    return pattern.sub(lambda match: model_display_name(match.group(1)), text)


def weighting_note(models: dict[str, tuple[bool | None, str | None]]) -> str | None:
    """One sentence on survey weights for ``models`` (id → (weighted, reason not)); None when
    no weights were given.

    >>> weighting_note({"lr": (True, None), "knn": (False, "k-NN cannot")})
    'Survey weights: Logistic regression trained with them; k-nearest neighbours without them (k-NN cannot). Accuracy and the other metrics count every respondent once (not weighted).'
    >>> weighting_note({"lr": (None, None)}) is None
    True
    """
    given = {m: wr for m, wr in models.items() if wr[0] is not None}
    if not given:
        return None
    used = [model_display_name(m) for m, (w, _) in given.items() if w]
    unused = [f"{model_display_name(m)} without them ({why or 'no reason recorded'})"
              for m, (w, why) in given.items() if not w]
    parts = ([f"{', '.join(used)} trained with them"] if used else []) + unused
    return (f"Survey weights: {'; '.join(parts)}. Accuracy and the other metrics count every "
            "respondent once (not weighted).")
