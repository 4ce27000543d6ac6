"""The login throttle against DynamoDB (moto's server, provisioned from template.yaml): failures
are counted atomically per (username, client address), concurrent attempts cannot slip past the
count, and after the free failures each further attempt waits twice as long as the one before;
another address (the real user's) is never locked out by someone else's guessing."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from etikett import clock, settings
from etikett.domain.actors import Caller, Invocation
from etikett.domain.users import auth, users
from etikett.store import users as user_store
from etikett_engine.errors import EtikettError, ProblemCode
from support.client import PASSWORD
from support.stack import Stack, local_stack

ADMIN = Invocation(Caller(actor="human", subject="test-admin", roles=frozenset({"admin"})), "x")
LOGIN = Invocation(None, "login", "req-throttle")
ATTACKER = "203.0.113.7"
OWNER = "198.51.100.20"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with (
        pytest.MonkeyPatch.context() as monkeypatch,
        local_stack(tmp_path_factory.mktemp("throttle"), monkeypatch) as running,
    ):
        yield running


class FrozenClock:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.at = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
        monkeypatch.setattr(clock, "now", lambda: self.at)

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> FrozenClock:
    return FrozenClock(monkeypatch)


_counter = iter(range(10_000))


def _user() -> str:
    name = f"throttled-{next(_counter)}-{threading.get_ident() % 1000}"
    users.create(ADMIN, users.NewUser(username=name, password=PASSWORD, roles=["designer"]))
    return name


def _attempt(username: str, password: str, address: str) -> str:
    """The outcome of one login: ok, or the problem code."""
    try:
        auth.login(LOGIN, auth.Credentials(username=username, password=password), address)
    except EtikettError as error:
        return str(error.code)
    return "ok"


def _concurrently(count: int, attempt: Callable[[], str]) -> list[str]:
    outcomes: list[str] = []
    guard = threading.Lock()
    start = threading.Barrier(count)

    def run() -> None:
        start.wait()
        outcome = attempt()
        with guard:
            outcomes.append(outcome)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_concurrent_failures_are_counted_exactly(
    stack: Stack, frozen: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ETIKETT_LOGIN_MAX_FAILURES", "100")  # no backoff: count every attempt
    settings.reload()
    name = _user()
    outcomes = _concurrently(16, lambda: _attempt(name, "wrong guess", ATTACKER))
    assert outcomes == ["auth.invalid_credentials"] * 16
    stored = user_store.login_attempts(name, ATTACKER)
    assert stored is not None and stored.failures == 16


def test_concurrent_guesses_get_no_more_tries_than_allowed(
    stack: Stack, frozen: FrozenClock
) -> None:
    """Twenty guesses at once: five are checked, fifteen wait; none slips past the count."""
    name = _user()
    outcomes = _concurrently(20, lambda: _attempt(name, "wrong guess", ATTACKER))
    assert outcomes.count("auth.invalid_credentials") == 5
    assert outcomes.count("auth.login_throttled") == 15
    stored = user_store.login_attempts(name, ATTACKER)
    assert stored is not None and stored.failures == 5


def test_backoff_doubles_and_success_resets_it(stack: Stack, frozen: FrozenClock) -> None:
    name = _user()
    for _ in range(5):
        assert _attempt(name, "wrong guess", ATTACKER) == "auth.invalid_credentials"
    waits = []
    for _ in range(3):
        with pytest.raises(EtikettError) as throttled:
            auth.login(LOGIN, auth.Credentials(username=name, password=PASSWORD), ATTACKER)
        assert throttled.value.code is ProblemCode.AUTH_LOGIN_THROTTLED
        wait = throttled.value.params["retry_after"]
        assert throttled.value.headers["Retry-After"] == str(wait)
        waits.append(wait)
        frozen.advance(wait)
        assert _attempt(name, "wrong guess", ATTACKER) == "auth.invalid_credentials"
    assert waits == [30, 60, 120]
    frozen.advance(240)
    assert _attempt(name, PASSWORD, ATTACKER) == "ok"
    assert user_store.login_attempts(name, ATTACKER) is None
    assert _attempt(name, "wrong guess", ATTACKER) == "auth.invalid_credentials"  # free again


def test_the_wait_never_exceeds_the_cap(stack: Stack, frozen: FrozenClock) -> None:
    name = _user()
    waits = []
    for _ in range(30):
        if _attempt(name, "wrong guess", ATTACKER) == "auth.login_throttled":
            frozen.advance(900)
            continue
        stored = user_store.login_attempts(name, ATTACKER)
        assert stored is not None
        if stored.next_attempt_at is not None:
            waits.append((stored.next_attempt_at - frozen.at).total_seconds())
    assert waits[:6] == [30, 60, 120, 240, 480, 900]
    assert set(waits[6:]) == {900}


def test_someone_elses_guessing_does_not_lock_the_owner_out(
    stack: Stack, frozen: FrozenClock
) -> None:
    name = _user()
    for _ in range(8):
        _attempt(name, "wrong guess", ATTACKER)
    assert _attempt(name, PASSWORD, ATTACKER) == "auth.login_throttled"
    assert _attempt(name, PASSWORD, OWNER) == "ok"
    assert _attempt(name, PASSWORD, ATTACKER) == "auth.login_throttled"  # still waits


def test_an_ipv6_network_counts_as_one_address(stack: Stack, frozen: FrozenClock) -> None:
    """One host has a whole /64: rotating through it must not give fresh tries."""
    name = _user()
    for host in range(5):
        assert _attempt(name, "wrong guess", f"2001:db8:1:2::{host + 1}") == (
            "auth.invalid_credentials"
        )
    assert _attempt(name, PASSWORD, "2001:db8:1:2:ffff::9") == "auth.login_throttled"
    assert _attempt(name, PASSWORD, "2001:db8:1:3::1") == "ok"


def test_unknown_usernames_are_throttled_alike(stack: Stack, frozen: FrozenClock) -> None:
    for _ in range(5):
        assert _attempt("nobody-here", "guess", ATTACKER) == "auth.invalid_credentials"
    assert _attempt("nobody-here", "guess", ATTACKER) == "auth.login_throttled"
