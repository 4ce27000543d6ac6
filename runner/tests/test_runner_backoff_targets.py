"""Backoff delays and discovery target expansion."""

from __future__ import annotations

import pytest
from etikett_runner.backoff import Backoff
from etikett_runner.labels import count_zpl_labels
from etikett_runner.targets import Address, TargetError, expand


def test_backoff_grows_exponentially_up_to_the_cap() -> None:
    backoff = Backoff(base=1.0, cap=10.0, factor=2.0, rand=lambda: 1.0)
    assert [backoff.next() for _ in range(6)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_backoff_jitter_stays_between_the_floor_and_the_ceiling() -> None:
    draws = iter([0.0, 0.5, 0.25])
    backoff = Backoff(base=4.0, cap=100.0, floor=0.5, rand=lambda: next(draws))
    assert backoff.next() == 0.5  # full jitter drew 0: the floor
    assert backoff.next() == 4.0  # half of 8
    assert backoff.next() == 4.0  # a quarter of 16


def test_backoff_resets_after_a_success_and_survives_long_outages() -> None:
    backoff = Backoff(base=1.0, cap=60.0, rand=lambda: 1.0)
    for _ in range(10_000):  # days of failures: no overflow, still capped
        backoff.next()
    assert backoff.next() == 60.0
    backoff.reset()
    assert backoff.next() == 1.0


def test_backoff_refuses_nonsense() -> None:
    with pytest.raises(ValueError):
        Backoff(base=0)
    with pytest.raises(ValueError):
        Backoff(base=10, cap=1)


def test_targets_default_to_port_9100() -> None:
    assert expand(["127.0.0.1", "10.1.2.3:6101", "printer-7.local"]) == [
        Address("127.0.0.1", 9100),
        Address("10.1.2.3", 6101),
        Address("printer-7.local", 9100),
    ]


def test_a_slash_24_is_its_254_hosts_and_small_networks_all_addresses() -> None:
    hosts = expand(["192.168.5.0/24"])
    assert len(hosts) == 254
    assert hosts[0] == Address("192.168.5.1", 9100) and hosts[-1] == Address("192.168.5.254", 9100)
    assert expand(["10.0.0.8/30:6101"]) == [Address("10.0.0.9", 6101), Address("10.0.0.10", 6101)]
    assert expand(["10.0.0.8/32"]) == [Address("10.0.0.8", 9100)]
    assert expand(["10.0.0.8/31"]) == [Address("10.0.0.8", 9100), Address("10.0.0.9", 9100)]


def test_duplicates_are_probed_once_and_ipv6_works() -> None:
    assert expand(["127.0.0.1", "127.0.0.1:9100", "[::1]:9100", "::1"]) == [
        Address("127.0.0.1", 9100),
        Address("::1", 9100),
    ]
    assert str(Address("::1", 9100)) == "[::1]:9100"


@pytest.mark.parametrize(
    "target",
    [
        "8.8.8.8",  # the internet
        "10.0.0.0/23",  # larger than a /24
        "1.2.3.0/24",
        "10.0.0.1:0",
        "10.0.0.1:99999",
        "10.0.0.1:http",
        "not a host!",
        "10.0.0.0/33",
    ],
)
def test_bad_targets_are_refused(target: str) -> None:
    with pytest.raises(TargetError):
        expand([target])


def test_at_most_256_addresses() -> None:
    assert len(expand(["10.0.0.0/24", "10.0.1.1", "10.0.1.2"])) == 256
    with pytest.raises(TargetError):
        expand(["10.0.0.0/24", "10.0.1.0/29"])


def test_labels_are_counted_by_format_and_quantity() -> None:
    assert count_zpl_labels(b"^XA^FO0,0^GFA,1,1,1,FF^FS^XZ") == 1
    assert count_zpl_labels(b"^XA^FO0,0^FDa^FS^PQ3^XZ\n^XA^FO0,0^FDb^FS^PQ2,0,1,Y^XZ") == 5
    assert count_zpl_labels(b"^xa^fo0,0^fdx^fs^pq 4^xz") == 4
    assert count_zpl_labels(b"^XA^JUS^XZ~JA") == 0  # settings only: nothing printed
    assert count_zpl_labels(b"nothing here") == 0
