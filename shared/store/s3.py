"""The S3 backend (any S3-compatible service: AWS, R2, B2, Ceph, SeaweedFS), through obstore.

The bucket and prefix come from the store URL; the endpoint and keys only from the environment: AWS_ENDPOINT_URL,
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION (obstore reads them itself). Publication is a create-only
PUT (If-None-Match: *): the server refuses it when the key exists, and an interrupted upload creates no object.
Connection failures and 5xx answers are retried by obstore with exponential back-off for up to `outage_s`
seconds (a create-only PUT whose connection broke after it was sent, which obstore does not retry, by this module);
then StoreUnavailableError says so in one line. Errors never carry credentials.
"""
from __future__ import annotations

import hashlib
import os
import re
import time
from datetime import timedelta
from pathlib import Path

from shared.atomic import atomic_output
from shared.store.base import ObjectInfo, ObjectMissingError, check_key, check_prefix
from shared.store.errors import StoreError, StoreUnavailableError
from shared.store.url import StoreURL

ENDPOINT_ENV = "AWS_ENDPOINT_URL"
_S3_CODE = re.compile(r"<Code>([A-Za-z]+)</Code>")
_AUTH_CODES = {"SignatureDoesNotMatch", "InvalidAccessKeyId", "AccessDenied", "InvalidToken", "ExpiredToken"}


