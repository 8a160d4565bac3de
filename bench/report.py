# SPDX-License-Identifier: LGPL-2.1-or-later
"""The report `make bench` prints, one row per figure: metric, ours, anchor, ratio, goal and whether the
goal was met, so that runs (and the soak, tests/soak/soak.py) compare line by line. A figure with no
anchor or goal says "-"; a goal of "info" is there to be compared, not met."""

import json
import os
import subprocess
import time

HEADER = ("metric", "ours", "anchor", "ratio", "goal", "")


class Report:
    def __init__(self):
        self.rows = []

    def row(self, metric, ours, anchor="-", ratio="-", goal="info", verdict=""):
        """verdict: "ok", "MISSED", or "" where there is nothing to meet; True/False say the same."""
        if verdict is True or verdict is False:
            verdict = "ok" if verdict else "MISSED"
        self.rows.append(tuple(str(c) for c in (metric, ours, anchor, ratio, goal, verdict)))

    def missed(self):
        return [r[0] for r in self.rows if r[5] == "MISSED"]

    def text(self):
        widths = [max(len(r[i]) for r in self.rows + [HEADER]) for i in range(len(HEADER))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [HEADER] + self.rows)

    def print(self):
        print(self.text())

    def as_json(self):
        """The rows as objects with the header's names, for a file that a later run is compared with."""
        return [dict(zip(("metric", "ours", "anchor", "ratio", "goal", "verdict"), r)) for r in self.rows]

    def dump(self, path, extra=None):
        with open(path, "w") as f:
            json.dump({"report": self.as_json(), **(extra or {})}, f, indent=2)


# ---- statistics every benchmark uses alike: medians with a 95 % interval ----

def _binom_cdf(k, n):
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    from math import comb
    return sum(comb(n, i) for i in range(k + 1)) / 2 ** n


def median_ci(samples, level=0.95):
    """(median, low, high): the median and a distribution-free interval for it from order statistics
    (the j-th smallest and j-th largest sample, j the largest rank whose binomial tail is within
    (1 - level) / 2; it covers at least level, 97.9 % at 10 samples: 2nd and 9th). low and high are None
    with fewer than 6 samples, where no such pair exists."""
    import statistics
    xs = sorted(samples)
    n = len(xs)
    med = statistics.median(xs)
    j = 0
    while j < n // 2 and _binom_cdf(j, n) <= (1 - level) / 2:
        j += 1
    if j == 0:
        return med, None, None
    return med, xs[j - 1], xs[n - j]


def ratio_ci(ours, anchor, level=0.95, resamples=4000, seed=1):
    """(ratio, low, high): median(ours) / median(anchor) and a percentile bootstrap interval (each side
    resampled on its own, a fixed seed so that a run's figures are reproducible from its samples). low and
    high are None with fewer than 3 samples on a side."""
    import random
    import statistics
    ratio = statistics.median(ours) / statistics.median(anchor) if statistics.median(anchor) else float("nan")
    if len(ours) < 3 or len(anchor) < 3:
        return ratio, None, None
    rng = random.Random(seed)
    boots = []
    for _ in range(resamples):
        a = statistics.median(rng.choices(anchor, k=len(anchor)))
        if a:
            boots.append(statistics.median(rng.choices(ours, k=len(ours))) / a)
    boots.sort()
    tail = (1 - level) / 2
    return ratio, boots[int(tail * (len(boots) - 1))], boots[int(round((1 - tail) * (len(boots) - 1)))]


def with_ci(value, low, high, spec=".2f", suffix=""):
    """"12.30 [11.90, 12.80]", or the value alone where there is no interval."""
    if value is None:
        return "-"
    if low is None or high is None:
        return f"{value:{spec}}{suffix}"
    return f"{value:{spec}}{suffix} [{low:{spec}}, {high:{spec}}]"


def alternated(round_index, items):
    """items in the order of this round: as given in even rounds, reversed in odd ones, so that over
    rounds each pair runs A B B A and neither side always runs first (warmer caches, a neighbour's
    burst)."""
    return list(items) if round_index % 2 == 0 else list(reversed(items))


def whole_process(args, stderr=subprocess.DEVNULL):
    """(wall s, CPU s, max RSS MB, exit status) of one run from fork to exit, its output thrown away.
    Reaped with a blocking wait4(): subprocess.run(timeout=) waits by polling with sleeps that double up
    to 50 ms, which rounds every wall time up to its grid (15.5, 31.5, 63.5, 113.5 ms ...)."""
    started = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=stderr)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def cpu_seconds(pid):
    """User + system CPU seconds of a process so far (/proc/PID/stat, in clock ticks)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
