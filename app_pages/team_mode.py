"""Team mode in the app: sign-in through Streamlit's native OpenID Connect (``st.login``,
``st.user``, ``st.logout``), the teams file, and what the signed-in person may do. Not a page.

Team mode is on when the server was given a teams file (``CX_APP_TEAMS``, set by
``cx-app app --secrets FILE --teams FILE``, see docs/deployment.md). Otherwise the app is in
local single-user mode: no sign-in, it acts as :data:`cx_app.workspace.audit.LOCAL_APP_USER`
with every right, as ``make run`` always did.

In team mode the entry script calls :func:`gate` before anything else: a person who is not
signed in sees the app's name and a "Sign in" button and nothing more, on every page's address
(the pages are not even routed). A signed-in person who belongs to no team sees a sentence
saying so and "Sign out". The workspace then acts for the person's e-mail
(:meth:`cx_app.workspace.programs.Workspace.for_user`): lists, addresses, reports and exports
hold only their teams' programs, and changes need the roles of the teams file.

Who a person is (issue 33, OpenID Connect's conventions): the pair (issuer, ``sub``) of their
provider, not the e-mail claim. Their address finds their teams only when the provider says it
verified it: the ``email_verified`` claim is true (``CX_APP_VERIFIED_EMAIL_CLAIM`` names
another claim for providers that say it otherwise, see docs/deployment.md); an unverified
address ends the sign-in with one sentence. The first sign-in of a subject binds it to its
address in the workspace (:func:`cx_app.workspace.identities.bind_identity`); another subject
claiming that address later is refused. The audit trail records subject and address.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from cx_app.errors import CxAppError
from cx_app.safe_text import escape_markdown as md_escape
from cx_app.workspace.audit import LOCAL_APP_USER
from cx_app.workspace.identities import SignIn
from cx_app.workspace.teams import Action, Role, Teams, load_teams

ENV_TEAMS = "CX_APP_TEAMS"
ENV_VERIFIED_CLAIM = "CX_APP_VERIFIED_EMAIL_CLAIM"
DEFAULT_VERIFIED_CLAIM = "email_verified"
BOUND = "bound_sign_in"  # the sign-in (issuer, subject, address) checked for this session
APP_NAME = "CX driver analytics"
SIGNED_IN_AS = "signed_in_as"  # the e-mail the session's state belongs to
NEW_PROGRAM_TEAM = "new_program_team"  # the team that owns the programs this session creates


def teams_file() -> str | None:
    """The teams file of the server (None: local single-user mode)."""
    return os.environ.get(ENV_TEAMS, "").strip() or None


def team_mode() -> bool:
    return teams_file() is not None


@st.cache_resource(max_entries=2, ttl=60, show_spinner=False)
def _teams_at(path: str, modified: float) -> Teams:
    return load_teams(path)


def teams() -> Teams | None:
    """The teams file as read now (an edit is seen within a minute); None in local mode."""
    path = teams_file()
    if path is None:
        return None
    try:
        return _teams_at(path, Path(path).stat().st_mtime)
    except OSError as exc:
        raise CxAppError(f"{path}: the server's teams file cannot be read "
                         f"({exc.strerror or exc})") from None


def signed_in_email() -> str | None:
    """The signed-in person's e-mail, in lower case (None: not signed in, or no e-mail)."""
    if not st.user.is_logged_in:
        return None
    email = str(st.user.get("email") or "").strip().lower()
    return email or None


def verified_claim() -> str:
    """The claim that says the provider verified the address (``email_verified`` unless the
    server names another in ``CX_APP_VERIFIED_EMAIL_CLAIM``)."""
    return os.environ.get(ENV_VERIFIED_CLAIM, "").strip() or DEFAULT_VERIFIED_CLAIM


def _verified(value: object) -> bool:
    """A claim's value says "verified": JSON true (or the text "true", as some providers
    send it)."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def current_sign_in() -> SignIn | None:
    """The signed-in person's provider, subject and address (None: local mode, or nobody)."""
    if not team_mode() or not st.user.is_logged_in:
        return None
    return SignIn(issuer=str(st.user.get("iss") or ""), subject=str(st.user.get("sub") or ""),
                  email=signed_in_email() or "")


def _refuse(sentence: str, key: str) -> None:
    st.title(APP_NAME)
    st.error(md_escape(sentence))
    _sign_out_button(key)
    st.stop()


