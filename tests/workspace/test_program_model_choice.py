"""A program of several models shows, by default, the waves of the model the New wave page
preselects: the smallest held-out net-score error, the first kept unless another errs less by
a point or more (cx_app.estimate.model_choice)."""

from cx_app.workspace.records import estimating_row
from cx_app.workspace.tables import Model


def _row(model_id: str, net_error: float | None, *, kept: bool = True) -> Model:
    gap = {"n": 500, "accuracy_cm": 0.30, "accuracy_alp": 0.31, "accuracy_gap": 0.01,
           "share_gap": 0.02, "net_calibration_error": net_error}
    return Model(model_id=model_id, algorithm=model_id, preset="fast", calibration="none",
                 model_metadata={"cv": {"folds": 10, "alp_gap": gap}} if kept else {},
                 fit_seconds=1.0)


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
