"""T0: what a typed query asks for, before the index is consulted.

Quoted text becomes a phrase, time phrases become a window against an injected
`now`, `-word` excludes chats holding the word, harness words known to the
store become a filter, stopwords go; what is left are the words T1 ranks by
document frequency. Pure functions, no I/O.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    # TypedDicts for annotations only: wire.py builds ~30 of them at import.
    from ..wire import TimeWindowJson


# A general English list (Snowball's, plus a few words people use to talk
# about a chat rather than its subject). Never tuned to particular queries.
_STOPWORD_TEXT = """
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't
doing don't down during each few for from further had hadn't has hasn't have haven't having
he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm
i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor not
of off on once only or other ought our ours ourselves out over own same shan't she she'd
she'll she's should shouldn't so some such than that that's the their theirs them
themselves then there there's these they they'd they'll they're they've this those through
to too under until up very was wasn't we we'd we'll we're we've were weren't what what's
when when's where where's which while who who's whom why why's with won't would wouldn't
you you'd you'll you're you've your yours yourself yourselves chat chats conversation
conversations discussed talked remember
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

# Characters stripped from the ends of a typed word ("(foo," -> "foo").
_EDGE = string.punctuation + "“”‘’«»…—–·"
_QUOTED = re.compile(r'"([^"]*)"')
# Apostrophes people type: straight, typographic, modifier letter, prime, backtick.
_APOSTROPHES = str.maketrans({c: "'" for c in "’‘ʼ′`´"})
# An English possessive ("caroline's", "james'"): the index splits it into the
# name and a stray "s", which then misses the plain name.
_POSSESSIVE = re.compile(r"(?<=\w)'s?$")

_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a couple": 2, "couple of": 2,
}  # fmt: skip
_FEW = ("a few", "few", "several", "some")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")  # fmt: skip
_MONTH_ALIASES = {
    **{m: i for i, m in enumerate(_MONTHS, 1)},
    **{m[:3]: i for i, m in enumerate(_MONTHS, 1)},
    "sept": 9,
}


class TimeWindow(msgspec.Struct, frozen=True):
    """A half-open interval [start, end) a chat must have been active in."""

    phrase: str
    start: datetime
    end: datetime

    def to_json(self) -> TimeWindowJson:
        return {"phrase": self.phrase, "start": _iso(self.start), "end": _iso(self.end)}


class ParsedQuery(msgspec.Struct, frozen=True):
    text: str
    phrases: tuple[str, ...]  # quoted text, verbatim
    words: tuple[str, ...]  # lower-cased, de-duplicated, stopwords removed
    stopwords: tuple[str, ...]  # typed stopwords that were dropped
    window: TimeWindow | None
    harnesses: tuple[str, ...]  # harness words found in the query
    excluded: tuple[str, ...] = ()  # `-word`s: chats holding one are left out


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def _midnight(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _add_months(moment: datetime, months: int) -> datetime:
    index = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(index, 12)
    day = min(moment.day, _month_length(year, month + 1))
    return moment.replace(year=year, month=month + 1, day=day)


def _month_length(year: int, month: int) -> int:
    nxt = datetime(year + month // 12, month % 12 + 1, 1)
    return (nxt - timedelta(days=1)).day


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word]


_UNIT = r"(hour|day|week|month)s?"
_N = r"(\d{1,3}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + ")"
_FEWN = "(" + "|".join(_FEW) + ")"
_STEP = {"hour": timedelta(hours=1), "day": timedelta(days=1), "week": timedelta(days=7)}
_HALF_MONTH = timedelta(days=15)


def _ago(now: datetime, unit: str, low: int, high: int) -> tuple[datetime, datetime]:
    """Around `low`..`high` units before `now`: one unit either side for hours and
    days ("3 days ago" is [now-4d, now-2d], as the original), half a unit for
    weeks and months, so "a week ago" is [now-10.5d, now-3.5d] and never today."""
    if unit == "month":
        return _add_months(now, -high) - _HALF_MONTH, _add_months(now, -low) + _HALF_MONTH
    step = _STEP[unit]
    margin = 0.5 if unit == "week" else 1.0
    return now - (high + margin) * step, now - (low - margin) * step


def _span_back(now: datetime, unit: str, n: int) -> tuple[datetime, datetime]:
    if unit == "month":
        return _add_months(now, -n), now
    if unit == "year":
        return _add_months(now, -12 * n), now
    return now - n * _STEP[unit], now


def _first_of_month(now: datetime) -> datetime:
    return _midnight(now).replace(day=1)


