"""Deadlines and late policies of ``minillm grade --deadline … --late-policy …``.

A deadline is an ISO 8601 time with its UTC offset (``2026-12-15T23:59+08:00``; ``Z`` for
UTC); a time without an offset is refused, since the grader's clock zone is nobody's
deadline. A late policy is one kind and optional ``key=value`` settings::

    on-time                                  grade the last version at or before the deadline
    on-time:grace=15m                        ... or within 15 minutes after it
    penalty:per-day=10%,cap=50%,grace=15m    grade the newest version, minus 10% a day late

``per-day`` and ``cap`` are percents (``10%``) or fractions (``0.1``); ``cap`` defaults to
100%; ``grace`` is a duration in ``s``, ``m``, ``h`` or ``d`` (default 0). Settings without a
kind that include ``per-day`` mean ``penalty``. The cutoff is the deadline plus the grace:
a version at or before it is on time; one after it is ``ceil((time - cutoff) / 1 day)``
days late (one second late is one day), and its penalty is ``min(cap, per-day x days)``,
a fraction of the points it earned (``SubmissionResult.penalty``).

This module computes; it reads nothing. Where a submission's time comes from (a commit's
committer time, a roster's ``submitted_at``) is `grader.grade.supervisor`'s business.

    >>> p = parse_policy("penalty:per-day=10%,cap=25%,grace=15m")
    >>> due = parse_time("2026-12-15T23:59+08:00")
    >>> p.days_late(due + 15 * 60 + 1, due), p.fraction(p.days_late(due + 3 * 86400, due))
    (1, 0.25)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

__all__ = ["LatePolicy", "format_time", "parse_policy", "parse_time"]

DAY = 86400
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": DAY}


@dataclass(frozen=True)
class LatePolicy:
    """What a version after the deadline gets (see the module docstring).

    Attributes:
        kind: ``"on-time"`` (grade the last version on time) or ``"penalty"`` (grade the
            newest version, with a penalty).
        per_day: the fraction taken off per day late (penalty only).
        cap: the largest fraction taken off (penalty only).
        grace: seconds after the deadline that still count as on time.
        text: the policy as written.
    """

    kind: str = "on-time"
    per_day: float = 0.0
    cap: float = 1.0
    grace: int = 0
    text: str = "on-time"

    def cutoff(self, due: int) -> int:
        """The last second on time: the deadline plus the grace."""
        return due + self.grace

    def days_late(self, when: int, due: int) -> int:
        """Whole days after the cutoff, rounded up (0 when on time)."""
        return max(0, math.ceil((when - self.cutoff(due)) / DAY))

    def fraction(self, days: int) -> float:
        """The penalty of `days` days late, a fraction of the points earned."""
        if self.kind != "penalty" or days <= 0:
            return 0.0
        return round(min(self.cap, self.per_day * days), 6)


def _fraction(key: str, value: str, spec: str) -> float:
    try:
        x = float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        x = -1.0
    if not 0.0 <= x <= 1.0:
        raise ValueError(
            f"invalid {key} {value!r} in late policy {spec!r}: expected a percent such as "
            "10% or a fraction between 0 and 1"
        )
    return x


def _duration(value: str, spec: str) -> int:
    m = _DURATION.fullmatch(value.strip())
    if m is None:
        raise ValueError(
            f"invalid grace {value!r} in late policy {spec!r}: expected a duration such as "
            "90s, 15m, 2h or 1d"
        )
    return round(float(m[1]) * _UNITS[m[2]])


def parse_policy(spec: str) -> LatePolicy:
    """The `LatePolicy` written `spec` (see the module docstring).

    Raises:
        ValueError: an unknown kind or key, a missing ``per-day``, a bad value (quoted).
    """
    text = spec.strip()
    kind, sep, rest = text.partition(":")
    if not sep and "=" in kind:  # settings alone: "per-day=10%,cap=50%"
        kind, rest = "", kind
    settings: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or key.strip() in settings:
            raise ValueError(f"invalid late policy {spec!r}: {item!r} is not one key=value")
        settings[key.strip()] = value.strip()
    kind = kind.strip() or ("penalty" if "per-day" in settings else "on-time")
    allowed = {"on-time": {"grace"}, "penalty": {"per-day", "cap", "grace"}}
    if kind not in allowed:
        raise ValueError(f"invalid late policy {spec!r}: the kind must be on-time or penalty")
    unknown = sorted(set(settings) - allowed[kind])
    if unknown:
        keys = ", ".join(sorted(allowed[kind]))
        raise ValueError(f"invalid late policy {spec!r}: {kind} takes {keys}, not {unknown[0]}")
    if kind == "penalty" and "per-day" not in settings:
        raise ValueError(f"invalid late policy {spec!r}: penalty needs per-day=, e.g. 10%")
    return LatePolicy(
        kind,
        _fraction("per-day", settings["per-day"], spec) if "per-day" in settings else 0.0,
        _fraction("cap", settings["cap"], spec) if "cap" in settings else 1.0,
        _duration(settings["grace"], spec) if "grace" in settings else 0,
        text or "on-time",
    )


def parse_time(text: str) -> int:
    """Seconds since the epoch of an ISO 8601 time with its offset (``…+08:00``, ``…Z``).

    Raises:
        ValueError: not such a time, or no offset (the message quotes it).
    """
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"invalid time {text!r}: expected ISO 8601 with an offset, e.g. 2026-12-15T23:59+08:00"
        ) from None
    if when.tzinfo is None:
        raise ValueError(
            f"invalid time {text!r}: it has no UTC offset; write one, e.g. {text.strip()}+08:00"
        )
    return math.floor(when.timestamp())


def format_time(when: int, tz: str = "+0000") -> str:
    """`when` (seconds since the epoch) in ISO 8601 at the offset `tz` (``"+0800"``)."""
    m = re.fullmatch(r"([+-])(\d\d)(\d\d)", tz)
    minutes = (int(m[2]) * 60 + int(m[3])) * (-1 if m[1] == "-" else 1) if m else 0
    zone = timezone(timedelta(minutes=minutes)) if minutes else UTC
    return datetime.fromtimestamp(when, zone).isoformat()
