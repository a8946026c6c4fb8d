"""Argument helpers shared by the commands that read a survey (``validate``, ``nps``, ...).

Without ``--schema`` and without mapping flags the layout is inferred (the report's notes say so).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from cx_app.errors import SchemaError
from cx_app.survey.importing import SurveyData, load_survey
from cx_app.survey.schema import (
    MISSING_POLICIES,
    SurveySchema,
    load_schema,
    schema_from_mapping,
)

_MAPPING_FLAGS = ("target", "scale", "attributes", "segments", "id", "attribute_scale",
                  "missing_codes", "kind", "weight")  # not --missing-policy: it applies to any


def add_survey_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="survey file (.xlsx, .xlsm, .xls, .ods, .csv)")
    parser.add_argument("--schema", metavar="S", help="survey schema file (YAML)")
    parser.add_argument("--sheet", metavar="NAME",
                        help="sheet name, or its number counting from 1 (default: the first "
                             "sheet matching the schema)")
    group = parser.add_argument_group("column mapping (instead of --schema)")
    group.add_argument("--target", metavar="COL", help="target column header")
    group.add_argument("--scale", metavar="MIN-MAX", help="target scale, e.g. 0-10 or 1-5")
    group.add_argument("--attributes", metavar="A,B,C",
                       help='attribute column headers, comma-separated ("quoted" if a header '
                            'holds a comma)')
    group.add_argument("--segments", metavar="S,T", help="segment column headers")
    group.add_argument("--id", metavar="COL", help="respondent id column header")
    group.add_argument("--attribute-scale", metavar="[COL=]MIN-MAX", action="append",
                       help="attribute scale: MIN-MAX for every attribute (default: the target "
                            "scale), COL=MIN-MAX for one attribute on its own scale (e.g. "
                            "\"Effort=-2..2\"); repeat the flag for several")
    group.add_argument("--weight", metavar="COL",
                       help="survey-weight column (non-negative numbers): weighted NPS, shares "
                            "and estimates; intervals on the effective sample size")
    group.add_argument("--kind", choices=("nps", "csat", "ces", "custom"),
                       help="target kind (default: guessed from the header; nps only for a "
                            "0-10 recommend question)")
    group.add_argument("--missing-codes", metavar="C,D",
                       help="values meaning 'no answer', e.g. 99,Don't know")
    parser.add_argument("--missing-policy", choices=MISSING_POLICIES, default=None,
                        help="how models treat unanswered attribute scores: impute_indicator "
                             "(default: keep the respondent; each model fills the gap with its "
                             "training median, the SVM and ordinal logistic regression also add a "
                             "'was missing' indicator), impute_median (the median alone) or "
                             "exclude (leave such "
                             "respondents out of the models; never out of the NPS). With "
                             "--schema it must agree with the schema's missing_attributes")


def _split(text: str | None) -> list[str]:
    """Comma-separated headers; one that holds a comma is written in double quotes."""
    if not text:
        return []
    row = next(csv.reader([text], skipinitialspace=True))
    return [p.strip() for p in row if p.strip()]


def _code(text: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _attribute_scales(values: list[str]) -> tuple[str | None, dict[str, str]]:
    """(every attribute's scale, {header: its own}) from ``MIN-MAX`` and ``COL=MIN-MAX``."""
    common, own = None, {}
    for value in values:
        header, sep, scale = value.rpartition("=")
        if not sep:
            if common is not None:
                raise SchemaError(f"--attribute-scale {value!r}: the scale of every attribute "
                                  f"is already {common!r}; name a column (COL=MIN-MAX)")
            common = value.strip()
        else:
            own[header.strip()] = scale.strip()
    return common, own


def schema_from_args(args: argparse.Namespace) -> SurveySchema | None:
    """None: infer from the data."""
    mapping = any(getattr(args, f, None) for f in _MAPPING_FLAGS)
    if args.schema and mapping:
        raise SchemaError("give either --schema or the mapping flags (--target ...), not both")
    policy = getattr(args, "missing_policy", None)
    if args.schema:
        schema = load_schema(args.schema)
        if policy is not None and policy != schema.missing_attributes:
            raise SchemaError(
                f"--missing-policy {policy} conflicts with the schema {args.schema}, which says "
                f"missing_attributes: {schema.missing_attributes}; change one of them")
        return schema
    if not mapping:
        return None
    missing = [f"--{f}" for f in ("target", "scale", "attributes") if not getattr(args, f)]
    if missing:
        raise SchemaError(f"the column mapping needs {', '.join(missing)} "
                          "(e.g. --target NPS --scale 0-10 --attributes A,B,C)")
    common_scale, own_scales = _attribute_scales(args.attribute_scale or [])
    return schema_from_mapping(
        target=args.target.strip(),
        scale=args.scale,
        attributes=_split(args.attributes),
        segments=_split(args.segments),
        respondent_id=args.id.strip() if args.id else None,
        kind=args.kind,
        attribute_scale=common_scale,
        attribute_scales=own_scales,
        weight=args.weight.strip() if args.weight else None,
        missing_codes=[_code(c) for c in _split(args.missing_codes)],
        **({"missing_attributes": policy} if policy else {}),
    )


def survey_from_args(args: argparse.Namespace, *, require_target: bool = True) -> SurveyData:
    """With an inferred layout ``--missing-policy`` replaces the inferred policy (as in the app)."""
    return load_survey(args.file, schema=schema_from_args(args), sheet=args.sheet,
                       require_target=require_target,
                       missing_policy=getattr(args, "missing_policy", None))


def add_training_arguments(parser: argparse.ArgumentParser) -> None:
    """``--algorithm`` (default lr, as the app), ``--preset``, ``--calibration``, ``--folds`` and
    ``--seed``."""
    from cx_app.estimate.calibration import CALIBRATION_METHODS
    from cx_app.models.algorithms import ALGORITHMS, PRESETS

    parser.add_argument("--algorithm", default="lr", choices=sorted(ALGORITHMS), metavar="ID",
                        help="algorithm id (default lr: logistic regression, the first model the "
                             f"app's Models page trains); also: {', '.join(ALGORITHMS)}")
    parser.add_argument("--calibration", default="auto", choices=("auto", *CALIBRATION_METHODS),
                        help="probability calibration (default auto: smallest held-out ALP gap)")
    parser.add_argument("--preset", choices=PRESETS, default=None,
                        help="fast (faster solver or stopping rule, same model family) or papers "
                             "(the papers' settings); default: the algorithm's default preset")
    parser.add_argument("--folds", type=int, default=10,
                        help="cross-validation folds (default 10, as the app and evaluate)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    from cx_app.models.cluster import CONNECT_TIMEOUT, SCHEDULER_ENV

    parser.add_argument("--dask-scheduler", metavar="tcp://HOST:PORT",
                        help="run the fits on this Dask cluster (same results as a local run; "
                             f"default: ${SCHEDULER_ENV}, else locally). See docs/scale-out.md")
    parser.add_argument("--dask-timeout", metavar="SECONDS", type=float,
                        default=CONNECT_TIMEOUT,
                        help=f"give up reaching the scheduler after this long (default "
                             f"{CONNECT_TIMEOUT:g})")


@contextlib.contextmanager
def cluster_from_args(args: argparse.Namespace) -> Iterator[Any]:
    """Run the block on the ``--dask-scheduler`` cluster (printing which), else locally."""
    from cx_app.models import cluster

    address = cluster.scheduler_address(getattr(args, "dask_scheduler", None))
    with cluster.scheduler(address, timeout=args.dask_timeout) as info:
        if info is not None:
            print(info.describe(), flush=True)
        yield info


def progress_printer(model_ids: Sequence[str]) -> Callable[[int, int, str], None]:
    """The commands' ``progress`` callback: a training's title, then a line per fold."""
    from cx_app.models.names import names_in_text

    def progress(done: int, total: int, message: str) -> None:
        print(("  " if done else "") + names_in_text(message, model_ids), flush=True)

    return progress


def model_words(algorithm_id: str, preset: str) -> str:
    """"Logistic regression (fast settings)", not the ids."""
    from cx_app.models.algorithms import get_algorithm
    from cx_app.models.names import PRESET_WORDS

    return f"{get_algorithm(algorithm_id).name} ({PRESET_WORDS.get(preset, preset)})"


def fmt_ci(digits: int, ci: Sequence[float]) -> str:
    return f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def segment_line(title: str, value: Any, respondents: int, estimate: Any, note: str | None) -> str:
    """A tracked segment's line: its respondents and estimated net score with its interval."""
    shown = "—" if estimate is None else f"{estimate.value:+.1f} {fmt_ci(1, estimate.ci95)}"
    return (f"    {title} {value}: {respondents:,} respondents, {shown}"
            + (f" ({note})" if note else ""))