class S3ObjectStore:
    """Objects in bucket `url.bucket` under `url.prefix`; `outage_s`: how long a request is retried while the
    service does not answer."""

    def __init__(self, url: StoreURL, outage_s: float = 120.0) -> None:
        from obstore.store import S3Store

        if url.kind != "s3":
            raise StoreError(f"{url} is not an s3:// store URL")
        self.url = url
        self.endpoint = os.environ.get(ENDPOINT_ENV, "")
        self.outage_s = float(outage_s)
        options = {"connect_timeout": timedelta(seconds=5), "timeout": timedelta(seconds=300)}
        if self.endpoint.startswith("http://"):
            options["allow_http"] = True
        try:
            self._store = S3Store(url.bucket, prefix=url.prefix or None, client_options=options,
                                  retry_config={"max_retries": 1000, "retry_timeout": timedelta(seconds=self.outage_s),
                                                "backoff": {"init_backoff": timedelta(milliseconds=200),
                                                            "max_backoff": timedelta(seconds=10), "base": 2}})
        except Exception as exc:   # obstore's configuration errors: a bad AWS_* value
            raise StoreError(f"cannot configure the store {url}: {_first_line(exc)}; check the AWS_* environment "
                             "variables") from None

    def _where(self) -> str:
        return f"{self.url}" + (f" at {self.endpoint}" if self.endpoint else "")

    def _translate(self, exc: Exception, key: str) -> StoreError:
        """One clear StoreError for an obstore exception raised while working on `key`."""
        from obstore import exceptions as obx

        text = str(exc)
        code = _S3_CODE.search(text)
        code = code.group(1) if code else ""
        if code == "NoSuchBucket":
            return StoreError(f"the bucket {self.url.bucket} does not exist at {self.endpoint or 'AWS'}; create it "
                              "or fix the store URL")
        if isinstance(exc, (obx.PermissionDeniedError, obx.UnauthenticatedError)) or code in _AUTH_CODES:
            return StoreError(f"the store {self._where()} refused the credentials ({code or 'access denied'}); "
                              "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        if isinstance(exc, (FileNotFoundError, obx.NotFoundError)):
            return ObjectMissingError(f"no object {key} in the store {self.url}")
        if isinstance(exc, obx.GenericError) and ("error sending request" in text or "retries" in text
                                                  or "timed out" in text or "Connection refused" in text):
            return StoreUnavailableError(f"the store {self._where()} did not answer for {self.outage_s:.0f} s "
                                         f"({_reason(text)}); start it or check {ENDPOINT_ENV}, then rerun")
        return StoreError(f"store request for {key} failed: {code or _first_line(exc)}")

    def _put(self, key: str, data, mode: str = "create") -> bool:
        """One PUT of `data` (bytes or a Path) under `key`; True when it created (or replaced) the object, False when
        a create-only PUT found the key taken. obstore does not retry a create-only PUT that failed after it was
        sent (it is not idempotent), so a connection lost then is retried here, until `outage_s` after the first
        try; a refusal after such a retry is this call's own object when the stored one has these bytes."""
        import obstore
        from obstore import exceptions as obx

        key = check_key(key)
        deadline, pause, retried = time.monotonic() + self.outage_s, 0.2, False
        while True:
            try:
                obstore.put(self._store, key, data, mode=mode)
                return True
            except (obx.AlreadyExistsError, obx.PreconditionError):
                return retried and self._holds(key, data)
            except Exception as exc:
                error = self._translate(exc, key)
                if not isinstance(error, StoreUnavailableError) or time.monotonic() + pause > deadline:
                    raise error from None
            time.sleep(pause)
            pause, retried = min(pause * 2, 10.0), True

    def _holds(self, key: str, data) -> bool:
        """Whether the object `key` has exactly the bytes `data` (bytes or a Path): its size and its ETag, the MD5
        of the content for a single PUT (a store whose ETags are not MD5s answers False)."""
        import obstore

        content = Path(data).read_bytes() if isinstance(data, Path) else bytes(data)
        try:
            meta = obstore.head(self._store, key)
        except Exception as exc:
            raise self._translate(exc, key) from None
        etag = (meta.get("e_tag") or "").strip('"')
        return int(meta["size"]) == len(content) and etag == hashlib.md5(content, usedforsecurity=False).hexdigest()

    def put_file(self, key: str, source: Path) -> bool:
        """Publish the file `source` under `key` unless the key exists; True when this call created it."""
        return self._put(key, Path(source))

    def put_bytes(self, key: str, data: bytes, replace: bool = False) -> bool:
        """Publish `data` under `key` unless the key exists; True when this call created it. replace=True: one plain
        PUT that replaces the object whole (S3 readers see the old object or the new one); returns True."""
        return self._put(key, bytes(data), mode="overwrite" if replace else "create")

    def get_file(self, key: str, dest: Path) -> None:
        """Download the object `key` to `dest` (a temp file renamed into place); ObjectMissingError when none."""
        import obstore

        try:
            response = obstore.get(self._store, check_key(key))
            with atomic_output(dest) as out:
                for chunk in response.stream(min_chunk_size=1 << 20):
                    out.write(chunk)
        except Exception as exc:
            raise self._translate(exc, key) from None

    def get_bytes(self, key: str) -> bytes:
        """The bytes of object `key`; ObjectMissingError when there is none."""
        import obstore

        try:
            return bytes(obstore.get(self._store, check_key(key)).bytes())
        except Exception as exc:
            raise self._translate(exc, key) from None

    def exists(self, key: str) -> bool:
        """Whether an object `key` exists."""
        import obstore

        try:
            obstore.head(self._store, check_key(key))
        except Exception as exc:
            error = self._translate(exc, key)
            if isinstance(error, ObjectMissingError):
                return False
            raise error from None
        return True

    def list(self, prefix: str) -> list[ObjectInfo]:
        """The objects under the folder `prefix` ("" for all), sorted by key."""
        import obstore

        folder = check_prefix(prefix)
        try:
            found = [ObjectInfo(meta["path"], int(meta["size"]))
                     for batch in obstore.list(self._store, folder or None) for meta in batch]
        except Exception as exc:
            raise self._translate(exc, folder or "/") from None
        return sorted(found, key=lambda info: info.key)


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def _reason(text: str) -> str:
    for needle in ("Connection refused", "timed out", "dns error", "connection reset", "Service Unavailable"):
        if needle.lower() in text.lower():
            return needle.lower()
    return "no answer"
