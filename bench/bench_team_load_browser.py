"""Eight signed-in analysts of two teams training at once in real browsers against one server.

The browser version of ``bench_team_load`` (the library-level one): ``streamlit run
streamlit_app.py`` in team mode (``CX_APP_TEAMS``: North 4 and South 4 analysts; a SQLite
workspace of its own; the pool's default limits), signed in through ``oidc-provider-mock``
(tests/browser_harness.py), 8 Playwright contexts in Debian's chromium driven from one
thread. Each user signs in, opens the Models page (the bundled telecom sample, 7,506
respondents), sets 3 folds and their own seed (no store hit between users) and, once all eight
are ready, presses Train (lr + nb) back to back. Then, polling the pages every 0.2 s: whether
each saw "Waiting for the server" and the highest place in the queue its page showed, and when
its "Training finished" appeared. After: each user's Project page's program list (its CSV
download): only their team's programs. Peak RSS of the streamlit process tree (sampled every
0.1 s, /proc). Baseline in the same run: one user alone on a fresh server.
"""

from __future__ import annotations

import io
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "e2e"), str(Path(__file__).parent)]

TEAMS = {"North": [f"north{i}@north.example" for i in range(1, 5)],
         "South": [f"south{i}@south.example" for i in range(1, 5)]}
FOLDS = 3
PLACE = re.compile(r"yours is number (\d+)")


def _signed_in_page(browser, url: str, email: str, seed: int):
    from browser_harness import sign_in
    from test_app_browser import _settle, _visible, new_page
    from test_training_queue_browser import ready_to_train

    pg = new_page(browser)
    pg.goto(url)
    sign_in(pg, url, email)
    _visible(pg.get_by_text(f"Signed in as {email}"))
    _settle(pg)
    return ready_to_train(pg, FOLDS, seed)


def _programs_listed(pg, url: str, tmp: Path, email: str) -> list[str]:
    """The program names of the Project page's list (its CSV download)."""
    import pandas as pd
    from test_app_browser import _download, _go

    _go(pg, url, "project")
    data = _download(pg, "dl_programs", tmp)
    return sorted(pd.read_csv(io.BytesIO(data), encoding="utf-8-sig")["program"])


def _scenario(browser, users: dict[str, list[str]], tmp: Path) -> dict:
    import json

    from bench_concurrency import _parents, _PeakRss, _tree_rss
    from browser_harness import free_port, oidc_provider, streamlit_server, write_auth_secrets

    emails = [e for team in users.values() for e in team]
    tmp.mkdir(parents=True)
    teams_file = tmp / "teams.yaml"
    teams_file.write_text(json.dumps(
        {"teams": {team: {"analyst": members} for team, members in TEAMS.items()}}))
    port = free_port()
    env = {"CX_APP_TEAMS": str(teams_file),
           "CX_APP_DATABASE_URL": f"sqlite:///{tmp / 'workspace.db'}"}
    with oidc_provider(emails) as provider, streamlit_server(
            ROOT / "streamlit_app.py", port, write_auth_secrets(tmp / "secrets.toml", port,
                                                                provider),
            log=tmp / "streamlit.log", extra_env=env) as url:
        pids = [p for p, pp in _parents().items() if pp == os.getpid() and str(port) in
                Path(f"/proc/{p}/cmdline").read_bytes().decode(errors="replace")]
        pid = pids[0]
        idle = _tree_rss(pid)
        sampler = _PeakRss(pid)
        sampler.start()
        start = time.perf_counter()
        pages = {e: _signed_in_page(browser, url, e, seed)
                 for seed, e in enumerate(emails, 1)}
        ready = time.perf_counter()
        for pg in pages.values():
            pg.get_by_role("button", name="Train and cross-validate").click()
        clicked = time.perf_counter()
        waited = {e: 0 for e in emails}
        finished: dict[str, float] = {}
        deadline, cycles = clicked + 1800, []
        while len(finished) < len(emails) and time.perf_counter() < deadline:
            cycle = time.perf_counter()
            for email, pg in pages.items():
                if email in finished:
                    continue
                text = pg.locator('[data-testid="stMain"]').inner_text()
                places = [int(n) for n in PLACE.findall(text)]
                if places:
                    waited[email] = max(waited[email], max(places))
                if "Training finished" in text:
                    finished[email] = time.perf_counter() - clicked
            time.sleep(0.2)
            cycles.append(time.perf_counter() - cycle)
        train_wall = time.perf_counter() - clicked
        peak = sampler.stop()
        listed = {e: _programs_listed(pg, url, tmp, e) for e, pg in pages.items()}
        for pg in pages.values():
            pg.context.close()
    return {"idle": idle, "peak": peak, "sign_in_wall": ready - start,
            "train_wall": train_wall, "waited": waited, "finished": finished,
            "listed": listed, "users": users, "cycle_mean": sum(cycles) / len(cycles),
            "cycle_max": max(cycles)}


