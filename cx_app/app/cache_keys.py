"""The keys of what the pages cache process-wide from a workspace program (``st.cache_data``).

Each key holds the workspace, the person the page acts for (in team mode two people may see
different programs) and the program's version (:attr:`~cx_app.workspace.views.ProgramView.version`:
its waves and models), so an added or removed wave is drawn afresh and nobody is handed
another person's program.
"""

from __future__ import annotations

from cx_app.workspace.views import ProgramView, WaveView

__all__ = ["program_key", "wave_key"]


def program_key(view: ProgramView, *, workspace_url: str, user: str) -> tuple:
    return (workspace_url, user, view.version)


def wave_key(name: str, model_key: str, wave: WaveView, *, workspace_url: str, user: str
             ) -> tuple:
    return (workspace_url, user, name, model_key, wave.sha256, wave.part)
