"""An S3 bucket (AWS or any S3-compatible server) as a store, through boto3.

Same interface as the local directory: ``put``/``get``/``exists``/``list`` of
bytes by key, every key under one prefix of one bucket (``s3://bucket/prefix``).
Objects carry their content type, and ``presign`` gives a time-limited GET URL
that a reviewer can open without credentials (round records hold one for the
heatmap).

Failures are ``StoreError`` naming the operation, the key and the cause, never
the credentials; a missing object is ``KeyNotFound``. They are classified
(``storage.errors``): a wrong key or secret, a refused permission, a missing
bucket and missing credentials are ``PermanentStoreError`` (the daemon exits
at start); a refused connection, a timeout, 5xx and throttling are
``TransientStoreError`` (the daemon spools and retries). Timeouts are short and
retries few, so an outage shows up in seconds and the caller (see
``storage.spool``) can spool the round locally instead of hanging.
"""

from __future__ import annotations

import email.utils
import time
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    HTTPClientError,
    NoCredentialsError,
    ParamValidationError,
    PartialCredentialsError,
)
from botocore.exceptions import ConnectionError as BotoConnectionError

from storage import keys
from storage.errors import ConditionFailed, KeyNotFound, PermanentStoreError, StoreError, TransientStoreError
from storage.s3_settings import DEFAULT_REGION, S3Settings

__all__ = ["DEFAULT_REGION", "MAX_PRESIGN_S", "S3Settings", "S3Store"]

MAX_PRESIGN_S = 7 * 24 * 3600  # the SigV4 limit

# error codes that mean "no such object" / "no such bucket" (a HEAD has no body: only the status)
_NOT_FOUND = frozenset({"NoSuchKey", "404", "NotFound"})
_NO_BUCKET = frozenset({"NoSuchBucket", "404", "NotFound"})


# error codes no retry heals, by cause (kind, what to change); a HEAD's 403 has no body, only the status
_AUTHENTICATION = frozenset(
    {
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "InvalidToken",
        "ExpiredToken",
        "TokenRefreshRequired",
        "AuthorizationHeaderMalformed",
        "InvalidSecurity",
    }
)
_AUTHORISATION = frozenset({"AccessDenied", "AllAccessDisabled", "AccountProblem", "403", "Forbidden"})
_HINTS = {
    "authentication": "check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) for this endpoint",
    "authorisation": "the key is valid but may not read and write this bucket and prefix; grant it or use another",
    "missing bucket": "create the bucket, or fix the name in the store URI",
    "no credentials": "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (environment or .env)",
    "invalid request": "the store URI or S3 settings are wrong for this endpoint",
}
# a conditional request that did not apply: 412, or 409 when a concurrent write to the key won (AWS)
_CONDITION_CODES = frozenset({"PreconditionFailed", "412", "ConditionalRequestConflict", "409"})
# transient: throttling and the server's own trouble
_TRANSIENT_CODES = frozenset(
    {
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "RequestTimeout",
        "RequestTimeTooSkewed",
        "ServiceUnavailable",
        "InternalError",
        "503",
        "500",
    }
)


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", "?"))


def _permanent_kind(exc: Exception, create_bucket: bool) -> str | None:
    """The cause of ``exc`` when no retry can heal it, else None (transient or unknown)."""
    if isinstance(exc, (NoCredentialsError, PartialCredentialsError)):
        return "no credentials"
    if isinstance(exc, ParamValidationError):
        return "invalid request"
    if not isinstance(exc, ClientError):
        return None
    code = _code(exc)
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
    if code in _AUTHENTICATION:
        return "authentication"
    if code in _AUTHORISATION or (status == 403 and code not in _TRANSIENT_CODES):
        return "authorisation"
    if code == "NoSuchBucket" and not create_bucket:
        return "missing bucket"
    if code in ("InvalidBucketName", "InvalidArgument", "InvalidURI"):
        return "invalid request"
    return None


def _transient(exc: Exception) -> bool:
    if isinstance(exc, (BotoConnectionError, HTTPClientError)):  # refused, reset, timeouts
        return True
    if isinstance(exc, ClientError):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        return _code(exc) in _TRANSIENT_CODES or status >= 500 or status in (408, 429)
    return False


