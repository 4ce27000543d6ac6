"""IAM for session credentials in local mode: a request signed with credentials from STS
AssumeRole (what Runners long-poll their own queue with) is authenticated and authorized by
moto's own IAM code, narrowed by the session policy, and refused once the credentials expired.

moto's IAM checks are off by default (`INITIAL_NO_AUTH_ACTION_COUNT`), and switching them on for
the whole server would make every call of the service need an IAM user; moto also ignores
session policies. `install()` turns the checks on for requests made with an assumed role's keys
only, so "a Runner's credentials reach its own queue and nothing else" holds, and is tested, in
local mode as on AWS. The service's own calls (plain keys) are not checked, as before.
"""

from __future__ import annotations

import datetime
import functools
import threading
from typing import Any

from moto.core.authorization import ActionAuthenticatorMixin
from moto.iam.access_control import IAMPolicy, IAMRequest, PermissionResult
from moto.sts.models import sts_backends
from moto.utilities.utils import get_partition

__all__ = ["SIGNED_BODY", "install"]

_installed = threading.Lock()
_MARK = "_etikett_sessions"
# The request body as the client signed it, when local AWS rewrote it (gateway.py: long polls).
SIGNED_BODY = "etikett.signed_body"


def _assumed_role(account_id: str, region: str, access_key_id: str) -> Any:
    for role in sts_backends[account_id][get_partition(region)].assumed_roles:
        if role.access_key_id == access_key_id:
            return role
    return None


def _credential(authorization: str) -> tuple[str, str]:
    """(access key id, region) of a SigV4 Authorization header."""
    scope = authorization.partition("Credential=")[2].partition(",")[0].split("/")
    return (scope[0], scope[2]) if len(scope) >= 3 else ("", "")


class _SessionRequest(IAMRequest):
    """moto's IAM request check, with the session policy as a second gate and an expiry."""

    def __init__(self, *args: Any, assumed: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._assumed = assumed

    def check_action_permitted(self, resource: str) -> None:
        now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
        if self._assumed.expiration <= now:
            self._raise_invalid_access_key("ExpiredToken")
        super().check_action_permitted(resource)  # the role's own policies
        if self._assumed.policy:
            verdict = IAMPolicy(self._assumed.policy).is_action_permitted(self._action, resource)
            if verdict != PermissionResult.PERMITTED:
                self._raise_access_denied()


def install() -> None:
    """Patch moto's request authorization (process-wide, idempotent)."""
    with _installed:
        original = ActionAuthenticatorMixin._authenticate_and_authorize_action
        if getattr(original, _MARK, False):
            return

        @functools.wraps(original)
        def authorize(self: Any, iam_request_cls: type, resource: str = "*") -> None:
            headers = self.headers
            token = headers.get("X-Amz-Security-Token")
            key_id, region = _credential(headers.get("Authorization", ""))
            assumed = _assumed_role(self.current_account, region, key_id) if token else None
            if assumed is None or iam_request_cls is not IAMRequest:
                original(self, iam_request_cls, resource)
                return
            environ = getattr(headers, "environ", {})  # werkzeug's headers view of the request
            body = environ.get(SIGNED_BODY, self.raw_body)
            path = self.raw_path
            query = self.uri.partition("?")[2]
            if query:
                path += "?" + query
            request = _SessionRequest(
                account_id=self.current_account,
                method=self.method,
                path=path,
                data=self.data,
                body=body,
                headers=headers,
                action=self._get_action(),
                assumed=assumed,
            )
            request.check_signature()
            request.check_action_permitted(resource)

        setattr(authorize, _MARK, True)
        ActionAuthenticatorMixin._authenticate_and_authorize_action = authorize  # type: ignore[method-assign]
