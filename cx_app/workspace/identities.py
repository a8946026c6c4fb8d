"""Sign-in identities: a person is the pair (issuer, subject), bound to one address at first sign-in.

OpenID Connect identifies a person by ``iss`` and ``sub``; an e-mail claim is only an attribute.
Team mode finds teams by address, so an address belongs to exactly one subject (an administrator
releases it with :func:`forget_identity`); the app's sign-in gate checks it was verified.

>>> normalized_email("  Alice@Example.COM ")
'alice@example.com'
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from sqlalchemy import delete, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from cx_app.errors import AccessDenied, WorkspaceError
from cx_app.workspace.database import Database
from cx_app.workspace.tables import Identity

__all__ = ["SignIn", "bind_identity", "forget_identity", "normalized_email"]

ISSUER_CHARS, SUBJECT_CHARS, EMAIL_CHARS = 500, 255, 320


class SignIn(BaseModel):
    model_config = ConfigDict(frozen=True)

    issuer: str
    subject: str
    email: str


def normalized_email(email: str) -> str:
    """An address as team mode compares it: trimmed, lower case."""
    return email.strip().lower()


def bind_identity(database: Database, sign_in: SignIn) -> SignIn:
    """Accept ``sign_in`` if its subject is bound to its address, or bind them now when neither
    is bound yet; the sign-in with its address normalized."""
    found = SignIn(issuer=sign_in.issuer.strip(), subject=sign_in.subject.strip(),
                   email=normalized_email(sign_in.email))
    if not (found.issuer and found.subject and found.email):
        raise AccessDenied("your sign-in did not name its provider, its subject and an e-mail "
                           "address, so team mode cannot tell who you are")
    if (len(found.issuer) > ISSUER_CHARS or len(found.subject) > SUBJECT_CHARS
            or len(found.email) > EMAIL_CHARS):
        raise AccessDenied("your sign-in's provider, subject or address is too long for the "
                           "workspace to record")

    def work(session: Session) -> SignIn:
        rows = session.scalars(select(Identity).where(or_(
            Identity.email == found.email,
            (Identity.issuer == found.issuer) & (Identity.subject == found.subject)))).all()
        if not rows:
            session.add(Identity(issuer=found.issuer, subject=found.subject, email=found.email))
            session.flush()
            return found
        for row in rows:
            if (row.issuer, row.subject) != (found.issuer, found.subject):
                raise AccessDenied(
                    f"the address {found.email} already belongs to another sign-in account, "
                    "so this account cannot use it: sign in with the account that first used "
                    "it, or ask the server's administrator")
            if row.email != found.email:
                raise AccessDenied(
                    f"this sign-in account first signed in as {row.email}, not {found.email}: "
                    "ask the server's administrator to release the old address")
        return found

    try:
        return database.write(work)
    except IntegrityError:  # two first sign-ins at once: the other one won, ask again
        return database.write(work)


def forget_identity(database: Database, email: str) -> int:
    """The number of bindings removed (0 or 1)."""
    address = normalized_email(email)
    if not address:
        raise WorkspaceError("name the address whose sign-in binding to remove")
    return database.write(lambda s: s.execute(
        delete(Identity).where(Identity.email == address)).rowcount or 0)
