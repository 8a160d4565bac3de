# SPDX-License-Identifier: LGPL-2.1-or-later
"""The report `make bench` prints, one row per figure: metric, ours, anchor, ratio, goal and whether the
goal was met, so that runs (and the soak, tests/soak/soak.py) compare line by line. A figure with no
anchor or goal says "-"; a goal of "info" is there to be compared, not met."""

import json

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
