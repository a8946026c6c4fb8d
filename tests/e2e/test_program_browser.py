"""Issue 27's acceptance in a real browser (Playwright + Debian chromium): a CX program that
survives the server.

A messy bank-like export (cover sheet, title rows, question headers, 99 / "N/A" codes, three
scales) → train two models → add three waves (one of them twice, out of order) → edit a label
(the models stay) → kill -9 the server and start it again on the same workspace database → the
same models and a three-wave tracker in wave order; the downloaded Excel, HTML and PowerPoint
reports each contain every wave and every segment value.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import zipfile

import pandas as pd
import pytest
from browser_harness import ROOT, free_port, wait_healthy
from test_app_browser import (
    ARGS,
    CHROMIUM,
    WAIT,
    _download,
    _expect,
    _go,
    _settle,
    _visible,
    new_page,
    train,
)

from cx_app.simulation.bank_export import (
    BRANDS,
    COMMENTS,
    REGIONS,
    simulate_bank_waves,
    write_bank_export,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # a program through a killed server, three waves, every export (~270 s)
SURVEY = "bank_export.xlsx"
PROGRAM = "bank_export"
LABEL = "Fees and charges"


def _start(port: int, database: str, log) -> subprocess.Popen:
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
           "CX_APP_DATABASE_URL": database}
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "streamlit_app.py"),
             "--server.port", str(port), "--server.headless", "true",
             "--server.address", "127.0.0.1"],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)
    wait_healthy(f"http://127.0.0.1:{port}", process, log)
    return process


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The reference export (quarters 2026-Q1..Q3) and three later quarters, one file each."""
    folder = tmp_path_factory.mktemp("bank")
    waves = simulate_bank_waves(300, waves=6, seed=7)
    labels = list(waves)
    paths = {SURVEY: write_bank_export({k: waves[k] for k in labels[:3]}, folder / SURVEY)}
    for label in labels[3:]:
        paths[label] = write_bank_export({label: waves[label]}, folder / f"bank_{label}.xlsx")
    return paths


def _upload(pg, paths, nth: int = 0) -> None:
    pg.locator('[data-testid="stFileUploader"] input[type="file"]').nth(nth).set_input_files(
        [str(p) for p in paths])
    _settle(pg)


def _edit_label(pg, row: int, text: str) -> None:
    """Type ``text`` into the Label cell of the mapping table's row ``row``. The grid is a
    canvas; its hidden accessibility table (cells ``glide-cell-COLUMN-ROW``) takes the
    keyboard focus (which selects the first cell, whatever the layout), the arrow keys move
    to the cell, Enter opens its editor (a textarea), and the cell's text then says the edit
    landed where it should."""
    grid = pg.locator('[data-testid="stDataFrame"]').first
    _expect()(grid).to_be_visible(timeout=WAIT)
    _settle(pg)
    label = grid.get_by_test_id(f"glide-cell-2-{row}")  # column → role → label (no name shown)
    label.focus()
    for key in ["ArrowRight"] * 2 + ["ArrowDown"] * row:
        pg.keyboard.press(key)
    pg.keyboard.press("Enter")  # opens the cell's editor
    editor = pg.locator("textarea.gdg-input")
    _expect()(editor).to_be_editable(timeout=WAIT)
    editor.fill(text)
    editor.press("Enter")  # keeps the text
    _settle(pg)
    _expect()(label).to_have_text(text, timeout=WAIT)


def _schema_has_label(pg, tmp_path) -> None:
    """The schema in use (its YAML, downloaded) labels the edited attribute."""
    _settle(pg)  # a glance during a rerun sees no button, and a click would fold it
    button = pg.locator(".st-key-dl_schema button")
    try:
        button.wait_for(state="visible", timeout=5_000)
    except pytest.importorskip("playwright.sync_api").TimeoutError:  # the mapping is folded
        pg.get_by_text("Column mapping (check it", exact=False).first.click()
        _settle(pg)
    try:
        schema = _download(pg, "dl_schema", tmp_path).decode("utf-8")
    except AssertionError as error:  # say what the page showed instead
        pg.screenshot(path=str(tmp_path / "no_schema_button.png"), full_page=True)
        raise AssertionError(f"{error}\npage text:\n{pg.inner_text('body')[:3000]}") from None
    fees = schema.index("column: 'Satisfaction with: Fees & charges (1-10)'")
    assert f"label: {LABEL}" in schema[fees:schema.index("- name:", fees)], schema[:2000]


def _tracker(pg, tmp_path) -> pd.DataFrame:
    _visible(pg.get_by_text("Tracker: estimated NPS by wave"))
    _settle(pg)
    return pd.read_csv(io.BytesIO(_download(pg, "dl_nw_tracker", tmp_path)))


