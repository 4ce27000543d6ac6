"""The process's AWS clients, all made from one botocore session.

A botocore session reads botocore's data files (the list of services, the service's model, its
endpoint rules) for the first client it makes: 60-130 ms of CPU. Another client of the same
session costs about 4 ms. Every table model and every boto3 client of the service comes from
`session()`, so a cold function's first requests pay for those files once, not once per table
and service they touch (bench/README.md). A client costs tens of milliseconds even so, far more
than the calls most requests make with it, so each is made once per process."""

from __future__ import annotations

import threading
from functools import cache
from typing import Any, cast

from etikett import API_VERSION
from etikett.settings import get_settings

# Held while a client is made from `session()`: botocore sessions are not safe to make clients
# from in two threads at once; the clients are.
MAKING = threading.Lock()


@cache
def session() -> Any:
    """The process's botocore session (credentials from the environment, as Lambda gives them)."""
    # Loaded here, not at the cold start of functions that never call AWS.
    import botocore
    import botocore.config
    import botocore.session

    made = botocore.session.get_session()
    # botocore builds its own User-Agent (SDK, platform, the features a request used) twice for
    # every request, ≈ 0.1 ms each time; a fixed one costs nothing and names the service in
    # CloudTrail. The session is named too, so that boto3's session over it leaves it as it is.
    made.user_agent_name = "etikett"
    agent = f"etikett/{API_VERSION.removeprefix('v')} Botocore/{botocore.__version__}"
    made.set_default_client_config(botocore.config.Config(user_agent=agent))
    return made


@cache
def _boto3() -> Any:
    import boto3

    return boto3.session.Session(botocore_session=session())


@cache
def client(service: str, endpoint_url: str | None = None) -> Any:
    """The process's client of `service` (at `endpoint_url`: a service that answers at an
    account's own endpoint, such as IoT Core's data plane)."""
    with MAKING:
        return _boto3().client(
            cast(Any, service), region_name=get_settings().region, endpoint_url=endpoint_url
        )


def forget() -> None:
    """Make clients and the session again at the next use (tests and local mode aim the
    service at another endpoint, with other credentials)."""
    client.cache_clear()
    _boto3.cache_clear()
    session.cache_clear()
