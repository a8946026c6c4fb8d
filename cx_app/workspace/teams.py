"""Teams and roles of a team deployment: who may read, analyse or administer a team's programs.

The teams file, its entries (an address, or a whole ``"@domain"``), the roles and what each may
do are described in ``docs/deployment.md`` ("Write the teams file"). A user listed several times
in a team has their highest role there; a program without a team belongs, in team mode, to the
admins of every team. A bad teams file is refused whole, one sentence per problem.

>>> teams = teams_from_yaml_text("teams: {North: {analyst: [dana@example.com], "
...                              "viewer: ['@example.org']}}", "teams.yaml")
>>> teams.teams_of("Dana@Example.com"), teams.role("carol@example.org", "North")
(('North',), <Role.VIEWER: 1>)
>>> teams.can("carol@example.org", "North", Action.ANALYSE)
False
>>> teams.require("carol@example.org", "North", Action.ANALYSE, doing="training")
Traceback (most recent call last):
cx_app.errors.AccessDenied: carol@example.org is a viewer of North: viewers read programs and download reports; training needs the analyst role
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from cx_app.engine.plan import format_validation_error
from cx_app.errors import AccessDenied, WorkspaceError

__all__ = ["Action", "Role", "TeamRoster", "Teams", "TeamsDocument", "load_teams",
           "parse_teams", "teams_from_yaml_text"]

MAX_TEAMS_BYTES = 1_000_000  # refused unread (a few thousand people fit in 100 kB)
TEAM_NAME_CHARS = 200  # the width of ``programs.team``


class Role(IntEnum):
    """A role in a team, ordered: a higher role may do whatever a lower one may."""

    VIEWER = 1
    ANALYST = 2
    ADMIN = 3

    @property
    def label(self) -> str:
        return self.name.lower()


class Action(StrEnum):
    READ = "read"
    ANALYSE = "analyse"
    ADMINISTER = "administer"


NEEDED: Mapping[Action, Role] = MappingProxyType(
    {Action.READ: Role.VIEWER, Action.ANALYSE: Role.ANALYST, Action.ADMINISTER: Role.ADMIN})

DOING: Mapping[Action, str] = MappingProxyType(
    {Action.READ: "reading programs", Action.ANALYSE: "uploading, training and estimating",
     Action.ADMINISTER: "deleting and moving programs"})

ROLE_SCOPE: Mapping[Role, str] = MappingProxyType(
    {Role.VIEWER: "viewers read programs and download reports",
     Role.ANALYST: "analysts also upload, train and estimate, but do not delete or move programs",
     Role.ADMIN: "admins may do everything"})

_ADDRESS = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_DOMAIN = re.compile(r"^@[^@\s]+\.[^@\s]+$")


class TeamRoster(BaseModel):
    """One team of the teams file (entries kept in lower case)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    admin: tuple[str, ...] = ()
    analyst: tuple[str, ...] = ()
    viewer: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _known_roles(cls, data: Any) -> Any:
        if data is None:
            raise ValueError("the team lists nobody (give it admin, analyst or viewer entries)")
        if not isinstance(data, dict):
            raise ValueError(f"expected the roles admin, analyst and viewer, got "
                             f"{type(data).__name__}")
        unknown = [str(k) for k in data if k not in ("admin", "analyst", "viewer")]
        if unknown:
            raise ValueError(f"unknown role {unknown[0]!r} (the roles are admin, analyst and "
                             "viewer)")
        return {k: ([v] if isinstance(v, str) else v) for k, v in data.items() if v is not None}

    @field_validator("admin", "analyst", "viewer", mode="after")
    @classmethod
    def _entries(cls, entries: tuple[str, ...]) -> tuple[str, ...]:
        cleaned = []
        for entry in entries:
            text = entry.strip().lower()
            if not (_ADDRESS.match(text) or _DOMAIN.match(text)):
                raise ValueError(f"{entry!r} is neither an e-mail address nor a domain such as "
                                 "'@example.com'")
            cleaned.append(text)
        return tuple(cleaned)

    @model_validator(mode="after")
    def _someone(self) -> TeamRoster:
        if not (self.admin or self.analyst or self.viewer):
            raise ValueError("the team lists nobody (give it admin, analyst or viewer entries)")
        return self

    def role_of(self, email: str) -> Role | None:
        address = email.strip().lower()
        if not _ADDRESS.match(address):
            return None
        domain = "@" + address.rpartition("@")[2]
        for role in (Role.ADMIN, Role.ANALYST, Role.VIEWER):
            entries = getattr(self, role.label)
            if address in entries or domain in entries:
                return role
        return None


