"""Layout inference: a survey schema proposed from a table's headers and answers."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pandas as pd

from cx_app.errors import SchemaError
from cx_app.safe_text import plain_text
from cx_app.survey.distinct import on_distinct
from cx_app.survey.layout import GRID_ITEM
from cx_app.survey.leaks import leak_reason
from cx_app.survey.personal import split_words
from cx_app.survey.schema import (
    KNOWN_NUMERIC_CODES,
    KNOWN_TEXT_CODES,
    RECOMMEND_WORDS,
    Scale,
    SegmentRole,
    SurveySchema,
    guess_kind,
    guess_recommend,
    guess_role,
    normalise_header,
    schema_from_mapping,
)

STANDARD_SCALES = ((0, 10), (1, 10), (1, 7), (1, 6), (1, 5), (1, 3), (0, 1), (-2, 2), (-1, 1),
                   (0, 5))
"""The scales inference recognises; a column is put on the narrowest one that holds its
answers (a scale written in its header wins)."""
_FEW_ANSWERS = 30
"""Below this many answers an attribute's own range says little: it takes its siblings' scale."""
_ID_WORDS = {"id", "idno", "respid", "responseid", "respondentid", "uuid", "identifier", "serial"}
"""Header words that make a column an identifier, never a score."""
_ID_NOUNS = {"respondent", "customer", "code", "client", "account"}
_ID_TAILS = {"no", "nr", "num", "number", "ref", "reference", "key"}
""""Customer" or "Customer no." is an identifier; "Customer support" is a CX attribute."""


def _id_like(header: str) -> bool:
    """Whether a header names an identifier (Typeform's response token is headed "#").

    >>> [_id_like(h) for h in ("Customer", "Customer no.", "Customer support", "#")]
    [True, True, False, True]
    """
    words = _words(header)
    return (header.strip() in {"#", "№", "n°"} or bool(words & _ID_WORDS)
            or bool(words & _ID_NOUNS and words <= _ID_NOUNS | _ID_TAILS))


_FREE_TEXT_WORDS = {"comment", "comments", "reason", "reasons", "why", "feedback", "verbatim",
                    "verbatims", "explain", "explanation", "suggestion", "suggestions",
                    "remark", "remarks", "text", "specify", "describe", "open"}
"""Header words of an open question: such a column is free text, never a segment."""
_SEGMENT_WORDS = 3.0
"""A segment's answers are short: at most this many words on average per distinct value."""
_WEIGHT_WORDS = {"weight", "weighting", "wgt", "wt", "gewicht", "gewichtung", "poids", "peso"}
_TARGET_WORDS = tuple(re.compile(words) for words in (
    RECOMMEND_WORDS, r"\bnps\b", r"net promoter", r"overall|\bgesamt", r"\bcsat\b", r"effort",
    r"\bCES\b", r"likelihood",
    r"satisfaction|zufriedenheit|satisfacci|satisfa[cç][aã]o|soddisfazione|tevredenheid"))
"""What a target question's header says, earlier patterns first, matched on the case-folded
header except "CES" (in capitals: French "ces" is a word). Short words must stand alone ("nps"
is not "snps"); long stems may sit inside a compound ("Gesamtzufriedenheit",
"weiterempfehlen")."""


def _target_rank(header: str) -> int:
    """The position in :data:`_TARGET_WORDS` of the first pattern a header matches (their
    count when none does)."""
    raw = plain_text(header)
    folded = normalise_header(raw)
    return next((i for i, w in enumerate(_TARGET_WORDS)
                 if w.search(raw if w.pattern == r"\bCES\b" else folded)), len(_TARGET_WORDS))


def _numeric_profile(values: pd.Series) -> tuple[pd.Series, set] | None:
    """(integer scores without missing codes, codes seen), or None if the column is not a score:
    at least 90% of its non-blank, non-code cells integers in −5..10 spanning at most 10 points
    (typos are tolerated: the importer reports them later)."""
    present, is_text_code, numbers, folded = _score_cells(values)
    if not present.any():
        return None
    is_num_code = present & np.isin(numbers, KNOWN_NUMERIC_CODES)
    is_rest = present & ~is_num_code & ~is_text_code
    rest = numbers[is_rest]
    whole = (rest == np.round(rest)) & (rest >= -5) & (rest <= 10)
    scores = rest[whole]
    if rest.size == 0 or scores.size < 0.9 * rest.size or scores.max() - scores.min() > 10:
        return None
    shown = {"don't know": "Don't know", "n/a": "N/A", "na": "NA"}  # a folded code as written
    codes: set = {shown.get(c, c) for c in set(folded[is_text_code])} | {
        int(v) for v in pd.unique(numbers[is_num_code])}
    index = values.index[np.flatnonzero(is_rest)[whole]]
    return pd.Series(scores, index=index, name=values.name).astype(int), codes


def _score_cells(values: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per cell of a column: (present, a known text code, its number with a decimal comma
    allowed (NaN if none), the folded text); a float64 column is its own number."""
    n = len(values)
    if values.dtype == np.float64:
        numbers = values.to_numpy(dtype=float, copy=True)
        present = ~np.isnan(numbers)
        return present, np.zeros(n, dtype=bool), numbers, np.full(n, None, dtype=object)
    return on_distinct(values, _score_cell_texts)


def _score_cell_texts(values: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                   np.ndarray]:
    """:func:`_score_cells` through each cell's text."""
    text = values.astype("string").str.strip()
    present = (values.notna() & (text != "")).to_numpy(dtype=bool, na_value=False)
    folded = np.full(len(values), None, dtype=object)
    folded[present] = (text[present].str.casefold().str.replace("’", "'", regex=False)
                       .to_numpy(dtype=object))
    is_text_code = present & pd.Series(folded, dtype=object).isin(KNOWN_TEXT_CODES).to_numpy()
    numbers = np.full(len(values), np.nan)
    numbers[present] = pd.to_numeric(text[present].str.replace(",", ".", regex=False),
                                     errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    return present, is_text_code, numbers, folded


def _has_text(column: pd.Series) -> np.ndarray:
    """Cells that are not missing and whose text is not blank."""
    keep = np.array(column.notna(), dtype=bool)
    keep[keep] = (column[keep].astype(str).str.strip() != "").to_numpy(dtype=bool)
    return keep


def _stated_scale(header: str) -> Scale | None:
    """A scale written in a header, e.g. ``"Likelihood to recommend (0-10)"``."""
    match = re.search(r"\(\s*(-?\d+)\s*(?:-|–|to)\s*(-?\d+)\s*\)", str(header))
    if match and int(match.group(2)) > int(match.group(1)):
        return Scale(min=int(match.group(1)), max=int(match.group(2)))
    return None


def _words(header: str) -> set[str]:
    """A header's words, camelCase and underscores split (``ResponseId`` → response, id)."""
    return set(re.findall(r"[a-z]+", split_words(str(header))))


def free_text(header: str, values: pd.Series) -> bool:
    """Whether a text column holds free text (open answers, never a segment): by its header,
    or answers (``values``: its non-blank cells) that are long or nearly all different.

    >>> free_text("Open comment", pd.Series(["ok"] * 3))
    True
    >>> free_text("Region", pd.Series(["North", "South", "North", "East"] * 10))
    False
    """
    if _words(header) & _FREE_TEXT_WORDS:
        return True
    present = values.astype(str).str.strip()
    distinct = pd.Series(present.unique())
    if distinct.str.split().str.len().mean() > _SEGMENT_WORDS:
        return True
    return len(present) >= 20 and len(distinct) > 0.5 * len(present)


_DATE_TEXT = re.compile(r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}")
_CHOICES_JOINED = re.compile(r"\s*,\s*")
_MOST_CHOICES = 30
"""A checkbox question offers at most this many choices (its answers join some of them)."""


def date_texts(values: pd.Series) -> bool:
    """Whether a text column's answers are dates written as text (a CSV's "2026-10-05 14:03"):
    such a column is the answer date, never free text.

    >>> date_texts(pd.Series(["2026-10-05 14:03", "2026-10-06 09:12"]))
    True
    >>> date_texts(pd.Series(["North", "2026-10-06"]))
    False
    """
    sample = pd.Series(values.astype(str).str.strip().unique()[:200])
    if sample.empty or not sample.str.contains(_DATE_TEXT).all():
        return False
    return bool(pd.to_datetime(sample, errors="coerce", format="mixed").notna().mean() >= 0.9)


def several_answers(values: pd.Series) -> bool:
    """Whether a text column holds several answers per respondent: a checkbox question that
    Google Forms or Qualtrics exports as its choices joined by commas ("Chat, Email"). As a
    segment each combination would be a group, and one respondent belongs to several choices.
    Answers with a varying number of parts, each part a choice seen elsewhere too; "Paris,
    France" (always two parts) and "Washington, DC" (a part seen once) stay single answers.

    >>> several_answers(pd.Series(["Chat", "Chat, Email", "Email, Phone", "Phone"]))
    True
    >>> several_answers(pd.Series(["Boston", "Washington, DC", "Boston"]))
    False
    """
    distinct = values.astype(str).str.strip().unique()
    if len(distinct) > 2**12:  # more combinations than a checkbox question's answers make
        return False
    parts = pd.Series(distinct).str.split(_CHOICES_JOINED)
    counts = parts.str.len()
    if parts.empty or counts.max() < 2 or counts.min() > 1:
        return False
    seen = Counter(part for choices in parts for part in set(choices))
    return len(seen) <= _MOST_CHOICES and all(
        seen[part] >= 2 for choices in parts[counts > 1] for part in choices)


def _unique_integers(values: pd.Series) -> bool:
    """Whether every answered cell is an integer and no two are equal (an id column)."""
    present = values.dropna().astype(str).str.strip()
    present = present[present != ""]
    if len(present) < 20 or not present.str.fullmatch(r"\d+").all():
        return False
    return present.nunique() == len(present)


def infer_scale(scores: pd.Series, header: str = "") -> Scale:
    """The scale of a column of integer scores: ``(a-b)`` in the header, else the narrowest
    standard scale that holds the values."""
    stated = _stated_scale(header)
    if stated is not None:
        return stated
    lo, hi = int(scores.min()), int(scores.max())
    fitting = [(a, b) for a, b in STANDARD_SCALES if a <= lo and hi <= b]
    if fitting:
        a, b = min(fitting, key=lambda s: (s[1] - s[0], s))
        return Scale(min=a, max=b)
    return Scale(min=lo, max=max(hi, lo + 1))


def _numbered_na(attributes: list[str], scores: dict[str, tuple[pd.Series, Scale]],
                 labels: dict[str, str]) -> list[tuple[list[str], int, str]]:
    """The matrices (items whose question text is "question - item") whose answers run from 1
    to one above a 5- or 7-point scale, the top being the number a Qualtrics numeric export
    gives "Not applicable": (items, that top, the question), none with its scale stated."""
    unstated = [h for h in attributes if _stated_scale(f"{h} {labels.get(h, '')}") is None]
    found = []
    for question, pairs in _matrix_items(unstated, labels, separators=(" - ",)).items():
        items = [h for h, _ in pairs]
        values = pd.concat([scores[h][0] for h in items])
        if values.min() >= 1 and int(values.max()) in (6, 8):
            found.append((items, int(values.max()), question))
    return found


def _matrix_items(attributes: list[str], labels: dict[str, str],
                  separators: tuple[str, ...] = (" - ", " – ")) -> dict[str, list[tuple[str, str]]]:
    """The matrix questions among the attributes: two or more whose question text (Qualtrics:
    "question - item"; SurveyMonkey: "question – item"; Google Forms: "question [item]") names
    the same question, as
    ``{question: [(header, item), …]}``. A plain file's headers are the analyst's own names
    and are never cut."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for h in attributes:
        text = labels.get(h, "")
        sep = next((s for s in separators if s in text), None)
        grid = GRID_ITEM.fullmatch(text.strip())
        if grid is not None:
            groups.setdefault(grid.group(1).strip(), []).append((h, grid.group(2).strip()))
        elif sep is not None:
            question, item = (part.strip() for part in text.rsplit(sep, 1))
            if question and item:
                groups.setdefault(question, []).append((h, item))
    return {q: items for q, items in groups.items() if len(items) > 1}


def _shown_labels(attributes: list[str], labels: dict[str, str]) -> tuple[dict[str, str], str]:
    """Each attribute's label (what the pages, the reports and the drivers show): a matrix
    item's own text ("Mobile app", not "How satisfied are you with each of the following? -
    Mobile app") unless two items would then read alike; else its question text. And a
    sentence naming the questions whose items are so labelled."""
    matrices = _matrix_items(attributes, labels)
    short = {h: item for items in matrices.values() for h, item in items}
    shown = {h: short.get(h, labels.get(h, h)) for h in attributes}
    counts = Counter(text.casefold() for text in shown.values())
    short = {h: item for h, item in short.items() if counts[item.casefold()] == 1}
    out = {h: plain_text(short.get(h) or labels[h]) for h in attributes
           if h in short or h in labels}
    told = [f"{plain_text(q)!r} ({', '.join(repr(short[h]) for h, _ in items if h in short)})"
            for q, items in matrices.items() if any(h in short for h, _ in items)]
    return out, ("items labelled by their own text, without the question they share: "
                 + "; ".join(told)) if told else ""


def matrix_sentence(question: str, items: list[str], top: int) -> str:
    """What the import did with a matrix whose answers reach one above its scale."""
    return (f"matrix {plain_text(question)!r} ({', '.join(map(repr, items))}) has answers "
            f"1–{top}, one above a {top - 1}-point scale, which is how a Qualtrics numeric "
            f"export codes 'Not applicable' (the numbers alone cannot tell), so it is read on "
            f"1–{top - 1} and each {top} is out of the scale (in the NPS, out of the models, "
            f"listed with the reason) — declare {top} a missing code in the mapping to keep "
            f"them as gaps, or set the scale 1–{top} if {top} is an answer")


def _no_scores(frame: pd.DataFrame, found: int) -> str:
    """Why a table has no layout, naming its sheet and header row: a header row of one cell
    (a sheet's title, "Bank NPS tracker") is said to be one, not called a column."""
    sheet, row = frame.attrs.get("sheet"), frame.attrs.get("header_row")
    where = (f" from sheet '{sheet}'" if sheet is not None else "")
    header = ("its header row" if row is None else "its variable names" if row == 0
              else f"its header row (row {row})")
    headers = list(frame.columns)
    if len(headers) == 1:
        read = (f"{header} holds a single cell, {headers[0]!r}, not a row of column headers, "
                f"and {'no' if not found else 'only one'} column under it holds scores")
    else:
        shown = ", ".join(map(repr, headers[:8])) + (", …" if len(headers) > 8 else "")
        read = (f"{header} names {len(headers)} columns ({shown}), and "
                f"{'none' if not found else 'only one'} of them holds scores")
    return (f"{where}: {read} on an integer scale (a target and at least one attribute are "
            "needed)")


def infer_schema(frame: pd.DataFrame, *, name: str = "inferred") -> SurveySchema:
    """Propose a layout for a table whose columns are the file's headers (to be confirmed).

    The target is the score whose header names a target question, else the widest-scaled
    score first; text columns with few distinct values and date columns are segments.
    """
    if frame.shape[1] == 0 or frame.shape[0] == 0:
        raise SchemaError("cannot infer a layout from an empty table")
    labels = dict(frame.attrs.get("labels", {}))  # the question texts (table.read_columns)

    def text(header: str) -> str:  # a header with its question text (the label), if any
        return f"{header} {labels[header]}" if header in labels else header

    scores: dict[str, tuple[pd.Series, Scale]] = {}
    codes: set = set()
    others: list[str] = []
    for header in frame.columns:
        column = frame[header]
        target_like = _target_rank(text(header)) < len(_TARGET_WORDS)
        not_a_score = (pd.api.types.is_datetime64_any_dtype(column) or _id_like(header)
                       or (guess_role(header) != "other" and not target_like))
        profile = None if not_a_score else _numeric_profile(column)
        if profile is not None:
            scale = infer_scale(profile[0], text(header))
            if (guess_recommend(text(header)) and scale.min >= 0 and scale.max <= 10
                    and _stated_scale(text(header)) is None):
                scale = Scale(min=0, max=10)  # a recommend question is asked on 0–10
            if (scale.min, scale.max) == (0, 1) and _stated_scale(text(header)) is None:
                profile = None  # a 0/1 answer (yes/no, female) splits respondents: a segment
        if profile is None:
            others.append(header)
            continue
        values, seen = profile
        scores[header] = (values, scale)
        codes |= seen
    if len(scores) < 2:
        raise SchemaError(f"could not infer a layout{_no_scores(frame, len(scores))}; give the "
                          "mapping (--target COL --scale MIN-MAX --attributes A,B,C)")
    # a target-sounding header first (earlier words win), else the widest scale
    target = min(scores, key=lambda h: (_target_rank(text(h)),
                                        -(scores[h][1].max - scores[h][1].min)))
    guessed = _target_rank(text(target)) == len(_TARGET_WORDS)
    target_scale = scores[target][1]
    kind = guess_kind(text(target), target_scale)
    respondent_id = weight = None
    segments: list[str] = []
    roles: dict[str, SegmentRole] = {}  # where the answers overrule the header's role
    free: list[str] = []
    joined: list[str] = []  # checkbox questions: several choices per respondent
    other_ids: list[str] = []  # identifiers besides the respondent's (a device, a network)
    n = len(frame)
    for header in others:
        column = frame[header]
        keep = _has_text(column)
        answered = int(keep.sum())
        if not answered:
            continue
        distinct = int(column[keep].nunique())
        words = _words(header)
        if weight is None and words & _WEIGHT_WORDS:
            weight = header  # checked when the file is read (positive numbers, none blank)
        elif respondent_id is None and distinct >= 0.95 * answered and _id_like(header):
            respondent_id = header
        elif _id_like(header) and distinct > max(50, int(0.2 * n)):  # "Store ID" of 20: a segment
            other_ids.append(header)
        elif pd.api.types.is_datetime64_any_dtype(column) or date_texts(column[keep]):
            segments.append(header)
            if guess_role(header) == "other":  # "Month" with dates stays the wave
                roles[header] = "date"
        elif not _words(text(header)) & _FREE_TEXT_WORDS and several_answers(column[keep]):
            joined.append(header)
        elif free_text(text(header), column[keep]):
            free.append(header)
        elif distinct <= max(50, int(0.2 * n)):
            segments.append(header)
            if guess_role(header) == "date" and not column[keep].astype(str).str.contains(
                    r"\d").any():
                roles[header] = "other"  # "Time": morning, evening
    if respondent_id is None:  # unique whole numbers under any header: the respondent id
        respondent_id = next((h for h in others if h not in segments and h != weight
                              and _unique_integers(frame[h])), None)
        if respondent_id in free:
            free.remove(respondent_id)
    def answers(h: str) -> pd.Series:  # a score column's answers, NaN for the other rows
        return scores[h][0].astype(float).reindex(frame.index)

    leaks = {h: reason for h in scores if h != target
             if (reason := leak_reason(answers(target), answers(h))) is not None}
    attributes = [h for h in scores if h != target and h not in leaks]
    if not attributes:
        raise SchemaError(
            f"could not infer a layout: every scored column besides the target {target!r} "
            "is derived from it (" + "; ".join(f"{h!r} {r}" for h, r in leaks.items())
            + "); give the mapping (--target COL --scale MIN-MAX --attributes A,B,C)")
    # each attribute on its own scale (1–5, 1–10 and −2..2 can sit in one file); one with few
    # answers, whose range says little, on the scale most of its siblings use
    usual = Counter(scores[h][1] for h in attributes).most_common(1)[0][0]
    for h in attributes:
        own = scores[h][1]
        if (_stated_scale(h) is None and len(scores[h][0]) < _FEW_ANSWERS
                and usual.min <= own.min and own.max <= usual.max):
            scores[h] = (scores[h][0], usual)
    matrices = _numbered_na(attributes, scores, labels)
    for items, top, _ in matrices:
        for h in items:
            scores[h] = (scores[h][0], Scale(min=1, max=top - 1))
    attr_scales = {scores[h][1] for h in attributes}
    # gaps ("not used" for roaming) are kept: the fitted models fill them (policy default)
    share_incomplete = float(np.mean(~np.logical_and.reduce(
        [frame.index.isin(scores[h][0].index) for h in attributes])))
    schema = schema_from_mapping(
        target=target,
        scale=target_scale,
        attributes=attributes,
        segments=segments,
        segment_roles=roles,
        respondent_id=respondent_id,
        weight=weight,
        kind=kind,
        attribute_scale=attr_scales.pop() if len(attr_scales) == 1 else target_scale,
        missing_codes=sorted(codes, key=lambda c: (isinstance(c, str), str(c))),
        name=name,
    )
    description = "inferred from the data"
    if leaks:
        description += "; left out as derived from the target: " + "; ".join(
            f"{h!r} {r}" for h, r in leaks.items())
    for what, columns in (("free text", free), ("identifiers, not answers", other_ids),
                          ("several answers per respondent, choices joined by commas", joined)):
        if columns:
            description += f"; {what} (never a segment): " + ", ".join(map(repr, columns))
    for items, top, question in matrices:
        description += "; " + matrix_sentence(question, items, top)
    if guessed:
        description += (f"; no header names a target question, so {target!r} was taken as the "
                        "target: check it")
    zero_to_ten = [h for h in scores if (scores[h][1].min, scores[h][1].max) == (0, 10)]
    if len(zero_to_ten) > 1 and not any(map(guess_recommend, zero_to_ten)):
        description += (f"; unsure: {len(zero_to_ten)} columns are on 0–10 and none is a "
                        "recommend question, so which one is the target must be confirmed")
    if share_incomplete > 0:
        description += (f"; {share_incomplete:.0%} of respondents miss an attribute score: "
                        "they stay in, and the models fill each gap with the training median "
                        "(the support vector machine and ordinal logistic regression also add "
                        "a 'was missing' indicator)")
    shown, told = _shown_labels(attributes, labels)
    if told:
        description += "; " + told
    # each attribute on its own scale, with its label (what the pages show)
    return schema.model_copy(update={"description": description, "attributes": tuple(
        a.model_copy(update={"scale": scores[h][1],
                             **({"label": shown[h]} if h in shown else {})})
        for a, h in zip(schema.attributes, attributes, strict=True))})