def test_a_program_survives_a_killed_server(files, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian chromium is not installed")
    expect = sync_api.expect
    database = f"sqlite:///{tmp_path / 'workspace.db'}"
    port, log = free_port(), tmp_path / "streamlit.log"
    url = f"http://127.0.0.1:{port}"
    server = _start(port, database, log)
    quarters = [k for k in files if k != SURVEY]  # 2026-Q4, 2027-Q1, 2027-Q2
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            pg = new_page(browser)
            pg.goto(url)
            _settle(pg)
            _upload(pg, [files[SURVEY]])
            _visible(pg.get_by_text(f"File: {SURVEY}"))

            # two models (the defaults: logistic regression and naive Bayes), 3 folds
            _go(pg, url, "models")
            train(pg)
            assert f"program={PROGRAM}" in pg.url

            # three waves, out of order, the first one twice
            _go(pg, url, "new_wave")
            pg.get_by_role("button", name="Fit on all respondents").click()
            _visible(pg.get_by_text("has no wave yet", exact=False))
            _upload(pg, [files[quarters[2]], files[quarters[0]]])
            _upload(pg, [files[quarters[0]]])  # the same file again: one wave
            _upload(pg, [files[quarters[1]]])
            shown = _tracker(pg, tmp_path)
            assert list(shown["wave"]) == quarters  # wave order, not upload order

            # a label edit keeps both models
            _go(pg, url, "")
            _edit_label(pg, 1, LABEL)
            _schema_has_label(pg, tmp_path)
            expect(pg.get_by_text("do not apply to it", exact=False)).to_have_count(0)
            _go(pg, url, "models")
            _visible(pg.get_by_text("Leaderboard", exact=True))
            address = pg.url
            pg.context.close()

            # kill -9, start again on the same workspace
            server.send_signal(signal.SIGKILL)
            server.wait()
            server = _start(port, database, log)
            pg = new_page(browser)
            pg.goto(address)  # the Models page of the program, as the address names it
            _visible(pg.locator('[data-testid="stSidebarNav"]').get_by_text(
                "Confusion matrices"))  # the app's navigation, once its script has run
            _settle(pg)
            _visible(pg.get_by_text("Leaderboard", exact=True))
            recipes = pd.read_csv(io.BytesIO(_download(pg, "dl_recipes", tmp_path)))
            assert len(recipes) == 2  # both models, not retrained
            _go(pg, url, "")
            _visible(pg.get_by_text(f"File: {SURVEY}"))
            _schema_has_label(pg, tmp_path)  # the edited label was kept too
            _go(pg, url, "new_wave")
            again = _tracker(pg, tmp_path)
            assert list(again["wave"]) == quarters
            pd.testing.assert_frame_equal(again, shown)  # the same numbers

            _go(pg, url, "report")
            pg.get_by_role("button", name="Build the reports").click()
            _visible(pg.get_by_text("Slide deck (.pptx)"))
            _settle(pg)
            xlsx = _download(pg, "dl_xlsx", tmp_path)
            html = _download(pg, "dl_html", tmp_path).decode("utf-8")
            pptx = _download(pg, "dl_pptx", tmp_path)
            pg.context.close()
            browser.close()
    finally:
        server.kill()
        server.wait()

    sheets = pd.read_excel(io.BytesIO(xlsx), sheet_name=None, header=None)
    excel_text = " ".join(str(v) for frame in sheets.values() for v in frame.to_numpy().ravel())
    with zipfile.ZipFile(io.BytesIO(pptx)) as deck:
        deck_text = " ".join(deck.read(n).decode("utf-8", "replace") for n in deck.namelist()
                             if n.startswith("ppt/slides/slide") and n.endswith(".xml"))
    for name, text in (("xlsx", excel_text), ("html", html), ("pptx", deck_text)):
        for wave in quarters:
            assert wave in text, (name, wave)
        for value in (*BRANDS, *REGIONS):
            assert value in text, (name, value)
    _reference_by_brand_in_the_deck_and_the_workbook(pptx, xlsx)


def _reference_by_brand_in_the_deck_and_the_workbook(pptx: bytes, xlsx: bytes) -> None:
    """Issue 37: the deck has the reference survey's measured NPS by bank (after the title
    slide, before the tracker), the same numbers as the workbook's Reference survey sheet."""
    from pptx import Presentation

    deck = Presentation(io.BytesIO(pptx))
    titles = [s.shapes.title.text for s in deck.slides]
    assert titles[1].startswith("The reference survey's NPS is ")
    # the export's free-text comments are no segment: no slide, table row or tracker line
    cells = {c.text for s in deck.slides for sh in s.shapes if sh.has_table
             for r in sh.table.rows for c in r.cells}
    assert not [t for t in titles if "comment" in t.lower()], titles
    comments = {c for c in COMMENTS if c.strip()}
    assert not cells & comments, cells & comments
    by_brand = None
    for slide in deck.slides:
        tables = [sh.table for sh in slide.shapes if sh.has_table]
        if tables and "in the reference survey" in slide.shapes.title.text:
            rows = [[c.text for c in r.cells] for r in tables[0].rows]
            if {r[0] for r in rows[1:]} == set(BRANDS):
                by_brand = {r[0]: r[2] for r in rows[1:]}
    assert by_brand is not None, titles
    sheet = pd.read_excel(io.BytesIO(xlsx), sheet_name="Reference survey", header=None,
                          engine="openpyxl")
    cells = sheet.to_numpy().tolist()
    for brand, shown in by_brand.items():
        row = next(r for r in cells if r[0] == brand)
        assert f"{float(row[2]):.1f}" == shown, (brand, row, shown)
