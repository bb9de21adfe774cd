"""Where and how to reach S3, as one checked value (no boto3 here: reading settings must not load it).

``storage.s3.S3Store`` takes an ``S3Settings``; ``validator.settings`` builds one
from its ``[s3]`` section, which takes the scalar declarations over from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from consensus.params import check_fields, param

DEFAULT_REGION = "us-east-1"


@dataclass(frozen=True)
class S3Settings:
    """Where and how to reach S3. The credentials never appear in ``repr`` or in errors.

    The scalar settings are declared here, once, with ``param`` (default, doc, limits; checked when
    the value is made); the ``[s3]`` settings section takes them over.
    """

    endpoint_url: str | None = None
    """Endpoint of an S3-compatible server (``http://127.0.0.1:8333``); None for AWS."""
    region: str = param(DEFAULT_REGION, "S3 region.")
    access_key_id: str | None = field(default=None, repr=False)
    """None together with the secret: boto3's own chain (profile, instance role)."""
    secret_access_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    connect_timeout_s: float = param(
        2.0, "Seconds to open a connection: how long an unreachable endpoint blocks.", lo=0.001, hi=600, lo_open=True
    )
    read_timeout_s: float = param(
        10.0, "Seconds without a byte from the server before a request fails.", lo=0.001, hi=3600, lo_open=True
    )
    max_attempts: int = param(2, "Attempts per request, the first included (1 = no retry).", lo=1, hi=10)

    def __post_init__(self) -> None:
        if (self.access_key_id is None) != (self.secret_access_key is None):
            missing = "AWS_SECRET_ACCESS_KEY" if self.secret_access_key is None else "AWS_ACCESS_KEY_ID"
            raise ValueError(f"S3 credentials incomplete: {missing} is not set")
        check_fields(self, "s3")

    def secrets(self) -> tuple[str, ...]:
        """The values masked in messages (real keys are 16+ characters; masking "a" would garble the text)."""
        return tuple(s for s in (self.access_key_id, self.secret_access_key, self.session_token) if s and len(s) >= 8)
