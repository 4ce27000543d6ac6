"""Users and tokens: roles, the last active admin, passwords stored only as Argon2 hashes,
deactivation ending sessions, service tokens stored only as hashes with expiry and revocation,
signing in and out, and first-time setup only while no user exists."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from typing import Any

import pytest

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.users import auth, tokens, users
from etikett.domain.users.auth import SetupRequest
from etikett.domain.users.users import NewUser
from etikett.ids import new_id
from etikett.store import tokens as token_store
from etikett.store import users as user_store
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import EtikettError, ProblemCode
from unit.domain import aws_calls
from unit.domain.callers import agent, human, operations, trail
from unit.domain.conftest import Aws

pytestmark = pytest.mark.usefixtures("aws")

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module", autouse=True)
def quick_hashing() -> Any:
    """Argon2id with small cost parameters: the service's (64 MiB, 3 passes) take about a second
    per hash on these machines, and what these tests check does not depend on the cost."""
    from argon2 import PasswordHasher

    from etikett.domain.users import passwords

    quick = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(passwords, "_hasher", lambda: quick)
        passwords._decoy_hash.cache_clear()
        yield
    passwords._decoy_hash.cache_clear()


def _refused(code: ProblemCode, change: Any) -> EtikettError:
    with pytest.raises(EtikettError) as refused:
        change()
    assert refused.value.code == code, refused.value.detail
    return refused.value


def _user(*roles: str, password: str = PASSWORD) -> users.User:
    name = f"user.{new_id('x')[-8:].lower()}"
    return users.create(
        human("createUser", "admin"), NewUser(username=name, password=password, roles=list(roles))
    )


def _login(user: users.User, password: str = PASSWORD) -> str:
    return auth.login(
        human("postLogin"), SetupRequest(username=user.username, password=password)
    ).token


def _as(token: str, operation: str) -> Invocation:
    return Invocation(tokens.authenticate(token), operation)


# --- users and roles --------------------------------------------------------------------------


def test_a_user_is_created_with_a_hashed_password_and_an_audit_entry(aws: Aws) -> None:
    created = _user("operator", "designer", "operator")
    assert created.roles == ["designer", "operator"] and created.active
    stored = user_store.get(created.id)
    assert stored is not None and stored.password_hash.startswith("$argon2id$")
    items = aws.client("dynamodb").scan(TableName=aws.ref("UsersTable"))["Items"]
    assert PASSWORD not in str(items)
    (entry,) = trail(created.id)
    assert entry.details == {"username": created.username, "roles": ["designer", "operator"]}
    assert PASSWORD not in str(entry)


def test_usernames_are_unique_regardless_of_case() -> None:
    first = _user()
    error = _refused(
        ProblemCode.USER_USERNAME_TAKEN,
        lambda: users.create(
            human("createUser"), NewUser(username=first.username.upper(), password=PASSWORD)
        ),
    )
    assert error.params["username"] == first.username.upper()
    assert user_store.by_username(first.username.upper()).id == first.id  # type: ignore[union-attr]


def test_weak_passwords_are_refused() -> None:
    for username, password in (("kurt", "short"), ("kurt.meier", "KURT.MEIER")):
        _refused(
            ProblemCode.AUTH_WEAK_PASSWORD,
            lambda u=username, p=password: users.create(
                human("createUser"), NewUser(username=u, password=p)
            ),
        )
    assert user_store.by_username("kurt") is None


def test_roles_are_granted_and_revoked_with_audit_entries() -> None:
    user = _user("designer")
    assert users.grant_role(human("postUserRole"), user.id, "approver").roles == [
        "approver",
        "designer",
    ]
    assert users.revoke_role(human("deleteUserRole"), user.id, "designer").roles == ["approver"]
    _refused(
        ProblemCode.USER_ROLE_NOT_HELD,
        lambda: users.revoke_role(human("deleteUserRole"), user.id, "designer"),
    )
    assert operations(user.id) == ["createUser", "postUserRole", "deleteUserRole"]
    assert [e.details for e in trail(user.id)[1:]] == [{"role": "approver"}, {"role": "designer"}]
    _refused(ProblemCode.USER_NOT_FOUND, lambda: users.grant_role(human("x"), "usr_x", "admin"))


def test_granting_a_role_held_already_changes_and_records_nothing() -> None:
    user = _user("designer")
    users.grant_role(human("postUserRole"), user.id, "designer")
    assert operations(user.id) == ["createUser"]


def test_a_session_has_the_user_s_roles_as_they_are_now() -> None:
    user = _user("designer", "operator")
    token = _login(user)
    assert tokens.authenticate(token).roles == {"designer", "operator"}
    users.revoke_role(human("deleteUserRole"), user.id, "operator")
    caller = tokens.authenticate(token)
    assert (caller.actor, caller.subject, caller.roles) == ("human", user.username, {"designer"})


def test_the_last_active_admin_is_neither_demoted_nor_deactivated(empty: Aws) -> None:
    admin = _user("admin")
    _refused(ProblemCode.USER_LAST_ADMIN, lambda: users.revoke_role(human("x"), admin.id, "admin"))
    _refused(ProblemCode.USER_LAST_ADMIN, lambda: users.deactivate(human("x"), admin.id))
    other = _user("admin")
    users.deactivate(human("postUserDeactivate"), other.id)  # an inactive admin does not count
    _refused(ProblemCode.USER_LAST_ADMIN, lambda: users.deactivate(human("x"), admin.id))
    users.reactivate(human("postUserReactivate"), other.id)
    assert not users.deactivate(human("postUserDeactivate"), admin.id).active


def test_two_admins_deactivating_each_other_at_once_leave_one_admin(
    empty: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each has seen the other as the remaining admin; the second to commit must not."""
    first, second = _user("admin"), _user("admin")
    update = user_store.update

    def second_goes_first(uow: Any, before: Any, after: Any) -> None:
        if before.id == first.id and users.get(second.id).active:
            users.deactivate(human("postUserDeactivate"), second.id)
        update(uow, before, after)

    monkeypatch.setattr(user_store, "update", second_goes_first)
    _refused(
        ProblemCode.USER_LAST_ADMIN,
        lambda: users.deactivate(human("postUserDeactivate"), first.id),
    )
    assert users.get(first.id).active and not users.get(second.id).active
    assert operations(first.id) == ["createUser"]


