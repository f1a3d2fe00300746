"""format_datetime remembers the texts it wrote last: the memo must give exactly what the
formatting gives, for every datetime, equal instants in other zones and naive ones included."""

from __future__ import annotations

import datetime as dt

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envdsl.runtime import values

ZONES = st.sampled_from(
    [
        None,
        dt.timezone.utc,
        dt.timezone(dt.timedelta(hours=5, minutes=30)),
        dt.timezone(-dt.timedelta(hours=8)),
    ]
)
MOMENTS = st.datetimes(
    min_value=dt.datetime(1900, 1, 2), max_value=dt.datetime(9999, 12, 30), timezones=ZONES
)


# the machine is shared by the suite's workers: a slow first draw says nothing about the memo
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(MOMENTS, min_size=1, max_size=20))
def test_the_remembered_text_is_the_formatted_text(moments: list[dt.datetime]) -> None:
    for moment in moments + moments:  # the second pass reads the memo
        assert values.format_datetime(moment) == values._datetime_text(moment)


def test_an_instant_in_another_zone_has_its_utc_text_and_naive_times_their_own() -> None:
    utc = dt.datetime(2024, 5, 1, 9, 0, tzinfo=dt.timezone.utc)
    paris = utc.astimezone(dt.timezone(dt.timedelta(hours=2)))
    naive = dt.datetime(2024, 5, 1, 11, 0)
    assert values.format_datetime(utc) == "2024-05-01T09:00:00Z"
    assert values.format_datetime(paris) == "2024-05-01T09:00:00Z"
    assert values.format_datetime(naive) == "2024-05-01T11:00:00Z"


def test_the_memo_stays_bounded() -> None:
    start = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    for minute in range(values._DATETIME_TEXTS_KEPT + 10):
        values.format_datetime(start + dt.timedelta(minutes=minute))
    assert len(values._DATETIME_TEXTS) <= values._DATETIME_TEXTS_KEPT
