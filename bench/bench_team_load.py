"""Eight signed-in analysts of two teams training at once on one server, through its job pool.

One process plays the server as the app does: one shared workspace (a SQLite file), one
:class:`cx_app.app.job_pool.JobPool` with the default limits (:func:`limits_from_env`: 1 job per
user, the CPUs in all), one process-wide result store. Users: North 4, South 4 (analysts, a
teams file as in ``cx_app.workspace.teams``). Each user, through ``Workspace.for_user(email,
teams)``, gets a program of their team for their copy of the bundled telecom sample (7,506
respondents; ``AnalysisStore.program_for``, as the app's first stored model does), then
presses Train: lr + nb + rf, 5 folds, their own seed (no store hit between users), each model
stored in the program as it is made (``on_model``, as the Models page does). The first North
user is a heavy user: they press Train three times before anyone else (their job, then lr + nb
twice with other seeds); then the seven others press Train, all back to back. The heavy user's
extra jobs must not delay the others' first ones.

Recorded per job: time queued, the highest queue position seen (sampled every 50 ms), run
time, state; the most jobs running at once in all and per user (exact, from each job's start
and end times, and sampled from the pool as a check); the order the jobs started in; after the
run, each user's ``list_programs()`` (only their team's programs, with their models) and the
error of opening another team's program by name. Memory: the process's own peak (``VmHWM``;
``ru_maxrss`` is inherited across ``exec`` from ``make bench``'s process, see ``_rss.py``) and
the highest ``VmRSS`` sampled while training. Baseline in the same run: one user alone, same
job, in a process of its own. Each scenario runs in a child process (``python
bench/bench_team_load.py SCENARIO`` prints its figures as JSON).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _rss import PEAK_KB_SOURCE  # noqa: E402

TEAMS = {"North": [f"north{i}@north.example" for i in range(1, 5)],
         "South": [f"south{i}@south.example" for i in range(1, 5)]}
ALGORITHMS = ("lr", "nb", "rf")
EXTRA = ("lr", "nb")  # the heavy user's two more clicks
FOLDS = 5
SAMPLE = 0.05  # s between samples of the queue and the memory
TIMEOUT = 3600  # s, per job

_NAMESPACE: dict = {}
exec(PEAK_KB_SOURCE, _NAMESPACE)  # the children's own peak (VmHWM)
peak_kb = _NAMESPACE["peak_kb"]


def _log(message: str) -> None:
    print(f"[bench_team_load] {message}", file=sys.stderr, flush=True)


def _rss_kb() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


class JobFigures(NamedTuple):  # not a dataclass: bench/run.py loads this file unregistered
    user: str
    team: str
    algorithms: str
    queued_s: float
    max_position: int
    run_s: float
    state: str
    started_as: int  # 1: the first job to start


class Monitor(threading.Thread):
    """Samples the jobs' queue positions, the pool's running jobs and the process's RSS."""

    def __init__(self, pool, jobs) -> None:
        super().__init__(daemon=True)
        self.pool, self.jobs = pool, jobs
        self.positions: Counter[int] = Counter()  # id(job) → highest position seen
        self.most_running, self.most_per_user, self.peak_rss_kb = 0, 0, _rss_kb()
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            for job in list(self.jobs):
                position = job.position
                if position is not None:
                    self.positions[id(job)] = max(self.positions[id(job)], position)
            running = Counter(j.user for j in self.pool.running())
            self.most_running = max(self.most_running, sum(running.values()))
            self.most_per_user = max(self.most_per_user, max(running.values(), default=0))
            self.peak_rss_kb = max(self.peak_rss_kb, _rss_kb())
            self._done.wait(SAMPLE)

    def stop(self) -> None:
        self._done.set()
        self.join()


def _most_at_once(intervals: list[tuple[float, float]]) -> int:
    """The most intervals holding one instant (an end before a start at the same time)."""
    points = sorted([(b, 1) for b, _ in intervals] + [(e, -1) for _, e in intervals])
    most = current = 0
    for _, step in points:
        current += step
        most = max(most, current)
    return most