def test_an_admin_demoted_while_another_was_deactivated_keeps_one_admin(
    empty: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _user("admin"), _user("admin", "operator")
    update = user_store.update

    def second_goes_first(uow: Any, before: Any, after: Any) -> None:
        if before.id == first.id and "admin" in users.get(second.id).roles:
            users.revoke_role(human("deleteUserRole"), second.id, "admin")
        update(uow, before, after)

    monkeypatch.setattr(user_store, "update", second_goes_first)
    _refused(
        ProblemCode.USER_LAST_ADMIN,
        lambda: users.deactivate(human("postUserDeactivate"), first.id),
    )
    assert users.get(first.id).active and users.get(second.id).roles == ["operator"]


def test_deactivation_ends_sessions_and_refuses_sign_in_until_reactivated() -> None:
    user = _user("operator")
    token = _login(user)
    users.deactivate(human("postUserDeactivate"), user.id)
    _refused(ProblemCode.AUTH_INVALID_TOKEN, lambda: tokens.authenticate(token))
    assert list(token_store._TokenItem.by_owner.query(user.id)) == []
    _refused(ProblemCode.AUTH_USER_INACTIVE, lambda: _login(user))
    users.reactivate(human("postUserReactivate"), user.id)
    assert tokens.authenticate(_login(user)).user_id == user.id


def test_a_new_password_ends_other_sessions_but_the_one_that_set_it() -> None:
    user = _user("designer")
    here, elsewhere = _login(user), _login(user)
    _refused(
        ProblemCode.AUTH_WRONG_PASSWORD,
        lambda: auth.change_own_password(
            _as(here, "postOwnPassword"),
            auth.PasswordChange(current_password="wrong one", new_password="a new passphrase"),
        ),
    )
    auth.change_own_password(
        _as(here, "postOwnPassword"),
        auth.PasswordChange(current_password=PASSWORD, new_password="a new passphrase"),
    )
    assert tokens.authenticate(here).user_id == user.id
    _refused(ProblemCode.AUTH_INVALID_TOKEN, lambda: tokens.authenticate(elsewhere))
    _refused(ProblemCode.AUTH_INVALID_CREDENTIALS, lambda: _login(user))
    assert _login(user, "a new passphrase")


# --- signing in and out ---------------------------------------------------------------------


def test_a_wrong_password_or_unknown_user_is_refused_alike_and_audited() -> None:
    user = _user("operator")
    _refused(ProblemCode.AUTH_INVALID_CREDENTIALS, lambda: _login(user, "not the password"))
    refusal = trail(user.id)[-1]
    assert (refusal.outcome, refusal.code, refusal.subject) == (
        "refused",
        "auth.invalid_credentials",
        user.username,
    )
    ghost = f"ghost.{new_id('x')[-6:].lower()}"
    _refused(
        ProblemCode.AUTH_INVALID_CREDENTIALS,
        lambda: auth.login(human("postLogin"), SetupRequest(username=ghost, password=PASSWORD)),
    )


def test_a_session_is_stored_as_its_hash_and_logout_ends_exactly_it(aws: Aws) -> None:
    user = _user("operator")
    token = _login(user)
    assert token.startswith("etku_")
    assert token_store.get(hashlib.sha256(token.encode()).hexdigest()) is not None
    assert token not in str(aws.client("dynamodb").scan(TableName=aws.ref("TokensTable")))
    other = _login(user)
    auth.logout(_as(token, "postLogout"))
    _refused(ProblemCode.AUTH_INVALID_TOKEN, lambda: tokens.authenticate(token))
    assert tokens.authenticate(other).user_id == user.id
    assert operations(user.id)[-1] == "postLogout"


def _stored_session(token: str, user: users.User) -> None:
    """A session of `user` stored under `token` as it is given (not as sessions are minted)."""
    record = user_store.get(user.id)
    assert record is not None
    session, _ = tokens.new_session(record)
    with UnitOfWork() as uow:
        token_store.add(uow, session._replace(token_hash=tokens.hash_token(token)))


def test_a_session_names_its_user_and_signs_in_with_one_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user = _user("operator", "designer")
    token = _login(user)
    assert tokens.session_user_id(token) == user.id
    calls = aws_calls.recorded(monkeypatch)
    caller = tokens.authenticate(token)
    assert (caller.user_id, caller.roles) == (user.id, frozenset({"operator", "designer"}))
    assert calls == ["TransactGetItems"]  # the session and the user's current roles together


def test_a_session_minted_before_tokens_named_their_user_still_signs_in() -> None:
    user = _user("operator")
    token = "etku_" + secrets.token_urlsafe(32)
    assert tokens.session_user_id(token) is None
    _stored_session(token, user)
    assert tokens.authenticate(token).user_id == user.id


def test_the_stored_session_decides_whose_it_is_not_the_name_in_the_token() -> None:
    owner, named = _user("operator"), _user("admin")
    token = f"etku_{named.id}.{secrets.token_urlsafe(32)}"
    _stored_session(token, owner)
    caller = tokens.authenticate(token)
    assert (caller.user_id, caller.roles) == (owner.id, frozenset({"operator"}))
    forged = f"etku_{named.id}.{secrets.token_urlsafe(32)}"  # names a user, was never issued
    _refused(ProblemCode.AUTH_INVALID_TOKEN, lambda: tokens.authenticate(forged))


def test_a_session_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    token = _login(_user("operator"))
    now = clock.now()
    monkeypatch.setattr(clock, "now", lambda: now + dt.timedelta(hours=12, seconds=1))
    _refused(ProblemCode.AUTH_TOKEN_EXPIRED, lambda: tokens.authenticate(token))


# --- service-account tokens -----------------------------------------------------------------


def _issue(role: str = "operator", expires_at: dt.datetime | None = None) -> tokens.IssuedApiToken:
    return tokens.issue_api_token(
        human("createApiToken", "admin"),
        tokens.NewApiToken(subject="erp-bot", role=role, expires_at=expires_at),  # type: ignore[arg-type]
    )


def test_a_service_token_is_shown_once_stored_hashed_and_acts_as_a_service(aws: Aws) -> None:
    issued = _issue("designer")
    assert issued.token.startswith("etks_")
    assert issued.token not in str(aws.client("dynamodb").scan(TableName=aws.ref("TokensTable")))
    caller = tokens.authenticate(issued.token)
    assert (caller.actor, caller.subject, caller.roles, caller.token_id) == (
        "service",
        "erp-bot",
        {"designer"},
        issued.id,
    )
    listed = {t.id: t for t in tokens.list_api_tokens(200, None).items}
    assert "token" not in listed[issued.id].model_dump()
    (entry,) = trail(issued.id)
    assert entry.details == {"subject": "erp-bot", "role": "designer"}
    assert issued.token not in str(entry)
    _refused(ProblemCode.AUTH_NOT_A_SESSION, lambda: auth.logout(_as(issued.token, "postLogout")))


def test_a_revoked_token_stops_working_and_revoking_again_changes_nothing() -> None:
    issued = _issue()
    tokens.revoke_api_token(human("deleteApiToken", "admin"), issued.id)
    _refused(ProblemCode.AUTH_INVALID_TOKEN, lambda: tokens.authenticate(issued.token))
    tokens.revoke_api_token(human("deleteApiToken", "admin"), issued.id)
    assert operations(issued.id) == ["createApiToken", "deleteApiToken"]
    listed = {t.id: t for t in tokens.list_api_tokens(200, None).items}
    assert listed[issued.id].revoked_at is not None
    _refused(ProblemCode.TOKEN_NOT_FOUND, lambda: tokens.revoke_api_token(human("x"), "tok_x"))


def test_a_session_is_not_revoked_as_a_service_token() -> None:
    user = _user("operator")
    token = _login(user)
    session = token_store.get(hashlib.sha256(token.encode()).hexdigest())
    assert session is not None
    _refused(ProblemCode.TOKEN_NOT_FOUND, lambda: tokens.revoke_api_token(human("x"), session.id))
    assert tokens.authenticate(token).user_id == user.id


def test_a_token_expires_when_it_says(monkeypatch: pytest.MonkeyPatch) -> None:
    now = clock.now()
    issued = _issue(expires_at=now + dt.timedelta(hours=1))
    assert tokens.authenticate(issued.token).actor == "service"
    monkeypatch.setattr(clock, "now", lambda: now + dt.timedelta(hours=1))
    error = _refused(ProblemCode.AUTH_TOKEN_EXPIRED, lambda: tokens.authenticate(issued.token))
    assert error.status == 401
    _refused(ProblemCode.REQUEST_INVALID, lambda: _issue(expires_at=now - dt.timedelta(seconds=1)))


def test_foreign_and_unknown_tokens_are_refused() -> None:
    for token in ("Bearer abc", "ghp_0123456789", "etks_unknown", "etku_unknown"):
        _refused(ProblemCode.AUTH_INVALID_TOKEN, lambda t=token: tokens.authenticate(t))


# --- first-time setup -----------------------------------------------------------------------


def test_setup_makes_the_first_admin_once(empty: Aws) -> None:
    assert auth.setup_state().setup_required
    first = auth.setup(human("postSetup"), SetupRequest(username="root", password=PASSWORD))
    assert first.user.roles == ["admin"]
    assert tokens.authenticate(first.token).roles == {"admin"}
    assert not auth.setup_state().setup_required
    _refused(
        ProblemCode.AUTH_SETUP_DONE,
        lambda: auth.setup(human("postSetup"), SetupRequest(username="other", password=PASSWORD)),
    )
    assert user_store.by_username("other") is None


def test_of_two_setups_at_once_one_makes_the_admin_and_the_other_writes_nothing(
    empty: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    look = users.any_user_exists
    raced: list[bool] = []

    def look_then_race() -> bool:
        seen = look()
        if not raced:
            raced.append(seen)
            auth.setup(human("postSetup"), SetupRequest(username="first", password=PASSWORD))
        return seen

    monkeypatch.setattr(users, "any_user_exists", look_then_race)
    _refused(
        ProblemCode.AUTH_SETUP_DONE,
        lambda: auth.setup(human("postSetup"), SetupRequest(username="second", password=PASSWORD)),
    )
    assert [u.username for u in users.list_users(10, None).items] == ["first"]


def test_setup_may_not_reuse_a_name_left_by_a_previous_installation(empty: Aws) -> None:
    """Setup is refused by its marker even when the users it made are gone."""
    auth.setup(human("postSetup"), SetupRequest(username="root", password=PASSWORD))
    (root,) = users.list_users(10, None).items
    dynamodb = empty.client("dynamodb")
    dynamodb.delete_item(TableName=empty.ref("UsersTable"), Key={"pk": {"S": root.id}})
    _refused(
        ProblemCode.AUTH_SETUP_DONE,
        lambda: auth.setup(human("postSetup"), SetupRequest(username="again", password=PASSWORD)),
    )


def test_agents_act_only_through_their_roles(aws: Aws) -> None:
    """What an agent's caller carries: never a user's session, never more than its one role."""
    issued = _issue("approver")
    caller = tokens.authenticate(issued.token)
    assert caller.session_hash is None and caller.user_id is None
    assert not caller.holds_any(frozenset({"admin"}))
    assert agent("x", "admin").caller.holds_any(frozenset({"designer"}))  # admin may all
