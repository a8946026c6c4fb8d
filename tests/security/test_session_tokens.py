"""Issue 24, cases 3, 4 and 11: the reload token in the address (``?session=…``).

Each test drives the app as browsers would (``AppTest``, the entry script on every run as on a
server; a "reload" or "another browser" is a new session opening the same address):

- case 3, fixation: a token in a link is never adopted — neither a made-up one nor one the
  server issued to whoever sent the link — so the victim's later work never becomes reachable
  through the link;
- case 4, linked restores: a restore is a copy, so an upload in one session never shows in the
  session it was restored from, and that session's own reload still gets its own analysis;
- case 11, a reload right after an upload offers and restores the new file's analysis.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_harness import entry_script_every_run  # noqa: F401  (a fixture)
from streamlit.testing.v1 import AppTest

from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 240  # generous: two busy cores
SAMPLE = sample_path("telecom_nps").name
OFFER = "Your analysis from before is kept"


@pytest.fixture(scope="module")
def surveys() -> dict[str, bytes]:
    """Two small CSV surveys with different respondents (the retail sample, split)."""
    lines = sample_path("retail_csat").read_bytes().splitlines(keepends=True)
    return {"victim.csv": b"".join(lines[:601]),
            "other.csv": b"".join(lines[:1] + lines[601:1201])}


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _open(token: str | None = None) -> AppTest:
    """A new browser session at the app's address (with ``?session=token``)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if token is not None:
        at.query_params["session"] = token
    return _ok(at.run())


def _offer(at: AppTest) -> str | None:
    offers = [i.value.replace("\\", "") for i in at.info if OFFER in i.value]  # unescaped
    assert len(offers) <= 1
    return offers[0] if offers else None


def _upload(at: AppTest, name: str, data: bytes) -> None:
    at.file_uploader(key="uploader").upload(name, data, "text/csv")
    _ok(at.run())
    assert at.session_state["analysis"].survey.source.filename == name


def _file_in_use(at: AppTest) -> str:
    return at.session_state["analysis"].survey.source.filename


@pytest.mark.parametrize("forged", ["Fixat10nFixat10nFixat10nFixat10nFixat10nFix",
                                    "Fixat10nFixat10nFixat1"])  # 43, and 22 as tokens once were
def test_a_made_up_token_in_the_address_is_not_adopted(entry_script_every_run,  # noqa: F811
                                                       surveys, forged):
    victim = _open(forged)
    own = victim.query_params["session"]
    assert own != forged and victim.session_state["recovery_token"] == own
    assert _offer(victim) is None
    _upload(victim, "victim.csv", surveys["victim.csv"])
    assert victim.query_params["session"] == own

    attacker = _open(forged)  # the attacker opens his own link after the victim worked
    assert _offer(attacker) is None
    assert attacker.query_params["session"] not in (forged, own)
    assert _file_in_use(attacker) == SAMPLE
    assert "uploads" not in attacker.session_state or not attacker.session_state["uploads"]


def test_an_issued_token_sent_in_a_link_does_not_follow_the_victim(entry_script_every_run,  # noqa: F811
                                                                   surveys):
    attacker = _open()  # the attacker gets a real token by opening the app himself
    bait = attacker.query_params["session"]

    victim = _open(bait)  # the victim opens the link: offered the attacker's (sample) analysis
    assert "telecom" in _offer(victim)
    victim.button(key="recovery_dismiss").click().run()
    own = victim.query_params["session"]
    assert own != bait and _offer(victim) is None
    _upload(victim, "victim.csv", surveys["victim.csv"])

    patient = _open(bait)  # a victim who works without answering the offer
    _upload(patient, "other.csv", surveys["other.csv"])
    assert patient.query_params["session"] == bait  # kept while the offer waits, saved nowhere

    back = _open(bait)  # the attacker comes back with his link
    assert "telecom" in _offer(back) and "victim" not in _offer(back)
    back.button(key="recovery_restore").click().run()
    _ok(back)
    assert _file_in_use(back) == SAMPLE
    assert set(back.session_state["uploads"]) == set()

    reload = _open(own)  # the victim's own reload still finds the victim's work
    assert "victim.csv" in _offer(reload)


def test_a_restore_is_a_copy_that_shares_nothing(entry_script_every_run, surveys):  # noqa: F811
    a = _open()
    _upload(a, "victim.csv", surveys["victim.csv"])
    _ok(a.run())
    token = a.query_params["session"]

    b = _open(token)  # A's address opened in another browser while A works on
    assert "victim.csv" in _offer(b)
    b.button(key="recovery_restore").click().run()
    _ok(b)
    analysis_a, analysis_b = a.session_state["analysis"], b.session_state["analysis"]
    assert analysis_b is not analysis_a and analysis_b.data_key == analysis_a.data_key
    assert analysis_b.models is not analysis_a.models
    assert analysis_b.trained_keys is not analysis_a.trained_keys
    assert analysis_b.finals is not analysis_a.finals
    assert b.session_state["uploads"] is not a.session_state["uploads"]
    assert b.session_state["data_choice"] is not a.session_state["data_choice"]
    assert b.session_state["data_choice"]["by_file"] is not a.session_state["data_choice"]["by_file"]

    _upload(b, "other.csv", surveys["other.csv"])
    assert set(b.session_state["uploads"]) == {"victim.csv", "other.csv"}
    _ok(a.run())  # A's next run: B's upload is not in A's file list nor state
    assert set(a.session_state["uploads"]) == {"victim.csv"}
    assert "other.csv" not in a.selectbox(key="survey_file").options
    assert _file_in_use(a) == "victim.csv" and a.session_state["analysis"] is analysis_a
    assert "other.csv" in b.selectbox(key="survey_file").options

    assert b.query_params["session"] != token  # B saves under a token of its own
    again = _open(token)  # A's reload gets A's analysis, not B's
    assert "victim.csv" in _offer(again)


def test_a_reload_right_after_an_upload_restores_the_new_file(entry_script_every_run,  # noqa: F811
                                                              surveys):
    first = _open()
    token = first.query_params["session"]
    _upload(first, "victim.csv", surveys["victim.csv"])
    expected = load_survey(surveys["victim.csv"], filename="victim.csv")

    reloaded = _open(token)
    assert "victim.csv with no trained model" in _offer(reloaded)
    assert _file_in_use(reloaded) == SAMPLE  # nothing restored unasked
    reloaded.button(key="recovery_restore").click().run()
    _ok(reloaded)
    restored = reloaded.session_state["analysis"]
    assert restored.survey.source.filename == "victim.csv"
    assert restored.data_key == first.session_state["analysis"].data_key
    assert restored.survey.quality.rows_used == expected.quality.rows_used
    assert reloaded.selectbox(key="survey_file").value == "victim.csv"
