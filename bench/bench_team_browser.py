"""Issue 28's load bench in a real browser: 8 signed-in people of two teams train at once on
one server.

A ``streamlit run streamlit_app.py`` server in team mode (a teams file with North and South,
four analysts each; ``oidc-provider-mock`` as the identity provider; a fresh SQLite workspace;
the training pool's default limits), Debian's chromium with one browser context per person.

Baseline, in the same run: one person signs in and trains alone (logistic regression and naive
Bayes, 5 folds, on the bundled sample of 7,506 respondents). Then eight people sign in, and all
eight press "Train and cross-validate" within a second or two, each with a seed of their own
(the same recipe twice would be one training, shared through the content-keyed result store).
Measured: each person's time from the click to "Training finished", whether their page showed
the queue ("Waiting for the server"), the server process's peak memory (``VmHWM`` of its
``/proc`` status, read after the run; the process only ever grows it) and its memory before
training. Then each person's Project page: the programs they are shown (the CSV download of the
list) must all be their own team's (``tests/e2e/test_team_browser.py`` checks the addresses).
"""

from __future__ import annotations

import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser_harness import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    free_port,
    oidc_provider,
    sign_in,
    streamlit_server,
    write_auth_secrets,
)

FOLDS = 5
WAIT = 1_800_000  # ms: eight trainings queued on two cores
TEAMS = {"North": [f"north{i}@example.com" for i in range(1, 5)],
         "South": [f"south{i}@example.com" for i in range(1, 5)]}
ALONE = "alone@example.com"


def _teams_yaml() -> str:
    lines = ["teams:"]
    for team, people in TEAMS.items():
        lines += [f"  {team}:", f"    analyst: [{', '.join(people)}]"]
    lines[2] = lines[2].replace("analyst: [", f"analyst: [{ALONE}, ")  # North, for the baseline
    return "\n".join(lines) + "\n"


def _server_pid(port: int) -> int:
    import psutil

    for connection in psutil.net_connections("tcp"):
        if connection.laddr and connection.laddr.port == port and connection.status == "LISTEN":
            return int(connection.pid)
    raise RuntimeError(f"no process listens on port {port}")


def _memory_kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(f"{field}:"))


def _settled(page) -> None:
    page.wait_for_timeout(300)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')


def _models_page(page, url: str, seed: int) -> None:
    page.goto(f"{url}/models")
    page.wait_for_selector('[data-testid="stSidebarNav"]')
    _settled(page)
    for label, value in (("Folds", FOLDS), ("Seed", seed)):
        box = page.get_by_label(label, exact=True)
        box.fill(str(value))
        box.press("Enter")
        _settled(page)


def _programs(page, url: str, folder: Path, tag: str) -> list[tuple[str, str]]:
    """(program, team) of each program the person's Project page lists."""
    import pandas as pd

    page.goto(f"{url}/project")
    page.wait_for_selector('[data-testid="stSidebarNav"]')
    _settled(page)
    button = page.locator(".st-key-dl_programs button")
    if button.count() == 0:
        return []
    with page.expect_download() as info:
        button.click()
    target = folder / f"programs_{tag}.csv"
    info.value.save_as(target)
    frame = pd.read_csv(io.BytesIO(target.read_bytes()))
    return list(zip(frame["program"], frame["team"], strict=True))


def _train_all(pages: dict[str, object]) -> dict[str, dict]:
    """Press Train on every page, then wait for each; seconds from its click, queue seen."""
    clicked, rows = {}, {}
    for email, page in pages.items():
        page.get_by_role("button", name="Train and cross-validate").click()
        clicked[email] = time.perf_counter()
    waiting = dict(pages)
    queued = dict.fromkeys(pages, False)
    while waiting:
        for email, page in list(waiting.items()):
            if page.get_by_text("Waiting for the server", exact=False).count():
                queued[email] = True
            if page.get_by_text("Training finished").count():
                rows[email] = {"seconds": time.perf_counter() - clicked[email],
                               "queued": queued[email]}
                del waiting[email]
        if waiting:
            time.sleep(0.5)
            if time.perf_counter() - min(clicked.values()) > WAIT / 1000:
                raise RuntimeError(f"not finished after {WAIT / 1000:.0f} s: {sorted(waiting)}")
    return rows


