"""Failed-login throttling: per name+address with growing delays, per address; only failed
attempts count, and checking an attempt writes nothing."""

from datetime import timedelta

from parakit.annotate.throttle import LoginThrottle


def make(max_failures: int = 3, window: int = 1000, delay: int = 10, factor: int = 4):
    now = [0.0]
    throttle = LoginThrottle(
        max_failures,
        timedelta(seconds=window),
        clock=lambda: now[0],
        base_delay=timedelta(seconds=delay),
        address_factor=factor,
    )
    return throttle, now


def wrong(throttle: LoginThrottle, name: str, address: str) -> int:
    """One attempt whose password is wrong; returns the wait the throttle answered."""
    wait, ticket = throttle.attempt(name, address)
    throttle.failed(ticket)
    return wait


def test_delays_grow_after_the_limit_and_end_with_the_window():
    throttle, now = make()
    for t in (0.0, 1.0, 2.0):
        now[0] = t
        assert wrong(throttle, "ann", "a") == 0
    assert throttle.attempt("ann", "a")[0] == 10  # 10 s after the last failure (at 2)
    now[0] = 12.0
    assert wrong(throttle, "ann", "a") == 0  # allowed again, and wrong: the 4th failure
    assert throttle.attempt("ann", "a")[0] == 20  # the delay doubles
    now[0] = 32.0
    wrong(throttle, "ann", "a")
    assert throttle.attempt("ann", "a")[0] == 40
    # never longer than until enough failures leave the window (the 3rd newest, at 12)
    throttle2, now2 = make(window=100, delay=80)
    for t in (0.0, 1.0, 2.0):
        now2[0] = t
        wrong(throttle2, "ann", "a")
    now2[0] = 82.0
    wrong(throttle2, "ann", "a")  # 4th failure: the delay would be 160 s
    assert throttle2.attempt("ann", "a")[0] == 19  # the failure at 1 leaves at 101


def test_a_name_alone_cannot_lock_out_its_user():
    throttle, _ = make()
    for _ in range(10):
        wrong(throttle, "ann", "attacker")
    assert throttle.attempt("ann", "attacker")[0] > 0
    wait, ticket = throttle.attempt("ANN", "office")  # the user, elsewhere
    assert wait == 0 and ticket is not None


def test_an_address_is_limited_across_names_at_a_higher_limit():
    throttle, _ = make(max_failures=3, factor=4)
    for n in range(12):  # a spray: one try per name
        assert wrong(throttle, f"user{n}", "nat") == 0
    assert throttle.attempt("someone-else", "nat")[0] > 0
    assert throttle.attempt("someone-else", "elsewhere")[0] == 0


def test_success_clears_the_pair_and_only_failures_count():
    throttle, _ = make(max_failures=2)
    wrong(throttle, "ann", "a")
    _, ticket = throttle.attempt("ann", "a")
    throttle.succeeded(ticket)  # the right password clears name+address
    assert throttle.retry_after("ann", "a") == 0
    # right passwords never count: a whole office behind one address logs in, however many
    # (the address limit here is 2 x 4 = 8)
    for n in range(50):
        wait, ticket = throttle.attempt(f"colleague{n}", "office")
        assert wait == 0
        throttle.succeeded(ticket)
    assert throttle.address_failures("office") == 0
    # attempts let through but not yet answered count nothing either
    for _ in range(20):
        assert throttle.attempt("bob", "b")[0] == 0
    assert throttle.retry_after("bob", "b") == 0
    off, _ = make(max_failures=0)
    for _ in range(10):
        assert off.attempt("ann", "a") == (0, None)


def test_checking_an_attempt_writes_nothing_to_the_store(store):
    """The check before the password is a read: no write transaction, so a login flood that
    is refused or waits takes no write lock from the annotators (it did on every attempt)."""
    from contextlib import contextmanager

    from parakit.annotate.throttle import StoreLedger

    throttle = LoginThrottle(5, timedelta(minutes=5), ledger=StoreLedger(store))
    _, ticket = throttle.attempt("ann", "10.0.0.1")
    throttle.failed(ticket)  # a wrong password is written

    @contextmanager
    def no_writes():
        raise AssertionError("the throttle's check took the write lock")
        yield

    store.writing = no_writes  # type: ignore[method-assign]
    for _ in range(5):
        assert throttle.attempt("ann", "10.0.0.1")[0] == 0
        assert throttle.attempt("eve", "10.0.0.9")[0] == 0
    assert throttle.address_failures("10.0.0.1") == 1
    assert throttle.known("ann", "10.0.0.1") is False
