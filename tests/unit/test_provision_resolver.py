"""Template references resolve to local values."""

from __future__ import annotations

from etikett.local.provision import Resolver


def test_refs_getatts_and_subs_resolve() -> None:
    resolver = Resolver("eu-central-1", {"Build": "local"})
    resolver.refs["Queue"] = "http://127.0.0.1:1/123/q"
    resolver.attributes[("Queue", "Arn")] = "arn:aws:sqs:eu-central-1:123:q"
    value = {
        "a": {"Ref": "Build"},
        "b": {"Fn::GetAtt": ["Queue", "Arn"]},
        "c": {"Fn::Sub": "${AWS::Region}/${Queue}/${Queue.Arn}"},
        "d": [{"Fn::Sub": ["${X}-${Build}", {"X": {"Ref": "AWS::AccountId"}}]}],
        "e": {"Fn::Join": ["-", ["x", {"Ref": "Build"}]]},
        "f": 3,
    }
    assert resolver.resolve(value) == {
        "a": "local",
        "b": "arn:aws:sqs:eu-central-1:123:q",
        "c": "eu-central-1/http://127.0.0.1:1/123/q/arn:aws:sqs:eu-central-1:123:q",
        "d": ["123456789012-local"],
        "e": "x-local",
        "f": 3,
    }
