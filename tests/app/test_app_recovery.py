"""A page reload (a new session with the same address) gets the analysis from before back,
once, when the user asks, as its own copy under a token of its own; another address gets
nothing; the snapshot store is bounded and honours only the tokens it issued. (The attacks —
fixation, linked restores, a reload right after an upload — are in tests/security.)"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from app_harness import entry_script_every_run  # noqa: F401  (a fixture)
from streamlit.testing.v1 import AppTest
from test_app_pages import _ok

from cx_app.app.recovery import RecoveryStore, Snapshot, snapshot_nbytes
from cx_app.app.store import CacheLimits

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 240


def test_a_reload_offers_the_analysis_back(entry_script_every_run):  # noqa: F811
    first = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    token = first.query_params["session"]
    assert len(token) == 43
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
    assert reloaded.query_params["session"] == token  # until the user chooses
    reloaded.button(key="recovery_restore").click().run()
    _ok(reloaded)
    restored = reloaded.session_state["analysis"]
    assert restored is not before and restored.models is not before.models  # a copy
    assert list(restored.models) == ["nb seed=17"] and restored.data_key == before.data_key
    assert restored.models["nb seed=17"].cv is before.models["nb seed=17"].cv  # read-only arrays
    own = reloaded.query_params["session"]
    assert own != token and len(own) == 43  # the reloaded session's own token from now on
    assert not any("Your analysis from before" in i.value for i in reloaded.info)  # once
    for page in ("data", "confusion", "report"):
        reloaded.switch_page(f"pages/{page}.py").run()
        _ok(reloaded)
        assert reloaded.query_params["session"] == own
    assert reloaded.session_state["analysis"] is restored and restored.trainings == 1

    again = AppTest.from_file(APP, default_timeout=TIMEOUT)  # the restored tab reloads
    again.query_params["session"] = own
    again.run()
    assert any("Your analysis from before is kept" in i.value and "1 trained model" in i.value
               for i in again.info)

    stranger = AppTest.from_file(APP, default_timeout=TIMEOUT)
    stranger.query_params["session"] = "A" * 43  # well formed, never issued
    stranger.run()
    assert not any("Your analysis from before" in i.value for i in stranger.info)
    assert stranger.query_params["session"] not in (token, own, "A" * 43)


class _Model:
    def __init__(self, n):
        self.cv = type("Cv", (), {k: np.zeros(n) for k in ("y_true", "y_pred", "proba",
                                                          "fold")})()
        self.permutation = None


@dataclass
class _FakeAnalysis:
    n: int
    models: dict = field(default_factory=dict)

    def __post_init__(self):
        self.models = self.models or {"m": _Model(self.n)}


def test_the_snapshot_store_is_bounded_and_ignores_bad_tokens():
    store = RecoveryStore(CacheLimits(result_items=2, result_bytes=10_000, ttl_seconds=60))
    snap = Snapshot(_FakeAnalysis(100), {"uploads": {"a.csv": b"x" * 50}})
    assert snapshot_nbytes(snap) == 4 * 800 + 50
    tokens = [store.issue() for _ in range(3)]
    assert len(set(tokens)) == 3 and all(store.issued(t) for t in tokens)
    for token in tokens:
        store.save(token, snap)
    assert len(store) == 2 and store.get(tokens[0]) is None
    kept = store.get(tokens[2])
    assert kept is not snap and kept.state["uploads"] == {"a.csv": b"x" * 50}  # a copy
    for bad in ("../../etc", "A" * 43, RecoveryStore(CacheLimits()).issue()):  # another server's
        store.save(bad, snap)
        assert not store.issued(bad) and store.get(bad) is None
    assert len(store) == 2
    big = Snapshot(_FakeAnalysis(2_000))  # 64,000 bytes: more than the bound, not kept
    store.save(tokens[0], big)
    assert store.get(tokens[0]) is None
