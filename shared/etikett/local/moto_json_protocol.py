"""A direct path to moto's DynamoDB, DynamoDB Streams and SQS handlers for JSON-protocol calls.

moto's server answers every request through a Flask app per service (an app and a request
context, URL routing, a CORS hook, a Flask response) around one call of the service's handler
(`convert_to_flask_response`): with werkzeug's handler, a quarter of local AWS's processor time
in a print. The calls local mode makes most, DynamoDB (`DynamoDB_20120810.*`), its streams and
SQS's JSON protocol (`AmazonSQS.*`), are POSTs to `/` that reach one handler per service
whatever they ask. `DirectJsonApp` calls that handler as moto's view does and gives the same
answer (status, headers with CORS's, body); it finds the handler with moto's own dispatch and
routing, once per service, region and target prefix. Everything else (S3, STS, KMS, IAM, the
query protocol, unsigned requests, browsers' requests with an `Origin`, other paths and
methods) goes through moto's app as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from botocore.exceptions import ClientError
from flask import Response
from moto.moto_api import recorder
from moto.moto_server.werkzeug_app import BackendRequest, DomainDispatcherApplication
from moto.settings import DISABLE_GLOBAL_CORS
from werkzeug.exceptions import HTTPException, NotFound
from werkzeug.wrappers import Response as BaseResponse

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

__all__ = ["DirectJsonApp"]

# The moto services whose handlers are called directly: their Flask apps route a POST to `/` to
# one handler and do nothing else with it.
_DIRECT_SERVICES = frozenset({"dynamodb", "dynamodbstreams", "sqs"})
# What flask-cors adds, with moto's options (every origin), to an answer of a request that names
# no origin; requests that do (browsers) go through moto's app.
_CORS_HEADER = ("Access-Control-Allow-Origin", "*")
_Handler = Callable[..., Any]


class DirectJsonApp:
    """moto's app (`DomainDispatcherApplication`) with JSON-protocol calls of DynamoDB, its
    streams and SQS answered by the service's handler directly."""

    # False answers everything through moto's app (tests compare the two paths).
    enabled: ClassVar[bool] = True

    def __init__(self, moto_app: DomainDispatcherApplication) -> None:
        self._moto_app = moto_app
        self._lock = threading.Lock()
        # (signing name, region, target prefix) -> the handler moto's routing finds, or None.
        self._handlers: dict[tuple[str, str, str], _Handler | None] = {}

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        handler = self._handler(environ) if self.enabled else None
        if handler is None:
            answer: Iterable[bytes] = self._moto_app(environ, start_response)
            return answer
        return _answer(handler, environ)(environ, start_response)

    def _handler(self, environ: WSGIEnvironment) -> _Handler | None:
        if (
            environ.get("REQUEST_METHOD") != "POST"
            or environ.get("PATH_INFO") != "/"
            or "HTTP_ORIGIN" in environ
            or "HTTP_ACCESS_CONTROL_REQUEST_PRIVATE_NETWORK" in environ  # flask-cors answers it
        ):
            return None
        target: str = environ.get("HTTP_X_AMZ_TARGET", "")
        if "." not in target:
            return None
        scope = _scope(environ.get("HTTP_AUTHORIZATION", ""))
        if scope is None:
            return None  # unsigned: moto guesses the service from the body and the path
        key = (*scope, target.partition(".")[0])
        try:
            return self._handlers[key]
        except KeyError:
            pass
        with self._lock:
            handler = self._handlers[key] = self._route(environ)
        return handler

    def _route(self, environ: WSGIEnvironment) -> _Handler | None:
        """The handler moto's dispatch and its app's routing give this request, if the app is
        one of `_DIRECT_SERVICES`' (the answer depends only on the key it is kept under)."""
        app = self._moto_app.get_application(dict(environ))
        if getattr(app, "service", None) not in _DIRECT_SERVICES:
            return None
        try:
            endpoint, _ = app.url_map.bind("localhost").match("/", method="POST")
        except NotFound:
            return None
        view = app.view_functions[endpoint]
        callback: _Handler | None = getattr(view, "callback", None)
        return callback


def _scope(authorization: str) -> tuple[str, str] | None:
    """The service and region of a SigV4 credential scope, parsed as moto's dispatch does (the
    service, the region and the target are all it routes these requests by)."""
    try:
        scope = authorization.split(",")[0].split()[1]
        _, _, region, service, _ = scope.split("/")
    except (IndexError, ValueError):
        return None
    return service.lower(), region


def _answer(handler: _Handler, environ: WSGIEnvironment) -> BaseResponse:
    """What moto's view (`convert_to_flask_response`) and Flask make of the handler's answer."""
    request = BackendRequest(environ)
    try:
        recorder._record_request(request)
        try:
            result = handler(request, request.raw_url, dict(request.headers))
        except ClientError as exc:
            result = 400, {}, exc.response["Error"]["Message"]
        except HTTPException as exc:
            # Flask answers with the exception's own response (moto's app has no handlers).
            return _with_cors(Response.force_type(exc.get_response(environ), environ))
        if len(result) == 3:
            status, headers, content = result
        else:
            status, headers, content = 200, {}, result
        return _with_cors(Response(response=content, status=status, headers=headers))
    finally:
        request.close()  # Flask's request context closes it at its end


def _with_cors(response: BaseResponse) -> BaseResponse:
    if not DISABLE_GLOBAL_CORS and _CORS_HEADER[0] not in response.headers:
        response.headers.add(*_CORS_HEADER)
    return response
