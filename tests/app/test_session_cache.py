"""The app's caches are bounded and shared only by content (``cx_app.app.session``, ``app_pages/common.py``).

- :class:`ResultStore` (the process-wide store of cross-validation results) evicts beyond its
  entry and byte bounds, least recently used first, drops entries older than its TTL, and offers
  no way to list what it holds;
- an :class:`Analysis` keeps at most ``memo_items`` derived values;
- every ``st.cache_*`` in the pages has ``max_entries`` (and a TTL when it takes arguments);
- two AppTest sessions in one process do not see each other's upload or models.
"""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from cx_app.app.session import Analysis, ResultStore, survey_key
from cx_app.app.store import CacheLimits, approximate_nbytes, cache_limits
from cx_app.engine.plan import PlanSpec
from cx_app.survey.samples import sample_path

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_store_evicts_the_least_recently_used_beyond_max_items():
    store = ResultStore(3)
    for key in "abc":
        store.put(key, key.upper())
    assert store.get("a") == "A"  # a is now the most recently used
    store.put("d", "D")
    assert len(store) == 3
    assert store.get("b") is None  # the least recently used went
    assert [store.get(k) for k in "acd"] == ["A", "C", "D"]
    for i in range(100):
        store.put(f"k{i}", i)
    assert len(store) == 3
    assert [store.get(f"k{i}") for i in (97, 98, 99)] == [97, 98, 99]


def test_store_evicts_beyond_max_bytes_and_refuses_a_value_larger_than_the_bound():
    store = ResultStore(100, max_bytes=1000, sizeof=len)
    store.put("a", b"x" * 400)
    store.put("b", b"y" * 400)
    assert store.nbytes == 800
    store.put("c", b"z" * 400)  # 1200 > 1000: a goes
    assert store.get("a") is None
    assert store.nbytes == 800 and len(store) == 2
    store.put("huge", b"h" * 1001)
    assert store.get("huge") is None
    assert store.get("b") is not None and store.get("c") is not None
    store.put("b", b"y" * 10)  # replacing a key replaces its size
    assert store.nbytes == 410


def test_store_drops_entries_older_than_its_ttl():
    clock = Clock()
    store = ResultStore(10, ttl_seconds=60, clock=clock)
    store.put("old", 1)
    clock.now += 30
    store.put("new", 2)
    clock.now += 31  # old is 61 s old, new 31 s
    assert store.get("old") is None
    assert store.get("new") == 2
    assert len(store) == 1
    clock.now += 30
    assert len(store) == 0


def test_store_cannot_be_listed():
    store = ResultStore(4)
    store.put("secret-key", "value")
    with pytest.raises(TypeError):
        iter(store)
    public = {name for name in dir(store) if not name.startswith("_")}
    assert public == {"get", "put", "nbytes", "max_items", "max_bytes", "ttl_seconds",
                      "from_limits"}


def test_store_bounds_hold_under_concurrent_use():
    store = ResultStore(8, max_bytes=8 * 100, sizeof=len)
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            for i in range(300):
                store.put(f"{t}:{i % 20}", b"v" * 100)
                value = store.get(f"{t}:{(i * 7) % 20}")
                assert value is None or value == b"v" * 100
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(store) == 8
    assert store.nbytes == 800


def test_approximate_nbytes_counts_array_buffers():
    array = np.zeros((1000, 125))  # 1,000,000 bytes
    size = approximate_nbytes({"a": array, "b": [array[:10].copy()]})
    assert 1_010_000 <= size < 1_010_000 + 2_000


def test_cache_limits_from_the_environment(monkeypatch):
    for name in ("CX_APP_RESULT_CACHE_ITEMS", "CX_APP_RESULT_CACHE_MB",
                 "CX_APP_CACHE_TTL_MINUTES", "CX_APP_ANALYSIS_MEMO_ITEMS"):
        monkeypatch.delenv(name, raising=False)
    assert cache_limits() == CacheLimits()
    monkeypatch.setenv("CX_APP_RESULT_CACHE_ITEMS", "5")
    monkeypatch.setenv("CX_APP_RESULT_CACHE_MB", "2")
    monkeypatch.setenv("CX_APP_CACHE_TTL_MINUTES", "0.5")
    monkeypatch.setenv("CX_APP_ANALYSIS_MEMO_ITEMS", "7")
    limits = cache_limits()
    assert limits == CacheLimits(result_items=5, result_bytes=2 * 2**20, ttl_seconds=30.0,
                                 memo_items=7)
    store = ResultStore.from_limits(limits)
    assert (store.max_items, store.max_bytes, store.ttl_seconds) == (5, 2 * 2**20, 30.0)
    monkeypatch.setenv("CX_APP_RESULT_CACHE_MB", "lots")
    with pytest.raises(ValueError, match="CX_APP_RESULT_CACHE_MB"):
        cache_limits()


