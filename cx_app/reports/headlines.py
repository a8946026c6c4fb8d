"""Headlines built from typed facts: a slide's title says only what its fact holds.

Each kind of headline has one frozen fact decided from the numbers and one ``headline()`` that
words it: "the best model depends on the level" only when it differs between levels, "rose
beyond its uncertainty" only when the change is flagged.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from cx_app.reports.formatting import join
from cx_app.result import Estimate

NAMED = 3  # values or drivers named in a headline at most (then "and N more")


def named(names: tuple[str, ...] | list[str]) -> str:
    """
    >>> named(["a", "b", "c", "d", "e"])
    'a, b, c and 2 more'
    """
    names = list(names)
    return join(names if len(names) <= NAMED else [*names[:NAMED], f"{len(names) - NAMED} more"])


class Fact(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BestModelFact(Fact):
    """The best model (by the best-model rule's metric, accuracy) at each level."""

    models: int = Field(ge=0)
    best_by_level: tuple[tuple[str, str], ...] = ()  # (level as read, best model) in level order

    @property
    def same_everywhere(self) -> bool:
        return len({model for _, model in self.best_by_level}) == 1

    def headline(self) -> str:
        if not self.best_by_level:
            return "The program's results hold no model measures"
        if self.models == 1:
            return (f"{self.best_by_level[0][1]} is the program's one model, so there is no "
                    "other to compare")
        if self.same_everywhere:
            where = "at every level" if len(self.best_by_level) > 1 else "here"
            return f"{self.best_by_level[0][1]} is the best model {where}"
        levels: dict[str, list[str]] = {}
        for level, model in self.best_by_level:
            levels.setdefault(model, []).append(level)
        return "The best model depends on the level: " + ", ".join(
            f"{model} at {join(where)}" for model, where in levels.items())


class ChangeFact(Fact):
    """The estimated score's change between two waves and whether it is beyond its
    uncertainty (the tracker's estimated series: a wave with its own scores also has a
    realized one, which may have moved otherwise)."""

    score_name: str  # the vocabulary's short name
    since: str  # the previous wave's label
    change: float
    significant: bool

    def headline(self) -> str:
        verb = "rose" if self.change > 0 else "fell" if self.change < 0 else "did not move"
        amount = f" {abs(self.change):.1f} points" if self.change else ""
        where = "beyond" if self.significant else "within"
        return (f"The estimated {self.score_name} {verb}{amount} since {self.since}, {where} its "
                "uncertainty")


class FirstWaveFact(Fact):
    """The only wave of a program and its estimated score."""

    score_name: str
    wave: str
    score: str

    def headline(self) -> str:
        return f"The first wave, {self.wave}, has an estimated {self.score_name} of {self.score}"


class SegmentMovesFact(Fact):
    """Which values of one segment moved beyond their uncertainty since the previous wave."""

    head: str  # "Region in Q3": the segment and the wave
    since: str | None  # None: a program's first wave
    rises: tuple[str, ...] = ()
    falls: tuple[str, ...] = ()
    highest: str | None = None  # a first wave's value above the others beyond the uncertainty
    estimated: int = 0  # a first wave's values with an estimate
    score_name: str = "NPS"

    def headline(self) -> str:
        if self.since is None:
            if self.highest and self.estimated > 1:
                return (f"{self.head}: {self.highest} has the highest {self.score_name}, "
                        "beyond the uncertainty")
            if self.highest:
                return f"{self.head}: {self.highest} is the one value with an estimate"
            if self.estimated:
                return (f"{self.head}: no value's {self.score_name} stands out beyond the "
                        "uncertainty")
            return f"{self.head}: every value is too small to estimate"
        if not (self.rises or self.falls):
            return f"{self.head}: no value moved beyond its uncertainty since {self.since}"
        moved = [f"{named(self.rises)} rose" if self.rises else "",
                 f"{named(self.falls)} fell" if self.falls else ""]
        return (f"{self.head}: {' and '.join(m for m in moved if m)} since {self.since}, "
                "beyond the uncertainty")


class DriversFact(Fact):
    """The attributes that stand above the others beyond their uncertainty."""

    score_name: str
    top: tuple[str, ...] = ()
    analysed: bool = True

    def headline(self) -> str:
        if not self.analysed:
            return "The program's results hold no driver analysis"
        if not self.top:
            return f"No attribute drives the {self.score_name} clearly more than the others"
        many = len(self.top) > 1
        return (f"{named(self.top)} {'drive' if many else 'drives'} the {self.score_name} most, "
                f"beyond {'their' if many else 'its'} uncertainty")


class ReferenceOverallFact(Fact):
    """The reference survey's measured score overall."""

    score_name: str
    score: Estimate
    respondents: int | float

    def headline(self) -> str:
        low, high = self.score.ci95
        return (f"The reference survey's {self.score_name} is {self.score.value:+.1f} (95% "
                f"interval {low:+.1f} to {high:+.1f}, {self.respondents:,.0f} respondents)")


class ReferenceSegmentFact(Fact):
    """Which values of one segment of the reference survey differ from the other
    respondents beyond the uncertainty (Holm-adjusted)."""

    segment: str
    score_name: str
    above: tuple[str, ...] = ()
    below: tuple[str, ...] = ()

    def headline(self) -> str:
        head = f"{self.segment} in the reference survey"
        if not (self.above or self.below):
            return (f"{head}: no value differs from the other respondents beyond the "
                    "uncertainty")
        parts = [f"{named(self.above)} above" if self.above else "",
                 f"{named(self.below)} below" if self.below else ""]
        return (f"{head}: {' and '.join(p for p in parts if p)} the other respondents' "
                f"{self.score_name}, beyond the uncertainty")


class ReferenceWavesFact(Fact):
    """The reference survey's score over its own waves: the flagged changes."""

    score_name: str
    first: str
    last: str
    rises: tuple[str, ...] = ()
    falls: tuple[str, ...] = ()

    def headline(self) -> str:
        head = f"The reference survey's {self.score_name} from {self.first} to {self.last}"
        if not (self.rises or self.falls):
            return f"{head}: no wave-on-wave change beyond the uncertainty"
        parts = [f"rose in {named(self.rises)}" if self.rises else "",
                 f"fell in {named(self.falls)}" if self.falls else ""]
        return f"{head}: {' and '.join(p for p in parts if p)}, beyond the uncertainty"
