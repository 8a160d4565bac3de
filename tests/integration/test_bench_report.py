# SPDX-License-Identifier: LGPL-2.1-or-later
"""bench/report.py's statistics, which every benchmark's intervals rest on: the order-statistic interval of
a median covers it as often as it claims, the bootstrap interval of a ratio brackets a known ratio, and a
round's order alternates A B B A. Pure Python, no daemon."""

import os
import random
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import report  # noqa: E402


def test_median_interval_ranks():
    # 10 samples: the 2nd and the 9th (97.9 % coverage); 20: the 6th and the 15th.
    assert report.median_ci(list(range(1, 11))) == (5.5, 2, 9)
    assert report.median_ci(list(range(1, 21)))[1:] == (6, 15)
    # Fewer than 6: no pair of order statistics covers 95 %.
    med, low, high = report.median_ci([3, 1, 2, 5, 4])
    assert med == 3 and low is None and high is None
    assert report.median_ci([6, 1, 5, 2, 4, 3])[1:] == (1, 6)


def test_median_interval_covers_as_claimed():
    """Over many draws of 10 from a skewed distribution, the interval holds the true median at least 95 %
    of the time (97.9 % in theory), and not always (it is an interval, not the range)."""
    rng = random.Random(7)
    true_median = 1.0  # lognormal(0, 1)
    trials, covered = 2000, 0
    for _ in range(trials):
        _, low, high = report.median_ci([rng.lognormvariate(0, 1) for _ in range(10)])
        covered += low <= true_median <= high
    assert 0.95 <= covered / trials < 0.995, covered / trials


def test_ratio_interval():
    rng = random.Random(3)
    ours = [2.0 * rng.uniform(0.9, 1.1) for _ in range(10)]
    anchor = [rng.uniform(0.9, 1.1) for _ in range(10)]
    ratio, low, high = report.ratio_ci(ours, anchor)
    assert ratio == statistics.median(ours) / statistics.median(anchor)
    assert low < ratio < high and low < 2.0 < high and high - low < 0.6, (low, ratio, high)
    # Reproducible from the samples alone.
    assert report.ratio_ci(ours, anchor) == (ratio, low, high)
    assert report.ratio_ci([1, 2], [1, 2])[1:] == (None, None)
    assert report.with_ci(ratio, low, high, ".2f", "x") == f"{ratio:.2f}x [{low:.2f}, {high:.2f}]"
    assert report.with_ci(1.5, None, None) == "1.50"


def test_alternated_order():
    order = [x for r in range(4) for x in report.alternated(r, "AB")]
    assert "".join(order) == "ABBAABBA"


def test_whole_process_is_reaped_when_it_ends():
    """whole_process() times a process to its exit, not to the next point of a polling grid:
    subprocess.run(timeout=) with no pipe sleeps 0.5, 1, 2, ... 50 ms between looks, so a 40 ms process
    read 63.5 ms at best. The fastest of five 40 ms sleeps is below that by far; its status and
    accounting come back too."""
    walls = []
    for _ in range(5):
        wall, cpu, max_mb, status = report.whole_process(["sleep", "0.04"])
        assert status == 0 and 0 <= cpu < wall and max_mb > 0
        walls.append(wall)
    assert 0.04 <= min(walls) < 0.0635, walls
    assert report.whole_process(["sh", "-c", "exit 3"])[3] == 3