def _monday(now: datetime) -> datetime:
    """00:00 on the Monday of `now`'s calendar week, in `now`'s time zone."""
    return _midnight(now) - timedelta(days=now.weekday())


def _weekday(now: datetime, name: str) -> tuple[datetime, datetime]:
    """The most recent such day before today."""
    back = (now.weekday() - _WEEKDAYS.index(name)) % 7 or 7
    start = _midnight(now) - timedelta(days=back)
    return start, start + timedelta(days=1)


def _month(
    now: datetime, month: int, year: int | None, strictly_past: bool
) -> tuple[datetime, datetime]:
    """The most recent such month that has begun (or the one in `year`)."""
    if year is None:
        year = (
            now.year
            if month < now.month or (month == now.month and not strictly_past)
            else now.year - 1
        )
    start = now.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)
    return start, _add_months(start, 1)


def _day(now: datetime, m: re.Match[str]) -> datetime:
    """00:00 of the ISO date in `m` (groups 2-4), in `now`'s time zone."""
    return now.replace(
        year=int(m[2]), month=int(m[3]), day=int(m[4]), hour=0, minute=0, second=0, microsecond=0
    )


def _date(m: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    day = _day(now, m)
    return (day, now) if m[1] == "since" else (day, day + _DAY)


def _year(m: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    start = _midnight(now).replace(year=int(m[1]), month=1, day=1)
    return start, start.replace(year=start.year + 1)


def _calendar_day(
    now: datetime, month: int, day: int, year: str | None
) -> tuple[datetime, datetime]:
    """That day (in `now`'s time zone); without a year, the latest such day that has begun."""
    start = _midnight(now).replace(year=int(year) if year else now.year, month=month, day=day)
    if year is None and start > now:
        start = start.replace(year=now.year - 1)
    return start, start + _DAY


_WEEK_OF_MONTH = {"first": 0, "second": 1, "third": 2, "fourth": 3}


def _week_of_month(m: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    """The first..fourth 7 days of a month, or its last 7 ("the last week of August")."""
    start, end = _month(now, _MONTH_ALIASES[m[2]], int(m[3]) if m[3] else None, False)
    if m[1] == "last":
        return end - 7 * _DAY, end
    first = start + 7 * _WEEK_OF_MONTH[m[1]] * _DAY
    return first, first + 7 * _DAY


Rule = tuple[re.Pattern[str], Callable[[re.Match[str], datetime], tuple[datetime, datetime]]]


def _rule(pattern: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w'-])" + pattern + r"(?![\w'-])")


_DAY = timedelta(days=1)
_ONE_UNIT = r"(hour|day|week|month|year)"
# Earlier rules win where phrases overlap ("in the last week" before "last week").
_MONTHS_ALT = "|".join(sorted(_MONTH_ALIASES, key=len, reverse=True))
_MONTH_NAME = "(" + _MONTHS_ALT + r")\.?"
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_MONTH_DAY = _MONTH_NAME + " " + _ORDINAL + r"(?:,? (\d{4}))?"
_DAY_MONTH = r"(?:the )?" + _ORDINAL + " (?:of )?" + _MONTH_NAME + r"(?:,? (\d{4}))?"
# A written date as one group (for ranges): "august 11", "11th of august, 2023".
_WRITTEN = (
    r"((?:(?:" + _MONTHS_ALT + r")\.? \d{1,2}(?:st|nd|rd|th)?"
    r"|(?:the )?\d{1,2}(?:st|nd|rd|th)? (?:of )?(?:" + _MONTHS_ALT + r")\.?)(?:,? \d{4})?)"
)


def _written(text: str, year: str | None, now: datetime) -> tuple[datetime, str | None]:
    """The day a written date names (its own year, else `year`, else the latest such)."""
    if m := re.fullmatch(_MONTH_DAY, text):
        month, day, own = _MONTH_ALIASES[m[1]], int(m[2]), m[3]
    elif m := re.fullmatch(_DAY_MONTH, text):
        month, day, own = _MONTH_ALIASES[m[2]], int(m[1]), m[3]
    else:
        raise ValueError(text)
    return _calendar_day(now, month, day, own or year)[0], own


def _between(m: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    """A range such as "between august 11 and august 15 2023": both days whole;
    a year on the second date alone dates the first too."""
    last, year = _written(m[2], None, now)
    first, _ = _written(m[1], year, now)
    if first > last:
        raise ValueError("a range that ends before it starts")
    return first, last + _DAY


# Every phrase a rule below matches holds one of these: a digit, a unit ("day" is in
# each weekday, "today", "yesterday"), "night", a part of the day, "recently" or
# "lately", or a month's first three letters (in each of its names). A query without
# any has no time phrase, and the rules need not even be compiled (~6 ms, a CLI call's
# start: issue 23); tests/search/test_search_query.py checks every documented example.
ANCHORS = (
    *"0123456789", "hour", "day", "week", "month", "year", "night", "morning", "afternoon",
    "evening", "recently", "lately", *(month[:3] for month in _MONTHS),
)  # fmt: skip


@functools.cache
def rules() -> tuple[Rule, ...]:
    """The rules, compiled on first use; earlier ones win where phrases overlap."""
    return (
        (_rule(r"(?:between|from) " + _WRITTEN + r" (?:and|to|until|through) " + _WRITTEN),
         _between),
        (_rule(r"(?:(?:in|during) )?(?:the )?(first|second|third|fourth|last) week of "
               + _MONTH_NAME + r"(?: (\d{4}))?"), _week_of_month),
        (_rule(r"(?:on )?" + _MONTH_DAY),
         lambda m, now: _calendar_day(now, _MONTH_ALIASES[m[1]], int(m[2]), m[3])),
        (_rule(r"(?:on )?" + _DAY_MONTH),
         lambda m, now: _calendar_day(now, _MONTH_ALIASES[m[2]], int(m[1]), m[3])),
        (_rule(r"(?:(on|since) )?(\d{4})-(\d{2})-(\d{2})"), _date),
        (_rule(r"(?:in|during|back in) (\d{4})"), _year),
        (_rule(r"(?:in the |within the )?(?:last|past) " + _N + " " + _UNIT),
         lambda m, now: _span_back(now, m[2], _count(m[1]))),
        (_rule(_N + " " + _UNIT + " ago"), lambda m, now: _ago(now, m[2], *[_count(m[1])] * 2)),
        (_rule(_FEWN + " " + _UNIT + " ago"), lambda m, now: _ago(now, m[2], 2, 5)),
        (_rule(r"the other day"), lambda m, now: _ago(now, "day", 2, 5)),
        (_rule(r"(?:the )?day before yesterday"),
         lambda m, now: (_midnight(now) - 2 * _DAY, _midnight(now) - _DAY)),
        (_rule(r"yesterday|last night"), lambda m, now: (_midnight(now) - _DAY, _midnight(now))),
        (_rule(r"(?:earlier )?today|this (?:morning|afternoon|evening)|tonight"),
         lambda m, now: (_midnight(now), now)),
        # Rolling spans: "the past week" is the last 7 days, whatever the weekday.
        (_rule(r"(?:(?:in|within|over|during) )?the (?:last|past) " + _ONE_UNIT
               + r"|past " + _ONE_UNIT),
         lambda m, now: _span_back(now, m[1] or m[2], 1)),
        # Calendar spans, in the clock's time zone: weeks start on Monday.
        (_rule(r"this week"), lambda m, now: (_monday(now), now)),
        (_rule(r"last week"), lambda m, now: (_monday(now) - 7 * _DAY, _monday(now))),
        (_rule(r"this month"), lambda m, now: (_midnight(now).replace(day=1), now)),
        (_rule(r"last month"),
         lambda m, now: (_add_months(_first_of_month(now), -1), _first_of_month(now))),
        (_rule(r"this year"), lambda m, now: (_midnight(now).replace(month=1, day=1), now)),
        (_rule(r"last year"),
         lambda m, now: (_midnight(now).replace(year=now.year - 1, month=1, day=1),
                         _midnight(now).replace(month=1, day=1))),
        (_rule(r"recently|lately"), lambda m, now: (now - 14 * _DAY, now)),
        (_rule(r"(?:on |last )?(" + "|".join(_WEEKDAYS) + ")"), lambda m, now: _weekday(now, m[1])),
        (_rule(r"(in|during|last|back in) (" + "|".join(_MONTH_ALIASES) + r")(?: (\d{4}))?"),
         lambda m, now: _month(now, _MONTH_ALIASES[m[2]], int(m[3]) if m[3] else None,
                               m[1] == "last")),
    )  # fmt: skip


# The grammar above in words, for `forest find --help` (tests check each line's example).
TIME_PHRASES = """\
Time phrases (against --now, default the store's clock, in its time zone; a
chat counts when it was active inside the window; weeks start on Monday):
  today, this morning, tonight                     00:00 today .. now
  yesterday, last night                            the previous calendar day
  the day before yesterday                         the calendar day before that
  monday, on friday, last friday                   the latest such day before today
  this week, this month, this year                 from its first day, 00:00 .. now
  last week                                        the previous calendar week
  last month, last year                            the previous calendar month, year
  the past week, in the last month, past year      rolling: now minus one unit .. now
  in the last 3 days, past 2 weeks, last 6 hours   rolling: now minus N units .. now
  3 hours ago, an hour ago, 2 days ago             N units ago, give or take one unit
  a week ago, 2 weeks ago, a month ago             N units ago, give or take half a unit
  a few days ago, several weeks ago                2 to 5 units ago (same margins)
  the other day                                    2 to 5 days ago, give or take a day
  recently, lately                                 the last 14 days
  in march, during may, last september             the latest such month that has begun
  in march 2024, back in june 2025                 that month
  in 2024, during 2024, back in 2019               that calendar year
  2025-10-03, on 2025-10-03                        that calendar day
  july 24 2023, on march 3rd, the 5th of may       that day (no year: the latest one)
  the last week of august 2023, first week of may  its last, or first..fourth, 7 days
  between may 2 and may 9 2024, from 3 jan to 5 jan  both days and those between
  since 2025-10-03                                 that day, 00:00 .. now
Units: hour, day, week, month (and plurals); N is 1-999, one..twelve, a, an or
a couple (of). A bare number such as 2024 stays a word. The first phrase sets
the window and every phrase is left out of the words searched; quote a phrase
to search for it as text.
"""


def time_window(text: str, now: datetime) -> tuple[TimeWindow | None, str]:
    """The window of the first time phrase in `text`, and `text` without any of them."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    lowered = " ".join(text.lower().split())
    found: list[tuple[int, int, TimeWindow]] = []
    if not any(anchor in lowered for anchor in ANCHORS):
        return None, lowered
    for pattern, build in rules():
        for m in pattern.finditer(lowered):
            if any(s < m.end() and m.start() < e for s, e, _ in found):
                continue  # inside a longer phrase found by an earlier rule
            try:
                start, end = build(m, now)
            except (KeyError, ValueError, OverflowError):
                continue  # "999 months ago" or a year out of range: not a window
            found.append((m.start(), m.end(), TimeWindow(m[0], start, min(end, now))))
    if not found:
        return None, lowered
    found.sort(key=lambda f: f[0])
    rest = lowered
    for s, e, _ in reversed(found):
        rest = rest[:s] + " " + rest[e:]
    return found[0][2], rest


def strip_possessive(word: str) -> str:
    """ "caroline's" -> "caroline"; stopword contractions ("it's", "he's") stay whole."""
    if word in STOPWORDS:
        return word
    return _POSSESSIVE.sub("", word)


def split_words(text: str) -> list[str]:
    """Typed words, lower-cased, apostrophes unified, possessive 's and
    surrounding punctuation stripped."""
    out = []
    for chunk in text.lower().translate(_APOSTROPHES).split():
        word = strip_possessive(chunk.strip(_EDGE)).strip(_EDGE)
        if word:
            out.append(word)
    return out


# `-word`: a single hyphen, then a letter and at least one more word character.
# "--force" (an option), "-v" (a flag) and "-10" (a number) stay plain words.
_EXCLUDED = re.compile(r"(?<!\S)-(?=[^\W\d_])(\S{2,})")


def split_exclusions(text: str) -> tuple[list[str], str]:
    """The `-word`s of `text` (as `split_words` makes them), and the text without them."""
    found: list[str] = []
    for m in _EXCLUDED.finditer(text):
        found += split_words(m[1])
    return found, _EXCLUDED.sub(" ", text)


def split_phrases(text: str) -> tuple[list[str], str]:
    """Quoted phrases, and the text outside them (an unmatched quote is dropped)."""
    phrases = [p.strip() for p in _QUOTED.findall(text) if p.strip()]
    return phrases, _QUOTED.sub(" ", text).replace('"', " ")


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def parse_query(text: str, now: datetime, harnesses: Iterable[str] = ()) -> ParsedQuery:
    """T0 against the clock `now` and the harness names the store knows."""
    phrases, rest = split_phrases(text)
    excluded, rest = split_exclusions(rest)
    window, rest = time_window(rest, now)
    known = {h.lower() for h in harnesses if h}
    words = split_words(rest)
    found = _dedupe(w for w in words if w in known)
    stop = _dedupe(w for w in words if w in STOPWORDS and w not in known)
    kept = _dedupe(w for w in words if w not in known and w not in STOPWORDS)
    return ParsedQuery(text, _dedupe(phrases), kept, stop, window, found, _dedupe(excluded))
