"""Where and as whom to talk S3, and whom to trust over TLS: decided here once, for the
control plane and the engine alike.  No secret is ever part of what ``describe`` gives."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from objperf.core.errors import UsageError

PRESIGN_MAX_SECONDS = 7 * 24 * 3600
CONTROL_TIMEOUT_S = 120.0  # completing a large upload can take a while
CONNECT_TIMEOUT_S = 10.0
# The longest answer a control-plane call takes in (a listing page of 1000 keys of 1 KiB each is about
# 1.4 MB): a server streaming an endless body is cut off here, and the call fails.
CONTROL_BODY_CAP = 8 << 20
# How long a run's presigned URLs live.  Runs sign them afresh every third of this, so a run outlasts
# them and the temporary credentials (SSO, an assumed role) they were signed with: botocore renews
# those ten to fifteen minutes before they expire, and each new URL is signed with what it holds then.
URL_LIFETIME_S = 15 * 60
URL_LIFETIME_MIN_S = 3


def check_url_lifetime(seconds: float) -> None:
    if not URL_LIFETIME_MIN_S <= seconds <= PRESIGN_MAX_SECONDS:
        raise UsageError(f"URL lifetime must be between {URL_LIFETIME_MIN_S}s and 7 days (168h, SigV4's limit), "
                         f"not {seconds:g}s")


@dataclass(frozen=True)
class S3Settings:
    """Where and as whom to talk S3.  ``credentials`` is only for the embedded server."""

    endpoint: str | None = None
    region: str | None = None
    profile: str | None = None
    anonymous: bool = False
    addressing: str = "auto"  # auto | path | virtual
    credentials: tuple[str, str] | None = None
    ca_bundle: str | None = None  # over TLS: trust these CA certificates instead of the system's
    verify_tls: bool = True  # False: trust any certificate (--no-verify-ssl)
    timeout: float = CONTROL_TIMEOUT_S  # a control-plane call waits at most this long for its next byte
    # A write run's multipart calls (create, complete, abort) may wait longer, up to --timeout whatever the
    # run's duration: an upload a short run could not abort in time stays open, and is billed.
    multipart_timeout: float = CONTROL_TIMEOUT_S

    def for_multipart(self) -> S3Settings:
        """These settings with ``multipart_timeout`` as the control-plane timeout."""
        return replace(self, timeout=self.multipart_timeout)

    @property
    def connect_timeout(self) -> float:
        return min(CONNECT_TIMEOUT_S, self.timeout)

    def describe(self) -> dict:
        """The settings that may go into a manifest: never credentials."""
        return {"endpoint": self.endpoint, "region": self.region, "profile": self.profile,
                "anonymous": self.anonymous, "addressing": self.addressing, **self.describe_tls()}

    def describe_tls(self) -> dict:
        return {"ca_bundle": self.ca_bundle, "verify_tls": self.verify_tls}

    @property
    def trusted_cas(self) -> str | None:
        """The CA bundle every connection trusts (None: the system's), as ``choose_ca_bundle`` decides."""
        return choose_ca_bundle(self.ca_bundle, self.profile)[0]

    def engine_tls(self) -> dict:
        """The engine's keywords for the same trust as the control plane's."""
        return {"ca_file": self.trusted_cas, "verify_tls": self.verify_tls}

    def requests_verify(self) -> bool | str:
        """``verify=`` for botocore and requests."""
        if not self.verify_tls:
            quiet_insecure_warnings()
            return False
        return self.trusted_cas or True


def quiet_insecure_warnings() -> None:
    """--no-verify-ssl was asked for once; urllib3 would warn on every request."""
    import urllib3

    urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)


def choose_ca_bundle(explicit: str | None, profile: str | None) -> tuple[str | None, str]:
    """The CA bundle botocore would pick, and where it came from: ``explicit`` (--ca-bundle), else
    ``AWS_CA_BUNDLE``, else the profile's ``ca_bundle``; (None, "") for the system's CAs."""
    if explicit:
        return explicit, "--ca-bundle"
    if os.environ.get("AWS_CA_BUNDLE"):
        return os.environ["AWS_CA_BUNDLE"], "AWS_CA_BUNDLE"
    configured = profile_setting(profile, "ca_bundle")
    return (configured, "the profile's ca_bundle") if configured else (None, "")


def checked_ca_bundle(explicit: str | None, profile: str | None) -> str | None:
    """``choose_ca_bundle``'s file as an absolute path, checked: a bad path is one line now, not a TLS
    failure later."""
    path, origin = choose_ca_bundle(explicit, profile)
    if not path:
        return None
    path = os.path.expanduser(path)
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise UsageError(f"{origin} {path}: no readable file there")
    return os.path.abspath(path)


def environment_region() -> str | None:
    """The region the environment names: ``AWS_REGION`` (AWS's newer SDKs and CLI read it first), else
    ``AWS_DEFAULT_REGION``."""
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None


def default_region(profile: str | None = None) -> str:
    """The region AWS's own tools would sign for with nothing given: the environment's, else the profile's,
    else us-east-1."""
    return environment_region() or profile_setting(profile, "region") or "us-east-1"


def profile_setting(profile: str | None, name: str) -> str | None:
    """One setting of a profile in the AWS config file (``AWS_CONFIG_FILE``, else ~/.aws/config)."""
    import configparser

    config = configparser.RawConfigParser()
    try:
        config.read(os.path.expanduser(os.environ.get("AWS_CONFIG_FILE", "~/.aws/config")))
    except configparser.Error:
        return None  # botocore reports a broken config file when it reads it
    profile = profile or os.environ.get("AWS_PROFILE") or "default"
    section = profile if profile == "default" else f"profile {profile}"
    return config.get(section, name, fallback=None) or None