def _check_identity(email: str) -> None:
    """Stop the run unless the provider verified ``email`` and its subject owns it (bound at
    its first sign-in; checked once per session)."""
    claim = verified_claim()
    if not _verified(st.user.get(claim)):
        _refuse(f"Your identity provider has not verified the address {email} (its "
                f"{claim} claim is not true), and team mode finds your teams by a verified "
                "address only: verify it with your provider, or ask the server's administrator.",
                "sign_out_unverified")
    sign_in = current_sign_in()
    key = (sign_in.issuer, sign_in.subject, sign_in.email)
    if st.session_state.get(BOUND) == key:
        return
    from app_pages.common import workspace_database  # common imports this module
    from cx_app.workspace.identities import bind_identity

    try:
        bind_identity(workspace_database(), sign_in)
    except CxAppError as exc:
        _refuse(f"You cannot use this app with this sign-in: {exc}.", "sign_out_not_bound")
    st.session_state[BOUND] = key


def current_user() -> str:
    """Who the app acts for: the signed-in e-mail in team mode, else the local user."""
    if not team_mode():
        return LOCAL_APP_USER
    email = signed_in_email()
    if email is None:  # the gate stops such a run before any page asks
        raise CxAppError("nobody is signed in")
    return email


def _sign_in_configured() -> bool:
    """Whether the server's secrets hold the ``[auth]`` section ``st.login`` needs."""
    try:
        return "auth" in st.secrets
    except (FileNotFoundError, st.errors.StreamlitSecretNotFoundError):
        return False


def _sign_out_button(key: str) -> None:
    st.button("Sign out", on_click=st.logout, key=key)


def gate() -> None:
    """Team mode: stop the run unless a member of a team is signed in (see the module
    docstring); then the sidebar names them and offers "Sign out". Local mode: nothing."""
    if not team_mode():
        return
    if not st.user.is_logged_in:
        st.title(APP_NAME)
        if _sign_in_configured():
            st.button("Sign in", on_click=st.login, type="primary", key="sign_in")
        else:
            st.error("This server has a teams file but no sign-in: start it with "
                     "cx-app app --secrets FILE --teams FILE (see docs/deployment.md).")
        st.stop()
    email = signed_in_email()
    if email is None:
        st.title(APP_NAME)
        st.error("Your sign-in did not give an e-mail address, and team mode finds your teams "
                 "by e-mail: ask the server's administrator to have the identity provider "
                 "send the email claim.")
        _sign_out_button("sign_out_no_email")
        st.stop()
    if st.session_state.get(SIGNED_IN_AS) not in (None, email):  # another person, same tab
        for key in list(st.session_state):
            del st.session_state[key]
    _check_identity(email)
    st.session_state[SIGNED_IN_AS] = email
    try:
        roles = teams().roles(email)
    except CxAppError as exc:
        st.title(APP_NAME)
        st.error(md_escape(exc))
        st.stop()
    if not roles:
        st.title(APP_NAME)
        st.info(md_escape(f"You are signed in as {email}, who is not a member of any team on "
                          "this server: ask its administrator to add you to the teams file."))
        _sign_out_button("sign_out_no_team")
        st.stop()
    with st.sidebar:
        st.caption(md_escape(f"Signed in as {email} · " + ", ".join(
            f"{role.label} of {team}" for team, role in roles.items())))
        _sign_out_button("sign_out")


def may(action: Action, team: str | None) -> bool:
    """Whether the current person may do ``action`` with a program of ``team``."""
    found = teams()
    return found is None or found.can(current_user(), team, action)


def analyst_teams() -> tuple[str, ...]:
    """The teams in which the current person may create programs (analyst or admin)."""
    found = teams()
    if found is None:
        return ()
    return tuple(team for team, role in found.roles(current_user()).items()
                 if role >= Role.ANALYST)


def viewer_only() -> bool:
    """Team mode, and the person is an analyst or admin of no team: they read, and have no
    uploader at all (issue 33: an upload makes the server parse the file)."""
    return team_mode() and not analyst_teams()


def administrator() -> bool:
    """Local mode, or the person is an admin of a team (they may see the database URL)."""
    found = teams()
    return found is None or Role.ADMIN in found.roles(current_user()).values()


def new_program_team() -> str | None:
    """The team that owns the programs this session creates: the person's choice on the
    Project page, else their first team where they are an analyst (None in local mode, or
    when they are a viewer everywhere)."""
    choices = analyst_teams()
    chosen = st.session_state.get(NEW_PROGRAM_TEAM)
    return chosen if chosen in choices else (choices[0] if choices else None)