def run() -> str:
    import logging

    from playwright.sync_api import sync_playwright

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # the provider's request lines
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        teams_file = folder / "teams.yaml"
        teams_file.write_text(_teams_yaml(), encoding="utf-8")
        env = {"CX_APP_DATABASE_URL": f"sqlite:///{folder / 'workspace.db'}",
               "CX_APP_TEAMS": str(teams_file)}
        port = free_port()
        people = [ALONE, *(p for team in TEAMS.values() for p in team)]
        with (oidc_provider(people) as provider,
              streamlit_server(ROOT / "streamlit_app.py", port,
                               write_auth_secrets(folder / "secrets.toml", port, provider),
                               log=folder / "streamlit.log", extra_env=env) as url,
              sync_playwright() as playwright):
            pid = _server_pid(port)
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                 args=list(CHROMIUM_ARGS))
            pages = {}
            for seed, email in enumerate(people):
                context = browser.new_context(viewport={"width": 1400, "height": 1000},
                                              accept_downloads=True)
                page = context.new_page()
                page.set_default_timeout(WAIT)
                page.goto(url)
                sign_in(page, url, email)
                _models_page(page, url, seed)
                pages[email] = page
            idle_kb = _memory_kb(pid, "VmRSS")
            alone = _train_all({ALONE: pages.pop(ALONE)})[ALONE]
            alone_peak_kb = _memory_kb(pid, "VmHWM")
            rows = _train_all(pages)
            peak_kb = _memory_kb(pid, "VmHWM")
            seen = {email: _programs(page, url, folder, email.split("@")[0])
                    for email, page in pages.items()}
            browser.close()
    load_after = os.getloadavg()
    team_of = {p: team for team, members in TEAMS.items() for p in members}
    leaks = [(email, program, team) for email, listed in seen.items()
             for program, team in listed if team != team_of[email]]
    own = {email: len(listed) for email, listed in seen.items()}
    times = sorted(r["seconds"] for r in rows.values())
    lines = [
        "## Team load in the browser: 8 signed-in people of two teams train at once (issue 28)",
        "",
        f"`bench/bench_team_browser.py`: one server in team mode (SQLite workspace, the training "
        f"pool's default limits), chromium, logistic regression + naive Bayes with {FOLDS} folds "
        "on the bundled sample (7,506 respondents), a seed per person. Load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after (2 shared cores).",
        "",
        "| measure | one person alone (baseline) | eight at once |",
        "|---|---|---|",
        f"| click → \"Training finished\", s (median) | {alone['seconds']:.1f} | "
        f"{statistics.median(times):.1f} ({statistics.median(times) / alone['seconds']:.1f}×) |",
        f"| slowest, s | {alone['seconds']:.1f} | {times[-1]:.1f} "
        f"({times[-1] / alone['seconds']:.1f}×) |",
        f"| jobs that finished | 1 of 1 | {len(rows)} of 8 |",
        f"| pages that showed the queue | {'yes' if alone['queued'] else 'no'} | "
        f"{sum(r['queued'] for r in rows.values())} of 8 |",
        f"| server peak memory (VmHWM), MB | {alone_peak_kb / 1024:.0f} | {peak_kb / 1024:.0f} "
        f"(idle, signed in: {idle_kb / 1024:.0f}) |",
        f"| programs listed per person | — | {min(own.values())}–{max(own.values())}, "
        f"another team's: {len(leaks)} |",
        "",
        "Per person (s): " + ", ".join(f"{e.split('@')[0]} {r['seconds']:.1f}"
                                       + (" (queued)" if r["queued"] else "")
                                       for e, r in sorted(rows.items())) + ".",
    ]
    if leaks:
        lines += ["", f"**Isolation broken**: {leaks}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
