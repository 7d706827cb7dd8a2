"""The store layer on its local backend: URLs, create-only publication, whole-object reads and
the deployment identity. The S3 backend's same guarantees against a real server are in
tests/storage/test_store_s3.py."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from shared.store import ObjectMissingError, StoreError, check_store, claim_store, open_store, parse_store_url


def test_store_urls_parse_to_their_backend() -> None:
    assert (parse_store_url("s3://zeroforge/run1/a").bucket, parse_store_url("s3://zeroforge/run1/a").prefix) == \
        ("zeroforge", "run1/a")
    assert parse_store_url("s3://zeroforge").prefix == ""
    assert str(parse_store_url("s3://zeroforge/run1/")) == "s3://zeroforge/run1"
    assert parse_store_url("/tmp/x").kind == "local" and parse_store_url("file:///tmp/x").path == Path("/tmp/x")


@pytest.mark.parametrize("url, says", [
    ("", "empty"), ("gs://bucket/x", "unknown scheme 'gs'"), ("s3://ab", "not a valid bucket name"),
    ("s3://Upper/x", "not a valid bucket name"), ("s3://key:secret@bucket/x", "holds credentials"),
    ("s3://bucket/a/../b", "prefix part '..'"), ("s3://bucket/x?versionId=1", "query"),
    ("file://host/x", "not a host"),
])
def test_bad_store_urls_say_what_is_wrong(url: str, says: str) -> None:
    with pytest.raises(StoreError, match=says.replace("?", r"\?")) as raised:
        parse_store_url(url)
    assert "secret" not in str(raised.value)


def test_a_key_is_published_once_and_read_whole(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "store"))
    source = tmp_path / "shard.h5"
    source.write_bytes(b"first" * 1000)
    assert store.put_file("games/g/shards/gen000001/job.h5", source) is True
    source.write_bytes(b"second")
    assert store.put_file("games/g/shards/gen000001/job.h5", source) is False      # never replaced
    assert store.put_bytes("games/g/shards/gen000001/job.h5", b"third") is False
    assert store.get_bytes("games/g/shards/gen000001/job.h5") == b"first" * 1000
    store.get_file("games/g/shards/gen000001/job.h5", tmp_path / "copy" / "job.h5")
    assert (tmp_path / "copy" / "job.h5").read_bytes() == b"first" * 1000
    assert store.exists("games/g/shards/gen000001/job.h5") and not store.exists("games/g/none")
    assert [o.key for o in store.list("games/g/shards")] == ["games/g/shards/gen000001/job.h5"]
    assert store.list("games/none") == []
    with pytest.raises(ObjectMissingError, match="no object games/g/none"):
        store.get_bytes("games/g/none")
    for bad in ("/abs", "a/../b", "", ".hidden", "a//b"):
        with pytest.raises(StoreError, match="invalid store key"):
            store.put_bytes(bad, b"x")


def test_concurrent_publishers_of_one_key_leave_one_whole_object(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "store"))
    payloads = [bytes([i]) * 200_000 for i in range(8)]
    created: list[bool] = []
    threads = [threading.Thread(target=lambda data=data: created.append(store.put_bytes("k/obj", data)))
               for data in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert created.count(True) == 1
    assert store.get_bytes("k/obj") in payloads
    assert [o.key for o in store.list("")] == ["k/obj"]       # no temp file is left or listed


def test_a_failed_put_leaves_no_object(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "store"))

    class Broken:
        def read(self, *_):
            raise OSError("disk gone")

    with pytest.raises(OSError):
        store._publish("k/obj", lambda handle: handle.write(Broken().read()))
    assert not store.exists("k/obj") and store.list("") == []


def test_a_store_belongs_to_one_deployment(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "store"))
    with pytest.raises(StoreError, match="holds no zeroforge deployment yet"):
        check_store(store, "0123456789ab")
    claim_store(store, "0123456789ab")
    claim_store(store, "0123456789ab")        # the same deployment again: fine
    check_store(store, "0123456789ab")
    with pytest.raises(StoreError, match="belongs to another zeroforge deployment .id 0123456789ab"):
        claim_store(store, "ba9876543210")