class TeamsDocument(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    teams: dict[str, TeamRoster]

    @field_validator("teams", mode="after")
    @classmethod
    def _names(cls, teams: dict[str, TeamRoster]) -> dict[str, TeamRoster]:
        if not teams:
            raise ValueError("the file names no team (teams: {name: {admin: [...]}})")
        for name in teams:
            if not name.strip() or len(name) > TEAM_NAME_CHARS or name != name.strip():
                raise ValueError(f"team name {name!r} must be 1 to {TEAM_NAME_CHARS} characters "
                                 "without spaces around it")
        folded: dict[str, str] = {}
        for name in teams:
            if name.casefold() in folded:
                raise ValueError(f"teams {folded[name.casefold()]!r} and {name!r} differ only "
                                 "in case; name each team once")
            folded[name.casefold()] = name
        return teams


@dataclass(frozen=True)
class Teams:
    """Who may do what with each team's programs; single-user mode (no document) allows all."""

    document: TeamsDocument | None
    source: str = "single-user mode"

    @property
    def names(self) -> tuple[str, ...]:
        return () if self.document is None else tuple(self.document.teams)

    def role(self, email: str, team: str | None) -> Role | None:
        """None: not a member. A program without a team is an admin's of any team."""
        if self.document is None:
            return Role.ADMIN
        if team is None:
            return Role.ADMIN if Role.ADMIN in self.roles(email).values() else None
        roster = self.document.teams.get(team)
        return None if roster is None else roster.role_of(email)

    def roles(self, email: str) -> dict[str, Role]:
        if self.document is None:
            return {}
        found = {name: roster.role_of(email) for name, roster in self.document.teams.items()}
        return {name: role for name, role in found.items() if role is not None}

    def teams_of(self, email: str) -> tuple[str, ...]:
        return tuple(self.roles(email))

    def can(self, email: str, team: str | None, action: Action) -> bool:
        role = self.role(email, team)
        return role is not None and role >= NEEDED[action]

    def require(self, email: str, team: str | None, action: Action,
                doing: str | None = None) -> None:
        if self.can(email, team, action):
            return
        needed = NEEDED[action]
        what = doing or DOING[action]
        team_text = team if team is not None else "the programs without a team"
        role = self.role(email, team)
        if role is None:
            holder = ("an admin of a team" if team is None
                      else f"a member of {team} ({needed.label} or higher)")
            raise AccessDenied(f"{email or 'this user'} is not a member of {team_text}: "
                               f"{what} needs {holder}; ask an admin to add you to "
                               f"{self.source}")
        article = "an" if role.label[0] in "aeiou" else "a"
        raise AccessDenied(f"{email} is {article} {role.label} of {team_text}: "
                           f"{ROLE_SCOPE[role]}; {what} needs the {needed.label} role")


class _UniqueKeyLoader(yaml.SafeLoader):
    """Refuses a key given twice (a team or role written twice would silently drop the first)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[Any] = set()
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"{key!r} is given twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def parse_teams(data: object, source: str = "teams file") -> Teams:
    if not isinstance(data, dict):
        raise WorkspaceError(f"{source}: expected a mapping with a 'teams' key (teams: {{name: "
                             f"{{admin: [...], analyst: [...], viewer: [...]}}}}), got "
                             f"{type(data).__name__}")
    try:
        return Teams(TeamsDocument.model_validate(data), source=source)
    except ValidationError as exc:
        raise WorkspaceError(format_validation_error(exc, source)) from None


def teams_from_yaml_text(text: bytes | str, name: str = "teams file") -> Teams:
    if len(text) > MAX_TEAMS_BYTES:
        raise WorkspaceError(f"{name}: a teams file of {len(text):,} bytes is too large "
                             f"(limit {MAX_TEAMS_BYTES:,} bytes)")
    try:
        decoded = text.decode("utf-8-sig") if isinstance(text, bytes) else text
        data = yaml.load(decoded, Loader=_UniqueKeyLoader)
    except UnicodeDecodeError:
        raise WorkspaceError(f"{name}: not a UTF-8 text (YAML) file") from None
    except yaml.YAMLError as exc:
        raise WorkspaceError(f"{name}: not valid YAML: {' '.join(str(exc).split())}") from None
    return parse_teams(data, source=name)


def load_teams(path: str | Path) -> Teams:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise WorkspaceError(f"{path.name}: cannot read the teams file "
                             f"({exc.strerror or exc})") from None
    return teams_from_yaml_text(data, name=path.name)
