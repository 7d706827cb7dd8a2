"""Store URLs: where a deployment's immutable objects (shards, model files) live.

    s3://BUCKET[/PREFIX]     an S3-compatible bucket; endpoint and keys from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
                             AWS_SECRET_ACCESS_KEY (and AWS_REGION), never from the URL, a command line or a log
    /path/to/dir, file:///p  a local directory (the data directory itself when no store is configured)
"""
from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from shared.store.errors import StoreError

#: S3 bucket names: 3-63 characters, lowercase letters, digits, dots and hyphens, starting and ending alphanumeric.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_PREFIX_PART = re.compile(r"^[A-Za-z0-9._-]+$")
SCHEMES_HELP = "use s3://BUCKET/PREFIX for an S3-compatible bucket or a local directory path"


@dataclass(frozen=True)
class StoreURL:
    """A parsed store URL: kind "s3" (bucket, prefix without slashes at either end, "" for none) or "local"
    (path, an absolute directory)."""

    kind: str
    bucket: str = ""
    prefix: str = ""
    path: Path | None = None

    def __str__(self) -> str:
        if self.kind == "s3":
            return f"s3://{self.bucket}/{self.prefix}".rstrip("/")
        return str(self.path)


def parse_store_url(text: str) -> StoreURL:
    """Parse a store URL (module docstring); StoreError naming the problem and the accepted forms otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise StoreError(f"store URL is empty; {SCHEMES_HELP}")
    text = text.strip()
    parts = urllib.parse.urlsplit(text)
    if parts.scheme == "s3":
        if parts.username or parts.password or "@" in parts.netloc:
            raise StoreError(f"store URL {_redacted(text)} holds credentials; give them in AWS_ACCESS_KEY_ID and "
                             "AWS_SECRET_ACCESS_KEY instead, never in the URL")
        if parts.query or parts.fragment:
            raise StoreError(f"store URL {text} has a query or fragment; write it as s3://BUCKET/PREFIX")
        bucket = parts.netloc
        if not _BUCKET.match(bucket) or ".." in bucket:
            raise StoreError(f"store URL {text}: {bucket!r} is not a valid bucket name (3-63 lowercase letters, "
                             "digits, dots or hyphens, starting and ending with a letter or digit)")
        segments = [s for s in parts.path.split("/") if s]
        bad = [s for s in segments if not _PREFIX_PART.match(s) or s in (".", "..")]
        if bad:
            raise StoreError(f"store URL {text}: prefix part {bad[0]!r} may hold only letters, digits, '.', '_' "
                             "and '-'")
        return StoreURL("s3", bucket=bucket, prefix="/".join(segments))
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise StoreError(f"store URL {text}: a file URL names a local directory (file:///path), not a host")
        return StoreURL("local", path=Path(urllib.parse.unquote(parts.path)).resolve())
    if parts.scheme and len(parts.scheme) > 1:   # one letter: a Windows drive, a path
        raise StoreError(f"store URL {text}: unknown scheme {parts.scheme!r}; {SCHEMES_HELP}")
    return StoreURL("local", path=Path(text).expanduser().resolve())


def _redacted(text: str) -> str:
    parts = urllib.parse.urlsplit(text)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urllib.parse.urlunsplit((parts.scheme, f"***@{host}", parts.path, "", ""))
