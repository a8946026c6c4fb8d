"""Personal data recognised in a survey's columns, by header and by content.

The import drops such a column before anything else sees it (``docs/platform-exports.md``).
Content is checked on a sample of the column's distinct answers, so a column of addresses
under any header is found.
"""

from __future__ import annotations

import ipaddress
import re

import pandas as pd

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")
_HEADER_KINDS = (
    ("e-mail addresses", re.compile(r"e-?mail")),
    ("IP addresses", re.compile(r"\bip ?address|\bipaddress|^ip$|\bip_address")),
    ("coordinates", re.compile(r"latitude|longitude|^lat$|^lon$|^lng$|geo ?location")),
    ("phone numbers", re.compile(r"\b(phone|telephone|mobile|cell) ?(number|no)\b|"
                                 r"^(phone|telephone|mobile)$")),
    ("names", re.compile(r"(first|last|full|given|family|recipient|respondent|customer|"
                         r"contact)[ _]?name$|^name$|^surname$")),
    ("postal addresses", re.compile(r"street|postal address|home address")),
)
_SAMPLE = 200
"""Distinct answers looked at for content (addresses are all distinct: a sample is enough)."""


def split_words(header: str) -> str:
    """A header in lower case with camelCase and underscores split into words."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", header).replace("_", " ")
    return " ".join(spaced.split()).casefold()


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip())
    except ValueError:
        return False
    return True


def personal_data(header: str, column: pd.Series) -> str | None:
    """What personal data a column holds, judged by its header or its content, or None.

    >>> personal_data("RecipientEmail", pd.Series(["a@b.com"]))
    'e-mail addresses'
    >>> personal_data("contact", pd.Series(["x@y.org", "z@w.net", None]))
    'e-mail addresses'
    >>> personal_data("Source", pd.Series(["10.0.0.1", "192.168.2.7"]))
    'IP addresses'
    >>> personal_data("Region", pd.Series(["North", "South"])) is None
    True
    """
    words = split_words(str(header))
    for kind, pattern in _HEADER_KINDS:
        if pattern.search(words):
            return kind
    present = column.dropna().astype(str).str.strip()
    present = present[present != ""]
    if present.empty:
        return None
    sample = pd.Series(pd.unique(present)[:_SAMPLE], dtype=object)
    if sample.str.fullmatch(_EMAIL).mean() >= 0.5:
        return "e-mail addresses"
    if sample.str.contains(r"^[0-9a-fA-F:.]+$", regex=True).mean() >= 0.5 and (
            sum(map(_is_ip, sample)) >= 0.5 * len(sample)) and sample.str.contains(
            r"[.:].*[.:]", regex=True).all():
        return "IP addresses"
    return None
