"""Who is acting on the workspace, and what they may see and change (team mode).

Without a teams file (single-user mode, or the CLI run by an operator) nothing is checked. In
team mode a program the user may not read is reported exactly like a missing one, listing only
the programs they may read, so that its existence is not revealed.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from cx_app.errors import WorkspaceError
from cx_app.workspace.tables import Program
from cx_app.workspace.teams import TEAM_NAME_CHARS, Action, Teams

__all__ = ["Action", "Actor"]

SHOWN_NAMES = 10  # program names a "no program named" sentence lists


@dataclass(frozen=True)
class Actor:
    """The user a workspace acts for (an e-mail in team mode) and the teams file limiting them."""

    user: str
    teams: Teams | None = None
    acting_as: str | None = None  # the CLI's ``--as``: the OS account is recorded, this checked

    @property
    def member(self) -> str:
        return self.acting_as or self.user

    def can(self, team: str | None, action: Action) -> bool:
        return self.teams is None or self.teams.can(self.member, team, action)

    def require(self, team: str | None, action: Action, doing: str | None = None) -> None:
        if self.teams is not None:
            self.teams.require(self.member, team, action, doing=doing)

    def require_known_team(self, team: str | None) -> None:
        """A team's name fits the tables; in team mode it is one of the teams file's."""
        if team is not None and not (team.strip() and len(team) <= TEAM_NAME_CHARS):
            raise WorkspaceError(f"a team needs a name of 1 to {TEAM_NAME_CHARS} characters")
        if self.teams is None or team is None or team in self.teams.names:
            return
        raise WorkspaceError(f"{self.teams.source} has no team named {team!r}; its teams are "
                             f"{', '.join(self.teams.names)}.")

    def find(self, session: Session, name: str, action: Action, where: str,
             doing: str | None = None) -> Program:
        """The program ``name`` if the user may do ``action`` with it (``where``: the address)."""
        program = session.scalar(select(Program).where(Program.name == name))
        if program is None or not self.can(program.team, Action.READ):
            query = select(Program.name, Program.team).order_by(Program.name)
            if self.teams is None:
                query = query.limit(SHOWN_NAMES + 1)
            rows = session.execute(query)
            names = [n for n, team in rows if self.can(team, Action.READ)]
            listed = ", ".join(names[:SHOWN_NAMES]) + (", ..." if len(names) > SHOWN_NAMES else "")
            if self.teams is not None:  # team mode: only that it is not theirs
                raise WorkspaceError(f"no program named {name!r} among your teams' programs"
                                     + (f": yours are {listed}" if names else "") + ".")
            known = (f"its programs are {listed}" if names
                     else "it holds no program yet (cx-app program create)")
            raise WorkspaceError(f"no program named {name!r} in the workspace {where}: "
                                 f"{known}.")
        if action is not Action.READ:
            self.require(program.team, action, doing=doing)
        return program
