"""T0 against a pinned clock: time phrases, harness words, phrases, stopwords."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone

import pytest

from sessionforest.search.query import (
    ANCHORS,
    TIME_PHRASES,
    parse_query,
    rules,
    split_words,
    time_window,
)

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)  # a Wednesday
MIDNIGHT = datetime(2026, 9, 30, tzinfo=UTC)
D = timedelta(days=1)
H = timedelta(hours=1)


def at(year: int, month: int, day: int, hour: int = 0) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


WINDOWS = [
    ("today", MIDNIGHT, NOW),
    ("earlier today", MIDNIGHT, NOW),
    ("yesterday", MIDNIGHT - D, MIDNIGHT),
    ("last night", MIDNIGHT - D, MIDNIGHT),
    ("the day before yesterday", MIDNIGHT - 2 * D, MIDNIGHT - D),
    ("1 day ago", NOW - 2 * D, NOW),
    ("3 days ago", NOW - 4 * D, NOW - 2 * D),
    ("three days ago", NOW - 4 * D, NOW - 2 * D),
    ("a couple of days ago", NOW - 3 * D, NOW - D),
    ("a few days ago", NOW - 6 * D, NOW - D),
    ("several days ago", NOW - 6 * D, NOW - D),
    # Calendar weeks start on Monday (NOW is a Wednesday): "last week" is the
    # whole week before this one, never a span reaching today.
    ("this week", at(2026, 9, 28), NOW),
    ("last week", at(2026, 9, 21), at(2026, 9, 28)),
    ("the past week", NOW - 7 * D, NOW),
    ("in the last week", NOW - 7 * D, NOW),
    ("past week", NOW - 7 * D, NOW),
    # Weeks and months ago: give or take half a unit, so never today.
    ("a week ago", NOW - 10.5 * D, NOW - 3.5 * D),
    ("1 week ago", NOW - 10.5 * D, NOW - 3.5 * D),
    ("2 weeks ago", NOW - 17.5 * D, NOW - 10.5 * D),
    ("a few weeks ago", NOW - 38.5 * D, NOW - 10.5 * D),
    ("3 hours ago", NOW - 4 * H, NOW - 2 * H),
    ("an hour ago", NOW - 2 * H, NOW),
    ("a few hours ago", NOW - 6 * H, NOW - H),
    ("in the last 6 hours", NOW - 6 * H, NOW),
    ("past 2 hours", NOW - 2 * H, NOW),
    ("the past hour", NOW - H, NOW),
    ("the past day", NOW - D, NOW),
    ("in the last 3 days", NOW - 3 * D, NOW),
    ("past 2 weeks", NOW - 14 * D, NOW),
    ("this month", at(2026, 9, 1), NOW),
    ("last month", at(2026, 8, 1), at(2026, 9, 1)),
    ("the past month", at(2026, 8, 30, 15), NOW),
    ("in the last month", at(2026, 8, 30, 15), NOW),
    ("2 months ago", at(2026, 7, 15, 15), at(2026, 8, 14, 15)),
    ("a month ago", at(2026, 8, 15, 15), at(2026, 9, 14, 15)),
    ("recently", NOW - 14 * D, NOW),
    ("lately", NOW - 14 * D, NOW),
    ("monday", at(2026, 9, 28), at(2026, 9, 29)),
    ("on tuesday", at(2026, 9, 29), at(2026, 9, 30)),
    ("last friday", at(2026, 9, 25), at(2026, 9, 26)),
    # Said on a Wednesday, "wednesday" is the one before: today would be "today".
    ("wednesday", at(2026, 9, 23), at(2026, 9, 24)),
    ("in march", at(2026, 3, 1), at(2026, 4, 1)),
    ("in september", at(2026, 9, 1), NOW),  # the current month, up to now
    ("in october", at(2025, 10, 1), at(2025, 11, 1)),  # not begun this year yet
    ("in dec", at(2025, 12, 1), at(2026, 1, 1)),
    ("during may", at(2026, 5, 1), at(2026, 6, 1)),
    ("last september", at(2025, 9, 1), at(2025, 10, 1)),
    ("in march 2024", at(2024, 3, 1), at(2024, 4, 1)),
    ("this year", at(2026, 1, 1), NOW),
    ("last year", at(2025, 1, 1), at(2026, 1, 1)),
    ("the past year", at(2025, 9, 30, 15), NOW),
    ("in 2024", at(2024, 1, 1), at(2025, 1, 1)),
    ("during 2024", at(2024, 1, 1), at(2025, 1, 1)),
    ("back in 2019", at(2019, 1, 1), at(2020, 1, 1)),
    ("2025-10-03", at(2025, 10, 3), at(2025, 10, 4)),
    ("on 2025-10-03", at(2025, 10, 3), at(2025, 10, 4)),
    ("since 2025-10-03", at(2025, 10, 3), NOW),
]


@pytest.mark.parametrize(("phrase", "start", "end"), WINDOWS)
def test_time_phrases_resolve_against_the_injected_clock(
    phrase: str, start: datetime, end: datetime
) -> None:
    parsed = parse_query(f"kanji deck {phrase}", NOW)
    assert parsed.window is not None, phrase
    assert (parsed.window.start, parsed.window.end) == (start, end)
    assert parsed.window.phrase == phrase
    assert parsed.words == ("kanji", "deck")  # the phrase's words are not search terms


def test_a_moved_clock_moves_the_window() -> None:
    later = NOW + 40 * D
    window, _ = time_window("yesterday", later)
    assert window is not None
    assert window.start == datetime(2026, 11, 8, tzinfo=UTC)


def test_calendar_days_follow_the_clocks_time_zone() -> None:
    tokyo = NOW.astimezone(timezone(timedelta(hours=9)))  # already Oct 1, 00:00 there
    window, _ = time_window("yesterday", tokyo)
    assert window is not None
    assert window.start == datetime(2026, 9, 30, tzinfo=tokyo.tzinfo)
    assert window.to_json()["start"] == "2026-09-29T15:00:00.000Z"


def test_a_naive_clock_is_utc() -> None:
    window, _ = time_window("today", NOW.replace(tzinfo=None))
    assert window is not None and window.start == MIDNIGHT


def test_the_first_time_phrase_wins_and_every_one_is_removed() -> None:
    parsed = parse_query("yesterday kanji in march", NOW)
    assert parsed.window is not None and parsed.window.phrase == "yesterday"
    assert parsed.words == ("kanji",)


@pytest.mark.parametrize(
    "query",
    [
        "may the build pass",
        "days of the week",
        "ago",
        "marching band",
        "weekday",
        # Numbers people search for stay words: a bare year, an impossible date,
        # a date inside a longer token, a version.
        "port 2024 refused",
        "2025-13-40 rollover",
        "backup-2025-10-03.tar",
        "release 2025-10-03T12:00 notes",
        "in 12345 steps",
    ],
)
def test_words_that_only_look_like_time_are_not_a_window(query: str) -> None:
    parsed = parse_query(query, NOW)
    assert parsed.window is None
    assert parsed.words  # the words stay searchable


def test_harness_words_known_to_the_store_become_a_filter() -> None:
    parsed = parse_query("Claude sidecar crash", NOW, ["claude", "codex", ""])
    assert parsed.harnesses == ("claude",)
    assert parsed.words == ("sidecar", "crash")
    assert parse_query("claude sidecar", NOW, []).words == ("claude", "sidecar")


def test_quoted_text_is_a_phrase_and_never_a_time_harness_or_stopword() -> None:
    parsed = parse_query('"the build is green" yesterday "codex" codex', NOW, ["codex"])
    assert parsed.phrases == ("the build is green", "codex")
    assert parsed.harnesses == ("codex",)
    assert parsed.words == ()
    assert parsed.window is not None


def test_an_unbalanced_quote_is_dropped() -> None:
    parsed = parse_query('refresh "token rotation', NOW)
    assert parsed.phrases == ()
    assert parsed.words == ("refresh", "token", "rotation")


def test_stopwords_go_and_are_reported() -> None:
    parsed = parse_query("What was THE chat about the kanji deck?", NOW)
    assert parsed.words == ("kanji", "deck")
    assert set(parsed.stopwords) == {"what", "was", "the", "chat", "about"}


def test_words_are_lower_cased_stripped_and_deduplicated() -> None:
    assert split_words("(Kanji), kanji! -x- set_focus ...") == ["kanji", "kanji", "x", "set_focus"]
    assert parse_query("Kanji kanji KANJI", NOW).words == ("kanji",)


def test_last_week_follows_the_clocks_time_zone_and_weekday() -> None:
    tokyo = timezone(timedelta(hours=9))
    monday_morning = datetime(2026, 9, 28, 1, 0, tzinfo=tokyo)  # still Sunday in UTC
    window, _ = time_window("last week", monday_morning)
    assert window is not None
    assert (window.start, window.end) == (
        datetime(2026, 9, 21, tzinfo=tokyo),
        datetime(2026, 9, 28, tzinfo=tokyo),
    )
    sunday = datetime(2026, 9, 27, 23, 0, tzinfo=UTC)
    window, _ = time_window("last week", sunday)
    assert window is not None
    assert (window.start, window.end) == (at(2026, 9, 14), at(2026, 9, 21))


def test_a_date_in_the_future_leaves_an_empty_window() -> None:
    window, _ = time_window("since 2027-01-01", NOW)
    assert window is not None and window.start > window.end


def _documented_examples() -> list[str]:
    rows = [line for line in TIME_PHRASES.splitlines() if line.startswith("  ")]
    return [ex.strip() for row in rows for ex in row[:51].split(",")]


@pytest.mark.parametrize("phrase", _documented_examples())
def test_every_documented_example_is_understood(phrase: str) -> None:
    parsed = parse_query(f"kanji {phrase}", NOW)
    assert parsed.window is not None and parsed.window.phrase == phrase
    assert parsed.words == ("kanji",)


def test_the_documented_examples_cover_every_rule() -> None:
    used = {
        i
        for example in _documented_examples()
        for i, (pattern, _) in enumerate(rules())
        if pattern.fullmatch(example)
    }
    assert used == set(range(len(rules())))


@pytest.mark.parametrize("phrase", _documented_examples())
def test_every_time_phrase_holds_an_anchor(phrase: str) -> None:
    # A query with no anchor is answered without the rules (never compiled then): each
    # rule's documented phrase holds one, and so do its variants with every month.
    assert any(anchor in phrase.lower() for anchor in ANCHORS)
    months = ("january", "february", "march", "april", "may", "june", "july", "august",
              "september", "october", "november", "december", "sept")  # fmt: skip
    for month in months:
        assert any(anchor in month for anchor in ANCHORS)


def test_a_query_without_an_anchor_compiles_no_rule() -> None:
    script = (
        "from datetime import datetime, UTC\n"
        "from sessionforest.search import query\n"
        "print(query.time_window('a pomodoro timer in rust', datetime.now(UTC))[0],"
        " query.rules.cache_info().currsize)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.split() == ["None", "0"], done.stderr


def test_written_dates_are_that_calendar_day() -> None:
    for phrase in ("July 24, 2023", "on july 24th 2023", "the 24th of July 2023", "24 jul 2023"):
        window, rest = time_window(f"sqlite lock {phrase}", NOW)
        assert window is not None, phrase
        assert (window.start, window.end) == (at(2023, 7, 24), at(2023, 7, 25)), phrase
        assert rest.split() == ["sqlite", "lock"]
    # Without a year: the latest such day that has begun.
    past, _ = time_window("on march 3rd", NOW)
    assert past is not None and past.start == at(NOW.year, 3, 3)
    ahead, _ = time_window("on december 30", NOW)
    assert ahead is not None and ahead.start == at(NOW.year - 1, 12, 30)
    # Not a day: no window, the words stay words.
    window, rest = time_window("february 30 2023", NOW)
    assert window is None and "february" in rest
    month, _ = time_window("in march 2024", NOW)
    assert month is not None and (month.start, month.end) == (at(2024, 3, 1), at(2024, 4, 1))


def test_a_week_of_a_month_is_seven_of_its_days() -> None:
    last, _ = time_window("the last week of August 2023", NOW)
    assert last is not None and (last.start, last.end) == (at(2023, 8, 25), at(2023, 9, 1))
    second, _ = time_window("during the second week of feb 2024", NOW)
    assert second is not None and (second.start, second.end) == (at(2024, 2, 8), at(2024, 2, 15))
    leap, _ = time_window("last week of february 2024", NOW)
    assert leap is not None and (leap.start, leap.end) == (at(2024, 2, 23), at(2024, 3, 1))


def test_a_range_of_written_dates_is_both_days_and_those_between() -> None:
    window, rest = time_window("where was john between August 11 and August 15 2023?", NOW)
    assert window is not None and window.phrase == "between august 11 and august 15 2023"
    assert (window.start, window.end) == (at(2023, 8, 11), at(2023, 8, 16))
    assert rest.split() == ["where", "was", "john", "?"]
    mixed, _ = time_window("from the 2nd of may to 9 may 2024", NOW)
    assert mixed is not None and (mixed.start, mixed.end) == (at(2024, 5, 2), at(2024, 5, 10))
    # Backwards is not a range: each date is then a day of its own (the first wins).
    backwards, _ = time_window("between may 9 2024 and may 2 2024", NOW)
    assert backwards is not None and (backwards.start, backwards.end) == (
        at(2024, 5, 9),
        at(2024, 5, 10),
    )