def scenario(name: str) -> dict:
    """One scenario (``alone``: north1 only, no extra jobs; ``team``: everyone), its figures."""
    from cx_app.app.job_pool import JobPool, limits_from_env
    from cx_app.app.session import Analysis, ResultStore
    from cx_app.app.training import TrainingJob
    from cx_app.errors import WorkspaceError
    from cx_app.survey.importing import load_survey
    from cx_app.survey.samples import sample_path
    from cx_app.workspace.analyses import AnalysisStore
    from cx_app.workspace.programs import Workspace
    from cx_app.workspace.teams import teams_from_yaml_text

    warnings.simplefilter("ignore")
    members = ({"North": TEAMS["North"][:1]} if name == "alone" else TEAMS)
    teams = teams_from_yaml_text(json.dumps(
        {"teams": {team: {"analyst": emails} for team, emails in TEAMS.items()}}), "teams.yaml")
    data = sample_path("telecom_nps").read_bytes()
    with tempfile.TemporaryDirectory() as folder:
        server = Workspace.open(f"sqlite:///{Path(folder) / 'workspace.db'}", user="server")
        pool, store = JobPool(limits_from_env()), ResultStore(64)
        users = []  # (email, team, workspace, program, analysis)
        for team, emails in members.items():
            for email in emails:
                workspace = server.for_user(email, teams)
                survey = load_survey(data, filename=f"{email.split('@')[0]}_telecom_nps.xlsx")
                program = AnalysisStore(workspace).program_for(survey, None, keep_files=False,
                                                               team=team)
                users.append((email, team, workspace, program, Analysis(
                    survey=survey, data_key=survey.data_key, plan=survey.schema.plan_spec)))
        setup_rss_kb = _rss_kb()
        _log(f"{name}: {len(users)} users set up, RSS {setup_rss_kb / 1024:.0f} MB")

        def submit(user, algorithms, seed):
            email, team, workspace, program, analysis = user
            keep = AnalysisStore(workspace).store_model
            job = TrainingJob(
                analysis, {a: {} for a in algorithms}, folds=FOLDS, seed=seed,
                calibration="none", store=store,
                on_model=lambda m: keep(program, m, data_key=analysis.data_key,
                                        respondents=len(analysis.survey.y)))
            submitted = time.monotonic()
            jobs.append(job.start(pool=pool, user=email))
            return job, team, submitted

        jobs: list = []
        monitor = Monitor(pool, jobs)
        monitor.start()
        start = time.monotonic()
        runs = [submit(users[0], ALGORITHMS, 1)]
        if name == "team":  # the heavy user's three clicks come first
            runs += [submit(users[0], EXTRA, 100 + k) for k in (1, 2)]
        runs += [submit(user, ALGORITHMS, seed) for seed, user in enumerate(users[1:], 2)]
        for job, _, _ in runs:
            job.join(TIMEOUT)
            job.finish()
        wall = time.monotonic() - start
        monitor.stop()
        pool.shutdown()
        order = sorted(runs, key=lambda r: r[0].began or float("inf"))
        figures = [JobFigures(
            job.pooled.user, team, "+".join(job.algorithms),
            (job.began or job.ended) - submitted, monitor.positions[id(job)],
            job.ended - (job.began or job.ended), job.state
            + "".join(f" ({e.label} failed)" for e in job.events if e.status == "failed"),
            order.index((job, team, submitted)) + 1) for job, team, submitted in runs]
        intervals = [(j.began, j.ended) for j, _, _ in runs if j.began is not None]
        per_user = max(_most_at_once([(j.began, j.ended) for j, _, _ in runs
                                      if j.pooled.user == u and j.began is not None])
                       for u in {j.pooled.user for j, _, _ in runs})
        seen, refused = {}, {}
        for email, team, workspace, _, _ in users:
            seen[email] = [(p.name, p.team, len(p.models)) for p in workspace.list_programs()]
            other = next((p for _, t, _, p, _ in users if t != team), None)
            if other is not None:
                try:
                    workspace.show(other)
                    refused[email] = f"OPENED {other}"
                except WorkspaceError as exc:
                    refused[email] = str(exc)
        server.close()
    return {"scenario": name, "limits": asdict(pool.limits), "wall_s": wall,
            "jobs": [f._asdict() for f in figures], "most_running": _most_at_once(intervals),
            "most_running_sampled": monitor.most_running, "most_per_user": per_user,
            "most_per_user_sampled": monitor.most_per_user,
            "programs": {e: t for e, t, _, _, _ in users}, "seen": seen, "refused": refused,
            "setup_rss_mb": setup_rss_kb / 1024, "peak_rss_sampled_mb": monitor.peak_rss_kb / 1024,
            "peak_mb": peak_kb() / 1024}


def _child(name: str) -> dict:
    _log(f"scenario {name}")
    done = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True,
                          cwd=ROOT, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"scenario {name} failed: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def run() -> str:
    before = _uptime()
    alone = _child("alone")
    team = _child("team")
    after = _uptime()
    return _section(alone, team, before, after)


def _isolation(team: dict) -> tuple[bool, list[str]]:
    """Whether each user saw exactly their team's programs and was refused another's; lines."""
    lines, ok = [], True
    for email, user_team in team["programs"].items():
        own = sorted(f"{e.split('@')[0]}_telecom_nps" for e, t in team["programs"].items()
                     if t == user_team)
        names = sorted(n for n, _, _ in team["seen"][email])
        teams_seen = sorted({t for _, t, _ in team["seen"][email]})
        refused = team["refused"].get(email, "")
        good = names == own and teams_seen == [user_team] and refused.startswith(
            "no program named")
        ok &= good
        models = ", ".join(str(m) for _, _, m in team["seen"][email])
        lines.append(f"| {email} | {user_team} | {len(names)} ({', '.join(teams_seen)}) | "
                     f"{models} | {refused.split(' in the workspace')[0]} | "
                     f"{'yes' if good else '**no**'} |")
    return ok, lines


