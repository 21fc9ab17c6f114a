"""Failed-login throttling: per name+address with growing delays, per address, counted
before the password is checked."""

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


def test_delays_grow_after_the_limit_and_end_with_the_window():
    throttle, now = make()
    for t in (0.0, 1.0, 2.0):
        now[0] = t
        assert throttle.attempt("ann", "a")[0] == 0
    assert throttle.attempt("ann", "a")[0] == 10  # 10 s after the last failure (at 2)
    now[0] = 12.0
    wait, _ = throttle.attempt("ann", "a")  # allowed again, and wrong: the 4th failure
    assert wait == 0
    assert throttle.attempt("ann", "a")[0] == 20  # the delay doubles
    now[0] = 32.0
    throttle.attempt("ann", "a")
    assert throttle.attempt("ann", "a")[0] == 40
    # never longer than until enough failures leave the window (the 3rd newest, at 12)
    throttle2, now2 = make(window=100, delay=80)
    for t in (0.0, 1.0, 2.0):
        now2[0] = t
        throttle2.attempt("ann", "a")
    now2[0] = 82.0
    throttle2.attempt("ann", "a")  # 4th failure: the delay would be 160 s
    assert throttle2.attempt("ann", "a")[0] == 19  # the failure at 1 leaves at 101


def test_a_name_alone_cannot_lock_out_its_user():
    throttle, _ = make()
    for _ in range(10):
        throttle.attempt("ann", "attacker")
    assert throttle.attempt("ann", "attacker")[0] > 0
    wait, ticket = throttle.attempt("ANN", "office")  # the user, elsewhere
    assert wait == 0 and ticket is not None


def test_an_address_is_limited_across_names_at_a_higher_limit():
    throttle, _ = make(max_failures=3, factor=4)
    for n in range(12):  # a spray: one try per name
        assert throttle.attempt(f"user{n}", "nat")[0] == 0
    assert throttle.attempt("someone-else", "nat")[0] > 0
    assert throttle.attempt("someone-else", "elsewhere")[0] == 0


def test_success_takes_the_attempt_back_and_cancel_forgets_it():
    throttle, _ = make(max_failures=2)
    throttle.attempt("ann", "a")
    _, ticket = throttle.attempt("ann", "a")
    throttle.succeeded(ticket)  # the right password clears name+address
    assert throttle.retry_after("ann", "a") == 0
    _, t1 = throttle.attempt("bob", "b")
    throttle.cancel(t1)
    throttle.attempt("bob", "b")
    assert throttle.retry_after("bob", "b") == 0  # one failure left, limit 2
    off, _ = make(max_failures=0)
    for _ in range(10):
        assert off.attempt("ann", "a") == (0, None)