def run() -> str:
    from browser_harness import chromium_browser

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp, chromium_browser() as browser:
        alone = _scenario(browser, {"North": TEAMS["North"][:1]}, Path(tmp) / "alone")
        team = _scenario(browser, TEAMS, Path(tmp) / "team")
    return _section(alone, team, load_before, os.getloadavg())


def _section(alone: dict, team: dict, before, after) -> str:
    mb = 2**20
    lines = [
        "## Team load in real browsers: 8 signed-in analysts of two teams, one server",
        "",
        "`streamlit run` in team mode (North 4, South 4 analysts; default pool limits), sign-in "
        "through `oidc-provider-mock`, 8 Playwright contexts (chromium) from one thread; each "
        f"user: Models page on the bundled sample, {FOLDS} folds, own seed, lr + nb; the Train "
        "buttons pressed back to back once all are signed in. Pages polled every 0.2 s for "
        "their place in the queue and \"Training finished\". Baseline: one user alone on a "
        f"fresh server. Load average (1, 5, 15 min) before {before[0]:.1f}, {before[1]:.1f}, "
        f"{before[2]:.1f}; after {after[0]:.1f}, {after[1]:.1f}, {after[2]:.1f}.",
        "",
        "| user | team | highest place shown | finished after | programs listed on the "
        "Project page | only their team's |",
        "|---|---|---:|---:|---|---|",
    ]
    ok_all = True
    for label, outcome in (("alone", alone), ("8 users", team)):
        team_of = {e: t for t, members in outcome["users"].items() for e in members}
        names_of = {t: set() for t in outcome["users"]}
        for email, names in outcome["listed"].items():
            names_of[team_of[email]].update(names)
        for email in team_of:
            others = set().union(*(n for t, n in names_of.items() if t != team_of[email]))
            ok = email in outcome["finished"] and not (set(outcome["listed"][email]) & others)
            ok_all &= ok
            done = outcome["finished"].get(email)
            shown = f"{done:.1f} s" if done is not None else "**not finished**"
            lines.append(f"| {email} ({label}) | {team_of[email]} | "
                         f"{outcome['waited'][email] or '—'} | {shown} | "
                         f"{', '.join(outcome['listed'][email])} | {'yes' if ok else '**no**'} |")
    programs = {t: sorted(set().union(*(set(team["listed"][e]) for e in members)))
                for t, members in team["users"].items()}
    lines += ["", "Programs of the sample file per team (8 users): " + "; ".join(
        f"{t} {len(names)}" for t, names in programs.items()) + "."]
    if any(len(names) > 1 for names in programs.values()):
        lines[-1] += (" Teammates whose first Train reached the server at the same moment each "
                      "created a program of the file (`AnalysisStore.program_for` finds, then "
                      "creates: not one step), so a team may hold the same file twice.")
    lines += [
        "",
        "| figure | 8 users | alone |",
        "|---|---:|---:|",
        f"| sign in and set up every page | {team['sign_in_wall']:.1f} s | "
        f"{alone['sign_in_wall']:.1f} s |",
        f"| Train pressed → every page shows \"Training finished\" | {team['train_wall']:.1f} s"
        f" | {alone['train_wall']:.1f} s |",
        f"| one round of polling every page (mean; longest): the resolution of \"finished "
        f"after\" | {team['cycle_mean']:.1f}; {team['cycle_max']:.1f} s | "
        f"{alone['cycle_mean']:.1f}; {alone['cycle_max']:.1f} s |",
        f"| server RSS idle → peak (process tree) | {team['idle'] / mb:.0f} → "
        f"{team['peak'] / mb:.0f} MB | {alone['idle'] / mb:.0f} → {alone['peak'] / mb:.0f} MB |",
        "",
        f"Every job finished and no user listed another team's program: "
        f"{'yes' if ok_all else '**no**'}.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