def _section(alone: dict, team: dict, before: str, after: str) -> str:
    limits = team["limits"]
    jobs = team["jobs"]
    firsts = [j for j in jobs if j["algorithms"] == "+".join(ALGORITHMS)]
    extras = [j for j in jobs if j["algorithms"] == "+".join(EXTRA)]
    finished = sum(j["state"] == "finished" for j in jobs)
    ok, isolation = _isolation(team)
    solo = alone["jobs"][0]
    lines = [
        "## Team load: 8 analysts of two teams training at once through the job pool",
        "",
        f"One process as the server: one SQLite workspace, `Workspace.for_user(email, teams)` "
        f"per user (North 4, South 4 analysts), one `JobPool` with the default limits "
        f"({limits['per_user']} job per user, {limits['per_server']} per server: the CPUs), one "
        f"result store. Each user: a program of their team for their copy of the telecom sample "
        f"(7,506 respondents, 9 attributes), then Train {' + '.join(ALGORITHMS)}, {FOLDS} folds, "
        f"own seed, each model stored in the program as made. north1 is a heavy user: they press "
        f"Train three times first (their job, then {' + '.join(EXTRA)} twice), then the seven "
        f"others, all back to back (jobs below in the order submitted). Baseline: north1 "
        f"alone, same job, in a process of its own. Library level (no browser).",
        "",
        f"Machine load: before `{before}`; after `{after}`.",
        "",
        "| job | user | team | queued | highest position | run | started as | state |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for i, j in enumerate(jobs, 1):
        lines.append(f"| {i} {j['algorithms']} | {j['user']} | {j['team']} | "
                     f"{j['queued_s']:.1f} s | {j['max_position']} | {j['run_s']:.1f} s | "
                     f"{j['started_as']} | {j['state']} |")
    lines += [
        f"| baseline: alone | {solo['user']} | {solo['team']} | {solo['queued_s']:.1f} s | "
        f"{solo['max_position']} | {solo['run_s']:.1f} s | 1 | {solo['state']} |",
        "",
        "| figure | 8 users (+2 heavy) | alone |",
        "|---|---:|---:|",
        f"| jobs finished | {finished} of {len(jobs)} | {alone['jobs'][0]['state']} |",
        f"| wall, first Train → last job ended | {team['wall_s']:.1f} s | "
        f"{alone['wall_s']:.1f} s |",
        f"| most jobs running at once (exact; sampled) | {team['most_running']}; "
        f"{team['most_running_sampled']} (limit {limits['per_server']}) | "
        f"{alone['most_running']} |",
        f"| most jobs of one user running at once (exact; sampled) | {team['most_per_user']}; "
        f"{team['most_per_user_sampled']} (limit {limits['per_user']}) | "
        f"{alone['most_per_user']} |",
        f"| first jobs: mean run time | {_mean(j['run_s'] for j in firsts):.1f} s | "
        f"{solo['run_s']:.1f} s |",
        f"| first jobs: longest wait in the queue | {max(j['queued_s'] for j in firsts):.1f} s"
        f" | {solo['queued_s']:.1f} s |",
        f"| heavy user's extra jobs (submitted 2nd and 3rd) started as | "
        f"{', '.join(str(j['started_as']) for j in extras)} of {len(jobs)} | — |",
        f"| RSS after set-up (surveys loaded) | {team['setup_rss_mb']:.0f} MB | "
        f"{alone['setup_rss_mb']:.0f} MB |",
        f"| peak RSS sampled while training | {team['peak_rss_sampled_mb']:.0f} MB | "
        f"{alone['peak_rss_sampled_mb']:.0f} MB |",
        f"| process peak (VmHWM) | {team['peak_mb']:.0f} MB | {alone['peak_mb']:.0f} MB |",
        "",
        f"Ratios to the baseline: wall ×{team['wall_s'] / alone['wall_s']:.2f} for "
        f"{len(firsts)} jobs of the baseline's size and {len(extras)} lighter ones; mean run "
        f"time of a first job ×{_mean(j['run_s'] for j in firsts) / solo['run_s']:.2f} (two "
        f"at once share the cores); process peak ×{team['peak_mb'] / alone['peak_mb']:.2f}.",
        "",
        f"Memory: the peak grows with the jobs running at once (at most {limits['per_server']}"
        f"), not with the users signed in: {team['peak_mb'] - team['setup_rss_mb']:.0f} MB "
        f"above the set-up for the team run, {alone['peak_mb'] - alone['setup_rss_mb']:.0f} MB"
        f" for one job alone.",
        "",
        "Isolation after the run (each user's `list_programs()`; opening the first program "
        "of the other team by name):",
        "",
        "| user | team | programs listed (their teams) | models in each | other team's "
        "program | only their team |",
        "|---|---|---|---|---|---|",
        *isolation,
        "",
        f"Every job finished: {'yes' if finished == len(jobs) else '**no**'}; limits held: "
        f"{'yes' if team['most_running'] <= limits['per_server'] and team['most_per_user'] <= limits['per_user'] else '**no**'}; "  # noqa: E501
        f"no user saw another team's programs: {'yes' if ok else '**no**'}.",
    ]
    return "\n".join(lines) + "\n"


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


if __name__ == "__main__":
    print(json.dumps(scenario(sys.argv[1])))