class S3Store:
    """Objects under ``prefix`` in ``bucket``; a store key ``k`` is the object ``prefix/k``.

    With ``create_bucket`` a missing bucket is created on the first write that
    finds it missing (not at construction: S3 may be down when the daemon starts).
    Close the store (or use it as a context manager) to release connections.
    """

    def __init__(
        self, bucket: str, prefix: str = "", *, settings: S3Settings | None = None, create_bucket: bool = False
    ) -> None:
        if not bucket or "/" in bucket:
            raise ValueError(f"invalid S3 bucket name {bucket!r}")
        prefix = prefix.strip("/")
        if prefix:
            keys.check(prefix)
        self.bucket = bucket
        self.prefix = prefix
        # no settings: boto3's own chain (its variables, profile, instance role); the validator passes its [s3] section
        self.settings = settings if settings is not None else S3Settings()
        self.create_bucket = create_bucket
        s = self.settings
        config = Config(
            s3={"addressing_style": "path"},  # S3-compatible servers rarely resolve bucket subdomains
            signature_version="s3v4",
            connect_timeout=s.connect_timeout_s,
            read_timeout=s.read_timeout_s,
            retries={"total_max_attempts": s.max_attempts, "mode": "standard"},
            # the endpoint is ours to choose (settings), not AWS_ENDPOINT_URL* or ~/.aws/config behind our back
            ignore_configured_endpoint_urls=True,
        )
        session = boto3.session.Session(
            aws_access_key_id=s.access_key_id,
            aws_secret_access_key=s.secret_access_key,
            aws_session_token=s.session_token,
            region_name=s.region,
        )
        self._client = session.client("s3", endpoint_url=s.endpoint_url, config=config)

    def __repr__(self) -> str:
        where = f" at {self.settings.endpoint_url}" if self.settings.endpoint_url else ""
        return f"S3Store('s3://{self.bucket}/{self.prefix}'{where})"

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> S3Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def object_key(self, key: str) -> str:
        """The S3 object key of store key ``key`` (the prefix joined on)."""
        keys.check(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def _error(self, op: str, key: str | None, exc: Exception) -> StoreError:
        """A ``StoreError`` (``KeyNotFound`` for a missing object) naming ``op``, ``key`` and the cause."""
        if key is None:
            subject = f"bucket s3://{self.bucket}"
        else:
            target = f"{self.prefix}/{key}" if self.prefix else key
            subject = f"{key!r} (s3://{self.bucket}/{target})"
        if isinstance(exc, ClientError):
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            message = exc.response.get("Error", {}).get("Message") or "no message"
            cause = f"{_code(exc)} (HTTP {status}): {message}"
        elif isinstance(exc, NoCredentialsError):
            cause = "no credentials"
        else:
            cause = f"{type(exc).__name__}: {exc}"
        where = f" at {self.settings.endpoint_url}" if self.settings.endpoint_url else ""
        msg = f"S3 {op} of {subject}{where} failed: {cause}"
        for secret in self.settings.secrets():  # a server may echo the key id back; never pass it on
            msg = msg.replace(secret, "***")
        missing = (
            key is not None
            and isinstance(exc, ClientError)
            and (_code(exc) in _NOT_FOUND or (self.create_bucket and _code(exc) in _NO_BUCKET))
        )
        # with create_bucket, a bucket not made yet holds nothing: a read finds no object (the first
        # write creates it), rather than an error a caller would take for an outage
        if missing:
            return KeyNotFound(msg)
        kind = _permanent_kind(exc, self.create_bucket)
        if kind is not None:
            return PermanentStoreError(msg, kind=kind, hint=_HINTS[kind])
        return TransientStoreError(msg) if _transient(exc) else StoreError(msg)

    def _call(self, op: str, key: str | None, method: str, **params: Any) -> Any:
        try:
            return getattr(self._client, method)(Bucket=self.bucket, **params)
        except (BotoCoreError, ClientError) as exc:
            raise self._error(op, key, exc) from exc

    def ensure_bucket(self) -> None:
        """Create the bucket unless it exists."""
        try:
            self._client.head_bucket(Bucket=self.bucket)
            return
        except ClientError as exc:
            if _code(exc) not in _NO_BUCKET:
                raise self._error("HEAD", None, exc) from exc
        except BotoCoreError as exc:
            raise self._error("HEAD", None, exc) from exc
        params: dict[str, Any] = {}
        if self.settings.region != DEFAULT_REGION:  # AWS refuses an explicit us-east-1
            params["CreateBucketConfiguration"] = {"LocationConstraint": self.settings.region}
        try:
            self._client.create_bucket(Bucket=self.bucket, **params)
        except ClientError as exc:
            if _code(exc) != "BucketAlreadyOwnedByYou":  # BucketAlreadyExists: someone else's
                raise self._error("CREATE", None, exc) from exc
        except BotoCoreError as exc:
            raise self._error("CREATE", None, exc) from exc

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        """Write ``data`` under ``key`` (an S3 PUT is atomic: readers see old or new, never a mix)."""
        params = {"Key": self.object_key(key), "Body": bytes(data), "ContentType": content_type}
        try:
            self._client.put_object(Bucket=self.bucket, **params)
        except ClientError as exc:
            if not (self.create_bucket and _code(exc) == "NoSuchBucket"):
                raise self._error("PUT", key, exc) from exc
            self.ensure_bucket()
            self._call("PUT", key, "put_object", **params)
        except BotoCoreError as exc:
            raise self._error("PUT", key, exc) from exc

    # ---- conditional requests (storage.lease): If-None-Match / If-Match on PUT, If-Match on DELETE ----
    def _conditional_error(self, op: str, key: str, exc: Exception) -> StoreError:
        """``ConditionFailed`` when the condition did not hold (412, a 409 race, If-Match on no object), else
        the usual classified error."""
        if isinstance(exc, ClientError):
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if _code(exc) in _CONDITION_CODES or _code(exc) == "NoSuchKey" or status in (409, 412):
                return ConditionFailed(f"S3 conditional {op} of {key!r} did not apply: {_code(exc)} (HTTP {status})")
        return self._error(op, key, exc)

    def _conditional(self, op: str, key: str, method: str, **params: Any) -> Any:
        try:
            return getattr(self._client, method)(Bucket=self.bucket, **params)
        except (BotoCoreError, ClientError) as exc:
            raise self._conditional_error(op, key, exc) from exc

    def put_new(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> str:
        """Create ``key`` only if it does not exist (If-None-Match: *); its ETag. ``ConditionFailed`` if it does."""
        params = {"Key": self.object_key(key), "Body": bytes(data), "ContentType": content_type, "IfNoneMatch": "*"}
        try:
            etag: str = self._client.put_object(Bucket=self.bucket, **params)["ETag"]
            return etag
        except ClientError as exc:
            if not (self.create_bucket and _code(exc) == "NoSuchBucket"):
                raise self._conditional_error("PUT", key, exc) from exc
        except BotoCoreError as exc:
            raise self._error("PUT", key, exc) from exc
        self.ensure_bucket()
        etag = self._conditional("PUT", key, "put_object", **params)["ETag"]
        return etag

    def replace(self, key: str, data: bytes, etag: str, content_type: str = "application/octet-stream") -> str:
        """Overwrite ``key`` only while its ETag is ``etag`` (If-Match); the new ETag. ``ConditionFailed`` if not."""
        new: str = self._conditional(
            "PUT", key, "put_object", Key=self.object_key(key), Body=bytes(data), ContentType=content_type, IfMatch=etag
        )["ETag"]
        return new

    def delete_if(self, key: str, etag: str) -> None:
        """Delete ``key`` only while its ETag is ``etag`` (If-Match). ``ConditionFailed`` if it changed or is gone."""
        self._conditional("DELETE", key, "delete_object", Key=self.object_key(key), IfMatch=etag)

    def get_versioned(self, key: str) -> tuple[bytes, str, float]:
        """The bytes under ``key``, their ETag, and the seconds since they were written, by the server's clock.

        The age is the response's ``Date`` minus the object's ``Last-Modified`` (both the server's), so
        clocks of other machines never enter it; without a ``Date`` header this machine's clock is used.
        """
        resp = self._call("GET", key, "get_object", Key=self.object_key(key))
        try:
            with resp["Body"] as body:
                data = body.read()
        except (BotoCoreError, OSError) as exc:
            raise self._error("GET", key, exc) from exc
        date = resp.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
        try:
            now = email.utils.parsedate_to_datetime(date).timestamp() if date else time.time()
        except (TypeError, ValueError):
            now = time.time()
        return data, resp["ETag"], max(0.0, now - resp["LastModified"].timestamp())

    def get(self, key: str) -> bytes:
        resp = self._call("GET", key, "get_object", Key=self.object_key(key))
        try:
            with resp["Body"] as body:
                data: bytes = body.read()
                return data
        except (BotoCoreError, OSError) as exc:
            raise self._error("GET", key, exc) from exc

    def delete(self, key: str) -> None:
        """Remove ``key`` (S3 answers a DELETE of an absent key with success too)."""
        self._call("DELETE", key, "delete_object", Key=self.object_key(key))

    def exists(self, key: str) -> bool:
        try:
            self._call("HEAD", key, "head_object", Key=self.object_key(key))
        except KeyNotFound:
            return False
        return True

    def content_type(self, key: str) -> str:
        """The stored object's content type."""
        content_type: str = self._call("HEAD", key, "head_object", Key=self.object_key(key))["ContentType"]
        return content_type

    def list(self, prefix: str = "") -> list[str]:
        """Every key starting with ``prefix``, sorted (as store keys, without the store's prefix)."""
        base = f"{self.prefix}/" if self.prefix else ""
        found: list[str] = []
        try:
            for page in self._client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=base + prefix
            ):
                found.extend(obj["Key"][len(base) :] for obj in page.get("Contents", []))
        except (BotoCoreError, ClientError) as exc:
            raise self._error("LIST", prefix, exc) from exc
        return sorted(found)

    def presign(self, key: str, expires_s: int = 7 * 24 * 3600) -> str:
        """A URL that GETs ``key`` without credentials until ``expires_s`` seconds from now.

        Signed locally (no request is made). A SigV4 URL names the access key
        id (``X-Amz-Credential``), never the secret; with temporary credentials
        it also carries the session token, as S3 requires.
        """
        if not 1 <= expires_s <= MAX_PRESIGN_S:
            raise ValueError(f"expires_s must be in 1..{MAX_PRESIGN_S} (7 days), got {expires_s}")
        try:
            url: str = self._client.generate_presigned_url(
                "get_object", Params={"Bucket": self.bucket, "Key": self.object_key(key)}, ExpiresIn=expires_s
            )
            return url
        except (BotoCoreError, ClientError) as exc:
            raise self._error("PRESIGN", key, exc) from exc
