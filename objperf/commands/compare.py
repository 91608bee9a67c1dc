"""``objperf compare`` — download and upload the same object with every available client (objperf, s5cmd,
the AWS CLI as shipped and tuned, boto3, the AWS CRT, the Ruby SDK, curl) against one or more targets,
interleaved, N repetitions; every run verified by hash, measured from outside, one row per client run in a
dataset.

The second article's experiment is ``--size 100MiB --repeat 5`` with two targets: its per-run and mean
table comes out shaped like the article's."""

from __future__ import annotations

from objperf.commands.common import command_main, interrupted_exit
from objperf.commands.parser import options_parser
from objperf.options.compare import CompareOptions
from objperf.run.invocation import Invocation

PROG = "objperf compare"

EXAMPLES = """examples:
  objperf compare --size 100MiB --repeat 5                     # two buckets on the embedded SeaweedFS
  objperf compare s3://r2-test/test/ --endpoint https://ACCOUNT.r2.cloudflarestorage.com \\
      --region auto --profile r2-test --size 100MiB --repeat 5
  objperf compare --size 100MiB --repeat 5 --out runs/s3-vs-r2 --figures \\
      --target "S3 s3://s3-test/r2test/ profile=s3-test region=ap-northeast-1" \\
      --target "R2 s3://r2-test/test/ profile=r2-test region=auto endpoint=https://ACCOUNT.r2.cloudflarestorage.com"
"""


def build_parser():
    return options_parser(CompareOptions, PROG, __doc__, EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    from objperf.workflows.compare import compare

    return command_main(PROG, build_parser, compare, report, argv, options=CompareOptions, pause_collector=False)


def report(frame, options: CompareOptions, invocation: Invocation) -> int:
    from objperf.analysis.stats import client_means, timing_table
    from objperf.core.sanitize import printable

    runs = frame.rename(columns={"target": "provider", "rep": "run", "wall_s": "seconds"})
    ok = runs[runs["ok"]]
    if len(ok):
        print(timing_table(ok).round(3).to_string())
        print()
        means = client_means(ok)
        if "version" in ok:  # every client's version beside its figures
            means.insert(1, "version", means["client"].map(ok.groupby("client")["version"].first()))
        print(means.round(3).to_string(index=False))
    timed_inside = ok[ok["startup_s"].notna()] if "startup_s" in ok else ok.iloc[:0]
    for client, part in timed_inside.groupby("client"):
        print(f"{client}: timed inside its process around the transfer, as the S3-vs-R2 article timed it; starting "
              f"it took {part['startup_s'].mean():.2f} s more on average, not counted above")
    if "outcome" in ok:
        for row in ok[ok["outcome"] != "ok"].itertuples():
            print(printable(f"{row.client} {row.operation} on {row.provider} run {row.run}: {row.outcome}"))
    failed = runs[~runs["ok"]]
    for row in failed.itertuples():
        print(printable(f"FAILED {row.client} {row.operation} on {row.provider} run {row.run}: {row.detail}"))
    if invocation.destination:
        invocation.say(f"dataset {invocation.destination} ({len(frame)} client runs)")
    if frame.attrs.get("status") == "interrupted":
        return interrupted_exit()
    return 1 if len(failed) else 0




if __name__ == "__main__":
    from objperf.commands.common import exit_now

    exit_now(main())
