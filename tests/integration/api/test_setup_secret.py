"""First-time setup on a deployed stack needs the stack's setup secret (the template parameter
`SetupSecret`, which has no default): whoever reaches a fresh deployment first must not become
its admin. Local mode passes none and needs none."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from etikett.domain.actors import Invocation
from etikett.domain.users import auth
from etikett.local.template import _CfnLoader, load
from etikett.store import users as user_store
from etikett_engine.errors import Conflict, Forbidden, ProblemCode
from support.client import PASSWORD
from support.stack import REPO, Stack, local_stack

SECRET = "s3tup-secret-from-the-stack-parameters"
SETUP = Invocation(None, "postAuthSetup", "req-setup")


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with (
        pytest.MonkeyPatch.context() as monkeypatch,
        local_stack(
            tmp_path_factory.mktemp("setup"), monkeypatch, parameters={"SetupSecret": SECRET}
        ) as running,
    ):
        yield running


def _setup(secret: str | None) -> auth.SignedIn:
    return auth.setup(
        SETUP, auth.SetupRequest(username="first-admin", password=PASSWORD, setup_secret=secret)
    )


def test_setup_needs_the_stacks_secret(deployed: Stack) -> None:
    state = auth.setup_state()
    assert state.setup_required and state.setup_secret_required
    for wrong in (None, "", "guess", SECRET[:-1], SECRET + "x"):
        with pytest.raises(Forbidden) as refused:
            _setup(wrong)
        assert refused.value.code is ProblemCode.AUTH_SETUP_SECRET_REQUIRED
        assert SECRET not in str(refused.value.detail) + str(refused.value.params)
    assert user_store.by_username("first-admin") is None
    signed_in = _setup(SECRET)
    assert signed_in.user.roles == ["admin"]
    with pytest.raises(Conflict) as done:
        _setup(SECRET)
    assert done.value.code is ProblemCode.AUTH_SETUP_DONE
    assert not auth.setup_state().setup_required


def test_the_template_demands_a_secret_and_gives_it_to_the_auth_function_only() -> None:
    template = load(REPO / "template.yaml")
    document = yaml.load((REPO / "template.yaml").read_text(), Loader=_CfnLoader)
    parameter = document["Parameters"]["SetupSecret"]
    assert parameter["NoEcho"] is True and "Default" not in parameter
    assert int(parameter["MinLength"]) >= 16
    holders = [
        f.logical_id for f in template.functions.values() if "ETIKETT_SETUP_SECRET" in f.environment
    ]
    assert holders == ["AuthFunction"]
    assert "ETIKETT_SETUP_SECRET" not in template.global_environment
