"""The bench's round-by-round ratios: each objperf run set against the reference's run of the same round."""

from objperf.bench import round_ratios
from objperf.clients import Measured


def run(wall_s: float, *, ok: bool = True) -> Measured:
    return Measured(wall_s=wall_s, cpu_user_s=0.5, cpu_system_s=0.1, peak_rss_mib=10, exit_status=0 if ok else 1)


def test_each_round_is_set_against_the_same_round_of_the_reference():
    big = {"objperf ram": [run(1.0), run(2.0), run(1.0)],
           "s5cmd": [run(1.5), run(2.0), run(1.0, ok=False)],  # a failed round has no ratio
           "boto3": [run(4.0)] * 3}
    assert round_ratios(big, "s5cmd") == ["objperf ram Gbps / s5cmd's, round by round: 1.50 1.00 (median 1.25)"]


def test_the_best_peer_is_the_fastest_peer_of_each_round():
    big = {"objperf put": [run(2.0), run(2.0)],
           "s5cmd": [run(3.0), run(1.0)],
           "aws crt": [run(2.5), run(4.0)],
           "objperf ram (nginx)": [run(1.0), run(1.0)]}
    assert round_ratios(big, "best peer") == [
        "objperf put Gbps / best peer's, round by round: 1.25 0.50 (median 0.88)"]


def test_no_line_without_the_reference():
    assert round_ratios({"objperf ram": [run(1.0)], "boto3": [run(2.0)]}, "s5cmd") == []
