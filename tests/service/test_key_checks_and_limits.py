"""Unit checks of issue 40's attacks 6 and 8, without a server: a key with a known id and a wrong secret does the
same hash verification as one with an unknown id (counted calls, not time); the submit-time compile slots (over all
keys, per key) and a key's compiles per minute are bounded, each refusal carrying its Retry-After."""

from __future__ import annotations

import pytest

from app import auth
from app.db.engine import make_engine, make_sessionmaker
from app.limits import Limited, RateWindow, ServiceLimits
from settings import ServiceSettings

from .conftest import make_key


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_known_and_unknown_key_ids_do_the_same_hash_work(db_url, monkeypatch):
    key = make_key(db_url)
    key_id = key.split("_")[1]
    calls: list[str] = []
    real = auth.matches

    def counted(stored: str, given: str) -> bool:
        calls.append(stored)
        return real(stored, given)

    monkeypatch.setattr(auth, "matches", counted)
    engine = make_engine(db_url)
    try:
        with make_sessionmaker(engine)() as session:
            per_case = {}
            for case, given in (
                ("right", key),
                ("known id, wrong secret", f"cm_{key_id}_wrong"),
                ("unknown id", "cm_0123456789ab_wrong"),
                ("id not hex", "cm_zz_wrong"),
            ):
                calls.clear()
                try:
                    auth.verify_key(session, given)
                except auth.KeyRejected as exc:
                    assert case != "right" and exc.unknown
                per_case[case] = len(calls)
    finally:
        engine.dispose()
    assert per_case == {"right": 1, "known id, wrong secret": 1, "unknown id": 1, "id not hex": 1}, per_case


def test_submit_time_compiles_are_bounded_at_once_and_per_minute():
    limits = ServiceLimits(ServiceSettings(max_compiles_at_once=2, max_compiles_at_once_per_key=1, max_compiles_per_minute_per_key=3))
    with limits.compile("a"):
        with pytest.raises(Limited, match="MAX_COMPILES_AT_ONCE") as per_key, limits.compile("a"):
            pass
        assert per_key.value.retry_after >= 1
        # Two running in the process: a third key waits too.
        with limits.compile("b"), pytest.raises(Limited, match="limit is 2"), limits.compile("c"):
            pass
        assert limits.compiles.held() == 1
    assert limits.compiles.held() == 0
    with limits.compile("a"), pytest.raises(RuntimeError):  # a failing compile gives its slot back too
        raise RuntimeError("nvcc died")
    assert limits.compiles.held() == 0
    with limits.compile("a"):
        pass
    # "a" started 3 in this minute (the refused one did not count): a 4th is refused, "b" is not.
    with pytest.raises(Limited, match="MAX_COMPILES_PER_MINUTE_PER_KEY") as per_minute, limits.compile("a"):
        pass
    assert 1 <= per_minute.value.retry_after <= 60
    with limits.compile("b"):
        pass


def test_a_rate_window_counts_hits_not_looks_and_forgets_them_after_its_window():
    """The one per-minute counter behind submissions, compile starts and failed authentications (app/limits.py's
    RateWindow), on a FAKE clock: `wait_s` only looks, `hit` counts unless over the limit, a hit leaves after the window."""
    now = [1000.0]
    window = RateWindow(2, window_s=60.0, clock=lambda: now[0])
    assert [window.wait_s("k") for _ in range(5)] == [None] * 5 and window.count("k") == 0  # looking counts nothing
    assert window.hit("k") is None
    now[0] += 10
    assert window.hit("k") is None and window.count("k") == 2
    assert window.hit("k") == window.wait_s("k") == 50.0  # refused until the first hit is a window old; not counted
    assert window.count("k") == 2 and window.hit("other") is None
    now[0] += 50
    assert window.wait_s("k") is None and window.count("k") == 1 and window.hit("k") is None


def test_a_keys_submissions_per_minute_are_refused_past_the_limit_with_a_retry_after():
    limits = ServiceLimits(ServiceSettings(max_submits_per_minute_per_key=2))
    limits.submit("a")
    limits.submit("a")
    with pytest.raises(
        Limited, match=r"API key a submitted 2 jobs in the last minute, its limit \(CUDAMASTER_SERVICE__MAX_SUBMITS"
    ) as refused:
        limits.submit("a")
    assert 1 <= refused.value.retry_after <= 60 and limits.submits.count("a") == 2
    limits.submit("b")
