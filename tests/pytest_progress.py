# SPDX-License-Identifier: LGPL-2.1-or-later
"""A pytest plugin for tests/run-tests: what happens, as it happens, one JSON object per line on the file
descriptor named by $LINKPROBE_PROGRESS_FD (run-tests passes one end of a pipe). Loaded with
`-p pytest_progress`; without the variable it does nothing.

  {"event": "collected", "count": N, "files": {FILE: N, ...}}
  {"event": "start", "nodeid": ID}
  {"event": "result", "nodeid": ID, "outcome": "passed"|"failed"|"skipped", "seconds": S, "detail": TEXT}

A test's outcome is the worst of its phases (a failing fixture teardown fails a passed test). detail is
a skip's reason, or a failure's traceback as --tb= formats it with the tail of what the test wrote to
stderr. A file that cannot be collected is one failed result named after the file.

Under pytest-xdist (run-tests' -n) the plugin works in the controller only, where the workers' reports
arrive; the tests of two files then interleave, so each test's phases are kept by node ID."""

import json
import os

import pytest

STDERR_LINES = 20


def _skip_reason(report):
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        reason = report.longrepr[2]
        return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason
    return report.longreprtext or "skipped"


def _failure_text(report):
    text = report.longreprtext.rstrip()
    err = report.capstderr.rstrip()
    if err:
        lines = err.splitlines()
        shown = "\n".join(lines[-STDERR_LINES:])
        more = f" (last {STDERR_LINES} of {len(lines)} lines)" if len(lines) > STDERR_LINES else ""
        text += f"\n--- stderr{more} ---\n{shown}"
    return text


def _collected(nodeids):
    files = {}
    for nodeid in nodeids:
        file = nodeid.partition("::")[0]
        files[file] = files.get(file, 0) + 1
    return {"event": "collected", "count": len(nodeids), "files": files}


class Progress:
    def __init__(self, fd):
        self.out = os.fdopen(fd, "w", buffering=1)
        self.running = {}
        self.announced = False

    def emit(self, **event):
        try:
            self.out.write(json.dumps(event) + "\n")
        except BrokenPipeError:
            pass  # the reader went away; the tests go on, and junit XML still has the results

    def pytest_collection_finish(self, session):
        self.emit(**_collected([item.nodeid for item in session.items]))

    # xdist's controller collects nothing itself: every worker collects the same list and reports it.
    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        if not self.announced:
            self.announced = True
            self.emit(**_collected(ids))

    def pytest_collectreport(self, report):
        if report.failed:
            self.emit(event="result", nodeid=report.nodeid or "collection", outcome="failed", seconds=0,
                      detail=report.longreprtext)

    def pytest_runtest_logstart(self, nodeid, location):
        self.running[nodeid] = {"outcome": "passed", "seconds": 0.0, "detail": ""}
        self.emit(event="start", nodeid=nodeid)

    def pytest_runtest_logreport(self, report):
        current = self.running.setdefault(report.nodeid, {"outcome": "passed", "seconds": 0.0, "detail": ""})
        current["seconds"] += report.duration
        if report.failed and current["outcome"] != "failed":
            where = "" if report.when == "call" else f"(in {report.when}) "
            current.update(outcome="failed", detail=where + _failure_text(report))
        elif report.skipped and current["outcome"] == "passed":
            current.update(outcome="skipped", detail=_skip_reason(report))

    def pytest_runtest_logfinish(self, nodeid, location):
        self.emit(event="result", nodeid=nodeid, **self.running.pop(nodeid))


def pytest_configure(config):
    fd = os.environ.get("LINKPROBE_PROGRESS_FD")
    # An xdist worker has config.workerinput; the pipe is the controller's alone.
    if fd and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Progress(int(fd)), "linkprobe-progress")
