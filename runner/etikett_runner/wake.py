"""Waiting for a wake instead of polling: an idle Runner holds one MQTT connection (AWS IoT Core,
with its client certificate; local mode's broker) subscribed to its own wake topic, and looks at
its queue only when woken, and every few minutes in case a wake was lost. While work comes it
polls its queue as before: for `awake_seconds` after it told the service so (a heartbeat with
`awake`), which it does when woken and again while jobs keep coming. The service wakes it for
whatever it sends later (docs/scale.md: an idle Runner's calls a minute).

The Runner's promise is counted from the service's answer, so it polls at least as long as the
service believes it does. Without a connection to the broker (none offered, or lost) it polls all
the time, as a Runner without wakes does."""

from __future__ import annotations

import logging
import ssl
import threading
import time
from typing import Any

from etikett_runner.channel import AgentChannel
from etikett_runner.transport import Refused, ServerAway

log = logging.getLogger(__name__)

_RECONNECT_MAX_SECONDS = 60
# Why a waiting Runner looks at its queue (WakeListener.wait).
WOKEN, SUBSCRIBED, LOST = "woken", "subscribed", "lost"


class WakeListener:
    """One MQTT connection subscribed to the Runner's wake topic (paho's thread keeps it up)."""

    def __init__(self, channel: dict[str, Any], context: ssl.SSLContext) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.topic = str(channel["topic"])
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._connected = threading.Event()
        # A session of its own that the broker keeps while the Runner is away (QoS 1): a wake
        # published meanwhile is delivered when it is back.
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=str(channel["client_id"]),  # its id: IoT Core's policy allows no other
            clean_session=False,
            protocol=mqtt.MQTTv311,
        )
        client.tls_set_context(context)
        client.reconnect_delay_set(1, _RECONNECT_MAX_SECONDS)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_subscribe = self._on_subscribe
        self._client = client
        self._host, self._port = str(channel["host"]), int(channel["port"])
        self._keepalive = int(channel.get("keepalive_seconds") or 300)

    def start(self) -> None:
        self._client.connect_async(self._host, self._port, keepalive=self._keepalive)
        self._client.loop_start()

    def close(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()

    @property
    def connected(self) -> bool:
        """Subscribed, so a wake published now reaches this Runner."""
        return self._connected.is_set()

    def wait(self, timeout: float) -> str | None:
        """Why the Runner is to look at its queue: WOKEN (a wake came), SUBSCRIBED (again: a wake
        published meanwhile may be lost), LOST (the connection, or the Runner stops: poll), or
        None if nothing happened within `timeout` seconds."""
        if not self._event.wait(timeout):
            return None
        with self._lock:
            self._event.clear()
            reason, self._reason = self._reason, None
        return reason

    def forget_all_but_wakes(self) -> None:
        """The Runner polled since: only a wake that came meanwhile still counts."""
        with self._lock:
            if self._reason != WOKEN:
                self._reason = None
                self._event.clear()

    def interrupt(self) -> None:
        """End a wait early (the Runner stops)."""
        self._tell(LOST)

    def _tell(self, reason: str) -> None:
        with self._lock:
            if self._reason != WOKEN:  # a wake is never overwritten by anything less
                self._reason = reason
            self._event.set()

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if reason.is_failure:
            log.warning("wake channel: the broker refused the connection (%s)", reason)
            return
        client.subscribe(self.topic, qos=1)

    def _on_subscribe(self, client: Any, userdata: Any, mid: int, reasons: Any, props: Any) -> None:
        if any(reason.is_failure for reason in reasons):
            log.warning("wake channel: subscribing to %s was refused", self.topic)
            return
        log.info("wake channel: waiting for wakes on %s", self.topic)
        self._connected.set()
        self._tell(SUBSCRIBED)

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, p: Any) -> None:
        if self._connected.is_set():
            log.info("wake channel: connection lost (%s); polling until it is back", reason)
        self._connected.clear()
        self._tell(LOST)

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        self._tell(WOKEN)


class Wakefulness:
    """When the claim loop polls its queue and when it waits for a wake."""

    def __init__(self, channel: AgentChannel, stop: threading.Event) -> None:
        self.channel = channel
        self.stop = stop
        self.listener: WakeListener | None = None
        self._offered: dict[str, Any] | None = None
        self._awake_until = 0.0  # monotonic: the Runner polls until then (its promise)
        self._awake_seconds = 0.0
        self._woken = True  # a starting Runner looks at once, and says it is awake
        self._work_since_told = False
        self._asleep = False  # said so in the log

    def offer(self, wake: dict[str, Any] | None) -> None:
        """What the service offers with the queue's credentials (None: no wakes: poll)."""
        if wake == self._offered:
            return
        self._offered = wake
        if self.listener is not None:
            self.listener.close()
            self.listener = None
        if wake:
            self.listener = WakeListener(wake, self.channel.tls_context)
            self.listener.start()

    def close(self) -> None:
        if self.listener is not None:
            self.listener.interrupt()
            self.listener.close()

    def await_work(self) -> None:
        """Return when the queue is to be looked at: at once while awake (or without a broker),
        else when woken, when it is time to look anyway, or when the Runner stops."""
        listener = self.listener
        if listener is None or not listener.connected or self._woken:
            return
        if time.monotonic() < self._awake_until:
            return
        look = float((self._offered or {}).get("look_seconds") or 300)
        deadline = time.monotonic() + look
        if not self._asleep:
            log.info(
                "idle: waiting for a wake on %s (and looking every %.0f s)", listener.topic, look
            )
            listener.forget_all_but_wakes()
            self._asleep = True
        while not self.stop.is_set() and listener.connected:
            reason = listener.wait(min(5.0, max(0.0, deadline - time.monotonic())))
            if reason == WOKEN:
                log.info("woken: looking at the queue")
                self._woken = True
                self._asleep = False
                return
            if reason is not None or time.monotonic() >= deadline:
                return  # subscribed again, the connection lost or the Runner stops; or time

    def received(self, jobs: int) -> None:
        """After a look at the queue: say the Runner is awake when it was woken, or when work
        keeps coming and its promise is half over. Not without a connection to the broker: it
        polls all the time then, and a wake would not reach it."""
        if self.listener is None or not self.listener.connected:
            return
        self._work_since_told = self._work_since_told or jobs > 0
        left = self._awake_until - time.monotonic()
        if not (self._woken or (self._work_since_told and left < self._awake_seconds / 2)):
            return
        try:
            answer = self.channel.heartbeat({"awake": True})
        except (ServerAway, Refused) as exc:  # the service wakes it meanwhile, as it sees fit
            log.debug("wake channel: telling the service we poll failed: %s", exc)
            return
        seconds = float(answer.get("awake_seconds") or 0)
        self._awake_seconds = seconds
        self._awake_until = time.monotonic() + seconds
        self._woken = False
        self._work_since_told = False
        self._asleep = False
