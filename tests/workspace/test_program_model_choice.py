"""A program of several models shows, by default, the waves of the model the New wave page
preselects: the smallest held-out net-score error, the first kept unless another errs less
beyond the paired test on the resamples each model file keeps, or, for files saved without
them, by a point or more (cx_app.estimate.model_choice)."""

from cx_app.workspace.records import estimating_row
from cx_app.workspace.tables import Model


def _row(model_id: str, net_error: float | None, *, kept: bool = True,
         replicates: list[float] | None = None) -> Model:
    gap = {"n": 500, "accuracy_cm": 0.30, "accuracy_alp": 0.31, "accuracy_gap": 0.01,
           "share_gap": 0.02, "net_calibration_error": net_error}
    cv = {"folds": 10, "alp_gap": gap}
    if replicates is not None:
        cv["net_score_error"] = {
            "fold_estimated": [], "fold_realized": [], "fold_n": [],
            "fold_outcome_variance": [], "bias": 0.0, "model_se": 0.0,
            "calibration_error_replicates": replicates}
    return Model(model_id=model_id, algorithm=model_id, preset="fast", calibration="none",
                 model_metadata={"cv": cv} if kept else {}, fit_seconds=1.0)


def test_kept_resamples_decide_by_the_paired_test_not_the_margin():
    # lr errs 2.0 points more; the paired differences 2 ± 1 (SD 1.15): 1.7 SEs > 1.28: nb
    spread = [1.0, 3.0, 1.0, 3.0]
    assert estimating_row([_row("lr", 2.0, replicates=[d + 0.5 for d in spread]),
                           _row("nb", 0.0, replicates=[0.5] * 4)]).model_id == "nb"
    # the same 2.0 points with differences 2 ± 3 (SD 3.5): within the noise, lr stays
    wide = [-1.0, 5.0, -1.0, 5.0]
    assert estimating_row([_row("lr", 2.0, replicates=[d + 0.5 for d in wide]),
                           _row("nb", 0.0, replicates=[0.5] * 4)]).model_id == "lr"
    # 0.9 points beyond a tiny spread moves, where the margin of a point would not
    tight = [0.8, 1.0, 0.8, 1.0]
    assert estimating_row([_row("lr", 0.9, replicates=tight),
                           _row("nb", 0.0, replicates=[0.0] * 4)]).model_id == "nb"


def test_the_model_with_a_smaller_heldout_error_by_a_point_estimates():
    rows = [_row("lr", 3.4), _row("nb", 0.9), _row("rf", 2.0)]
    assert estimating_row(rows).model_id == "nb"


def test_the_first_model_stays_unless_another_errs_less_by_a_point():
    assert estimating_row([_row("lr", 1.5), _row("nb", 0.6)]).model_id == "lr"  # 0.9 less
    assert estimating_row([_row("lr", 1.5), _row("nb", 0.5)]).model_id == "nb"  # 1.0 less


def test_models_that_keep_no_heldout_error_leave_the_first():
    assert estimating_row([_row("lr", None, kept=False), _row("nb", None, kept=False)]
                          ).model_id == "lr"
    # an old first model without the figure does not hide a newer one's
    assert estimating_row([_row("lr", None, kept=False), _row("nb", 0.5)]).model_id == "nb"
    assert estimating_row([_row("lr", 2.0)]).model_id == "lr"
