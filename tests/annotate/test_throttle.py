"""Failed-login throttling: sliding windows per account name and per client address."""

from datetime import timedelta

from parakit.annotate.throttle import LoginThrottle


def make(max_failures: int = 3, seconds: int = 100):
    now = [0.0]
    return LoginThrottle(max_failures, timedelta(seconds=seconds), clock=lambda: now[0]), now


def test_window_slides_with_the_oldest_failure():
    throttle, now = make()
    for t in (0.0, 10.0, 20.0):
        now[0] = t
        throttle.failed("ann", "a")
    now[0] = 30.0
    assert throttle.retry_after("ann", "a") == 70  # the failure at 0 leaves at 100
    now[0] = 100.0
    assert throttle.retry_after("ann", "a") == 0  # two failures left in the window
    throttle.failed("ann", "a")
    assert throttle.retry_after("ann", "a") == 10  # the failure at 10 leaves at 110


def test_names_and_addresses_are_separate_keys():
    throttle, _ = make(max_failures=2)
    throttle.failed("Ann", "a")
    throttle.failed("bob", "b")
    assert throttle.retry_after("ann", "c") == 0  # one failure per key so far
    throttle.failed("ANN", "c")  # names compare case-insensitively
    assert throttle.retry_after("ann", None) == 100
    assert throttle.retry_after("carl", "a") == 0 and throttle.retry_after("carl", "c") == 0


def test_success_clears_the_name_and_zero_turns_it_off():
    throttle, _ = make(max_failures=2)
    throttle.failed("ann", "a")
    throttle.failed("ann", "b")
    throttle.succeeded("ann")
    assert throttle.retry_after("ann", "z") == 0
    off, _ = make(max_failures=0)
    for _ in range(10):
        off.failed("ann", "a")
    assert off.retry_after("ann", "a") == 0
