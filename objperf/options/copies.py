"""The options of a server-side copy run (``objperf copy``), defined once: its parser, ``objperf.api.copy``'s
signature and docs/cli.md are made from this class."""

from __future__ import annotations

from dataclasses import dataclass

from objperf.options.groups import OUTPUT, TARGET, ConnectionOptions, OutputOptions, TargetOptions
from objperf.options.kinds import COUNT, DURATION, SIZE
from objperf.options.spec import flag, option
from objperf.plan.copies import COPY_PART

WORKLOAD = "workload"
COPY_SEEDED = 100


@dataclass(kw_only=True)
class CopyOptions(TargetOptions, ConnectionOptions, OutputOptions):
    """Server-side copies: every object under a prefix (or the keys named) copied once by the store itself to a
    new key, CopyObject for an object up to --part-size and a multipart copy (UploadPartCopy, a byte range a part)
    above it, one row a request, each op's rate, latency and errors apart.  With no URL it seeds objects on the
    embedded local SeaweedFS and copies those."""

    url: str | None = option(None, "s3://BUCKET/PREFIX/ (every object under it) or s3://BUCKET/KEY; omit to use "
                             "the embedded local SeaweedFS", positional=True)
    to: str | None = option(None, "where the copies go: s3://BUCKET/PREFIX/, each at its key relative to the "
                            "source's prefix (a key already there is replaced)", metavar="s3://BUCKET/PREFIX/",
                            default_text="the source's bucket, under objperf-copy-RUN/", group=TARGET)
    keys: str | None = option(None, "keys to copy: a comma-separated list under the URL's prefix, or N for the "
                              "first N objects under it", group=WORKLOAD)
    concurrency: int = option(16, "copy requests (CopyObject, UploadPartCopy) in flight", COUNT, flags=("-c",),
                              group=WORKLOAD)
    part_size: int = option(COPY_PART, "objects up to this size are copied by one CopyObject, larger ones by a "
                            "multipart copy in parts of this size (5MiB to 5GiB, S3's limits)", SIZE, group=WORKLOAD)
    duration: float | None = option(None, "stop after this long: the copies in flight are cut, the multipart "
                                    "copies not completed aborted, the objects not yet begun left as they are",
                                    DURATION, flags=("-d",), group=WORKLOAD)
    verify: bool = flag("after the run, read every copy and its source back and compare them", group=WORKLOAD)
    cleanup: bool = flag("delete the copies when the run ends (the embedded server's go with it anyway)",
                         group=WORKLOAD)
    objects: int = option(COPY_SEEDED, "embedded server only: objects seeded under copy/SIZE/ to copy", COUNT,
                          group=OUTPUT)
    object_size: int = option(1 << 20, "embedded server only: the size of each object seeded", SIZE, group=OUTPUT)

    def workload(self, bucket: str, prefix: str, to_bucket: str = "", to_prefix: str | None = None):
        """The copy run these options ask for, of what lies under ``prefix`` in ``bucket`` (``objperf.plan.copies``)."""
        from objperf.plan.copies import CopyWorkload

        workload = CopyWorkload(bucket=bucket, prefix=prefix, to_bucket=to_bucket, to_prefix=to_prefix,
                                part_size=self.part_size, concurrency=self.concurrency, threads=self.threads,
                                duration=self.duration, verify=self.verify, cleanup=self.cleanup,
                                url_lifetime=self.url_lifetime, **self.connection_kwargs())
        workload.validate()
        return workload
