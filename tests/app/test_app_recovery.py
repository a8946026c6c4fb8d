"""A page reload (a new session with the same address) gets the analysis from before back,
once, when the user asks; another address gets nothing; the snapshot store is bounded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest
from test_app_pages import _ok

from cx_app.app.recovery import RecoveryStore, Snapshot, new_token, snapshot_nbytes
from cx_app.app.store import CacheLimits

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 240


def test_a_reload_offers_the_analysis_back():
    first = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    token = first.query_params["session"]
    assert len(token) == 22
    first.switch_page("pages/models.py").run()
    first.multiselect(key="algorithms").set_value(["nb"])
    first.number_input(key="folds").set_value(3)
    first.number_input(key="seed").set_value(17)
    first.button(key="train").click().run()
    _ok(first)
    before = first.session_state["analysis"]
    assert list(before.models) == ["nb seed=17"]

    reloaded = AppTest.from_file(APP, default_timeout=TIMEOUT)
    reloaded.query_params["session"] = token
    reloaded.run()
    _ok(reloaded)
    assert any("Your analysis from before is kept" in i.value and "1 trained model" in i.value
               for i in reloaded.info)
    assert reloaded.session_state["analysis"] is not before  # nothing restored unasked
    reloaded.button(key="recovery_restore").click().run()
    _ok(reloaded)
    assert reloaded.session_state["analysis"] is before
    assert not any("Your analysis from before" in i.value for i in reloaded.info)  # once
    for page in ("data", "confusion", "report"):
        reloaded.switch_page(f"pages/{page}.py").run()
        _ok(reloaded)
    assert reloaded.session_state["analysis"] is before and before.trainings == 1

    stranger = AppTest.from_file(APP, default_timeout=TIMEOUT)
    stranger.query_params["session"] = new_token()
    stranger.run()
    assert not any("Your analysis from before" in i.value for i in stranger.info)
    assert stranger.query_params["session"] != token


def test_the_snapshot_store_is_bounded_and_ignores_bad_tokens():
    class Model:
        def __init__(self, n):
            self.cv = type("Cv", (), {k: np.zeros(n) for k in ("y_true", "y_pred", "proba",
                                                              "fold")})()
            self.permutation = None

    class FakeAnalysis:
        def __init__(self, n):
            self.models = {"m": Model(n)}

    store = RecoveryStore(CacheLimits(result_items=2, result_bytes=10_000, ttl_seconds=60))
    snap = Snapshot(FakeAnalysis(100), {"uploads": {"a.csv": b"x" * 50}})
    assert snapshot_nbytes(snap) == 4 * 800 + 50
    tokens = [new_token() for _ in range(3)]
    for token in tokens:
        store.save(token, snap)
    assert len(store) == 2 and store.get(tokens[0]) is None and store.get(tokens[2]) is snap
    store.save("../../etc", snap)
    assert store.get("../../etc") is None
    big = Snapshot(FakeAnalysis(2_000))  # 64,000 bytes: more than the bound, not kept
    store.save(tokens[0], big)
    assert store.get(tokens[0]) is None
