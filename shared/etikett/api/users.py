"""Routes of the Users group: user management by admins."""

from typing import Annotated

from fastapi import Response
from pydantic import ConfigDict, Field

from etikett.api.access import requires
from etikett.api.pagination import DEFAULT, Cursor, ItemList, Limit
from etikett.api.routing import Responses, router
from etikett.domain.actors import Invocation, Role
from etikett.domain.users import passwords, users
from etikett_engine.model import Model

routes = router(prefix="/api/v1/users", tags=["Users"])

_NOT_FOUND: Responses = {404: {"description": "Unknown user (`user.not_found`)"}}
Admin = Annotated[Invocation, requires("admin")]


class RoleGrant(Model):
    model_config = ConfigDict(extra="forbid")
    role: Role


class NewPassword(Model):
    model_config = ConfigDict(extra="forbid")
    password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)


@routes.get(
    "",
    operation_id="listUsers",
    response_model=ItemList[users.User],
    summary="List users by username",
)
def list_users(
    invocation: Admin, limit: Limit = DEFAULT, cursor: Cursor = None
) -> ItemList[users.User]:
    return ItemList[users.User].of(users.list_users(limit, cursor))


@routes.post(
    "",
    operation_id="createUser",
    response_model=users.User,
    status_code=201,
    summary="Create a user with roles",
    responses={409: {"description": "Username taken (`user.username_taken`)"}},
)
def create_user(body: users.NewUser, invocation: Admin) -> users.User:
    return users.create(invocation, body)


@routes.get(
    "/{userId}",
    operation_id="getUser",
    response_model=users.User,
    summary="Read one user",
    responses=_NOT_FOUND,
)
def get_user(userId: str, invocation: Admin) -> users.User:
    return users.get(userId)


@routes.post(
    "/{userId}/roles",
    operation_id="postUserRole",
    response_model=users.User,
    summary="Grant a role",
    responses=_NOT_FOUND,
)
def grant_role(userId: str, body: RoleGrant, invocation: Admin) -> users.User:
    return users.grant_role(invocation, userId, body.role)


@routes.delete(
    "/{userId}/roles/{role}",
    operation_id="deleteUserRole",
    response_model=users.User,
    summary="Revoke a role; the last active admin keeps theirs",
    responses={**_NOT_FOUND, 409: {"description": "Last admin (`user.last_admin`)"}},
)
def revoke_role(userId: str, role: str, invocation: Admin) -> users.User:
    return users.revoke_role(invocation, userId, role)


@routes.post(
    "/{userId}/password",
    operation_id="postUserPassword",
    status_code=204,
    summary="Set a user's password; ends the user's sessions",
    responses=_NOT_FOUND,
)
def set_password(userId: str, body: NewPassword, invocation: Admin) -> Response:
    users.set_password(invocation, userId, body.password)
    return Response(status_code=204)


@routes.post(
    "/{userId}/deactivate",
    operation_id="postUserDeactivate",
    response_model=users.User,
    summary="Withdraw access: the user can no longer sign in and their sessions end",
    responses={**_NOT_FOUND, 409: {"description": "Last admin (`user.last_admin`)"}},
)
def deactivate(userId: str, invocation: Admin) -> users.User:
    return users.deactivate(invocation, userId)


@routes.post(
    "/{userId}/reactivate",
    operation_id="postUserReactivate",
    response_model=users.User,
    summary="Restore access",
    responses=_NOT_FOUND,
)
def reactivate(userId: str, invocation: Admin) -> users.User:
    return users.reactivate(invocation, userId)