def test_analysis_memo_keeps_at_most_memo_items():
    analysis = Analysis(survey=None, data_key="k", plan=PlanSpec(classes=(0, 1), plan=[]),
                        memo_items=3)
    calls: list[int] = []

    def value(i: int):
        return lambda: calls.append(i) or i * 10

    for i in range(3):
        assert analysis.derived(("v", i), value(i)) == i * 10
    assert analysis.derived(("v", 0), value(0)) == 0  # hit, and now most recent
    analysis.derived(("v", 3), value(3))  # evicts ("v", 1)
    assert calls == [0, 1, 2, 3]
    assert analysis.peek(("v", 1)) is None
    assert analysis.peek(("v", 0)) == 0
    assert analysis.derived(("v", 1), value(1)) == 10  # recomputed
    assert calls == [0, 1, 2, 3, 1]
    assert len(analysis._memo) == 3


def test_survey_key_depends_on_content_sheet_schema_and_file_name():
    base = survey_key("abc", None, "schema: 1", "a.csv")
    assert base == survey_key("abc", None, "schema: 1", "a.csv")
    assert len({base, survey_key("abd", None, "schema: 1", "a.csv"),
                survey_key("abc", "S1", "schema: 1", "a.csv"),
                survey_key("abc", None, "schema: 2", "a.csv"),
                survey_key("abc", None, "schema: 1", "b.csv")}) == 5


def _cache_decorators(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                target = deco.func if isinstance(deco, ast.Call) else deco
                name = ast.unparse(target)
                if name.startswith("st.cache_"):
                    yield node, deco


def test_every_streamlit_cache_in_the_app_is_bounded():
    found = 0
    for path in [ROOT / "streamlit_app.py", *sorted((ROOT / "app_pages").glob("*.py"))]:
        for func, deco in _cache_decorators(path):
            found += 1
            where = f"{path.name}:{func.name}"
            assert isinstance(deco, ast.Call), f"{where}: unbounded cache"
            keywords = {k.arg: k.value for k in deco.keywords}
            assert "max_entries" in keywords, f"{where}: no max_entries"
            takes_arguments = bool(func.args.args or func.args.kwonlyargs)
            if takes_arguments:
                assert "ttl" in keywords, f"{where}: no ttl"
            else:  # one entry: a process-wide object that bounds itself
                assert ast.literal_eval(keywords["max_entries"]) == 1, where
    assert found >= 5


def test_two_sessions_do_not_see_each_others_upload_or_models():
    csat = sample_path("retail_csat")
    a = AppTest.from_file(APP, default_timeout=120).run()
    a.file_uploader(key="uploader").upload(csat.name, csat.read_bytes(), "text/csv")
    a.run()
    assert a.session_state["analysis"].survey.source.filename == csat.name
    a.switch_page("app_pages/models.py").run()
    a.multiselect(key="algorithms").set_value(["nb"])
    a.number_input(key="folds").set_value(3)
    a.button(key="train").click().run()
    assert not a.exception
    assert list(a.session_state["analysis"].models) == ["nb"]

    b = AppTest.from_file(APP, default_timeout=120).run()
    assert not b.exception
    analysis_b = b.session_state["analysis"]
    assert analysis_b.survey.source.filename == sample_path("telecom_nps").name
    assert analysis_b.models == {}
    assert "uploads" not in b.session_state or b.session_state["uploads"] == {}
    b.switch_page("app_pages/new_wave.py").run()
    assert any("No model is trained yet" in i.value for i in b.info)
    assert not b.selectbox  # no model to pick
    assert csat.name not in repr([*b.markdown, *b.text, *b.caption])
    # A's own state is untouched
    assert a.session_state["analysis"].survey.source.filename == csat.name
    assert list(a.session_state["analysis"].models) == ["nb"]
