# SPDX-License-Identifier: LGPL-2.1-or-later
"""tests/run-tests, the runner of `make check`: progress as it happens, failures told by the failing
command's own error, and the totals line last.

A pytest layer is run over a directory of made-up tests (one passes, one fails in a command as sysctl
would, one skips), with the runner's output captured."""

import importlib.machinery
import importlib.util
import io
import os
import subprocess
import textwrap

import lp

RUN_TESTS = os.path.join(lp.TOP, "tests", "run-tests")
TOTALS = ("passed", "failed", "skipped")


def load_runner():
    loader = importlib.machinery.SourceFileLoader("run_tests", RUN_TESTS)
    spec = importlib.util.spec_from_loader("run_tests", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class Terminal(io.StringIO):
    def isatty(self):
        return True


SAMPLE = textwrap.dedent("""\
    import sys
    import pytest
    sys.path.insert(0, {integration!r})
    import lp

    def test_passes():
        pass

    def test_fails_in_a_command():
        lp.run(["sh", "-c", "echo 'sysctl: permission denied on key \\"net.ipv6.conf.all.accept_dad\\"' >&2; exit 255"])

    def test_skips():
        pytest.skip("no such hardware here")
    """)


def test_a_pytest_layer_reports_as_it_runs(tmp_path):
    (tmp_path / "test_first.py").write_text(SAMPLE.format(integration=os.path.dirname(__file__)))
    (tmp_path / "test_second.py").write_text("def test_one():\n    pass\n")
    runner = load_runner()
    out = io.StringIO()
    totals = runner.Totals(runner.Display(out))
    build = os.path.relpath(tmp_path, lp.TOP)
    runner.run_pytest(totals, "integ", str(tmp_path), build, False, lambda n: f"integration: {n} files", [("", 1)])
    text = out.getvalue()
    lines = text.splitlines()

    assert lines[0] == "integration: 2 files"
    assert (totals.passed, totals.failed, totals.skipped) == (2, 1, 1), text
    # One line per file as it finishes: its counts, time and how far the layer is.
    first = next(line for line in lines if "test_first.py" in line and "[" in line)
    assert "1 passed, 1 failed, 1 skipped" in first and first.endswith("[3/4]"), first
    assert next(line for line in lines if "test_second.py" in line).endswith("[4/4]")
    assert "  SKIP integ: test_first::test_skips: no such hardware here" in lines

    # The failure names the command and shows its own error, not subprocess.py's insides.
    failure = text[text.index("  FAIL integ: test_first::test_fails_in_a_command"):]
    failure = failure[:failure.index("test_second.py")]
    assert "exited with status 255: sysctl: permission denied on key" in failure, failure
    assert "subprocess.py" not in failure and len(failure.splitlines()) < 20, failure
    assert f"pytest's whole output: {build}/pytest-integ.log" in failure
    assert (tmp_path / "pytest-integ.log").exists() and (tmp_path / "pytest-integ.xml").exists()


def test_files_two_at_a_time_then_the_ones_alone(tmp_path):
    """make check's integration layer: files on two xdist workers, their events interleaved, each file
    still one line with its own counts; the files marked alone after them, in a pass of their own."""
    (tmp_path / "conftest.py").write_text(
        "def pytest_configure(config):\n"
        "    config.addinivalue_line('markers', 'alone: runs by itself')\n")
    for name in ("a", "b"):
        # Both files' tests sleep in turns, so the two workers' reports are sure to interleave.
        (tmp_path / f"test_{name}.py").write_text(
            "import time\n" + "".join(f"def test_{i}():\n    time.sleep(0.2)\n" for i in range(4)))
    (tmp_path / "test_timed.py").write_text(
        "import pytest\npytestmark = pytest.mark.alone\n\ndef test_rate():\n    pass\n\n"
        "def test_other():\n    pytest.skip('nothing to time here')\n")
    runner = load_runner()
    out = io.StringIO()
    totals = runner.Totals(runner.Display(out))
    build = os.path.relpath(tmp_path, lp.TOP)
    runner.run_pytest(totals, "integ", str(tmp_path), build, False, lambda n: f"integration: {n} files",
                      [("not alone", 2), ("alone", 1)])
    text = out.getvalue()
    assert (totals.passed, totals.failed, totals.skipped) == (9, 0, 1), text
    lines = [line for line in text.splitlines() if line.startswith("  integ  test_")]
    assert sorted(line.split()[1] for line in lines) == ["test_a.py", "test_b.py", "test_timed.py"], text
    assert all("4 passed" in line for line in lines[:2]) and lines[2].split()[1] == "test_timed.py", text
    assert "1 passed, 1 skipped" in lines[2] and lines[2].endswith("[10/10]"), text
    # Each pass keeps its own log and report, and the second ran the timed file alone.
    assert "test_timed" not in (tmp_path / "pytest-integ.xml").read_text()
    second = (tmp_path / "pytest-integ-2.xml").read_text()
    assert "test_rate" in second and "test_a" not in second and "test_b" not in second


def test_a_terminal_gets_a_status_line_the_log_does_not():
    runner = load_runner()
    tty, log = Terminal(), io.StringIO()
    for out in (tty, log):
        display = runner.Display(out)
        display.status("  integ  [1/2] test_x.py::test_y")
        display.line("  integ  test_x.py  1 passed")
    assert tty.getvalue() == "\r\033[K  integ  [1/2] test_x.py::test_y\r\033[K  integ  test_x.py  1 passed\n"
    assert log.getvalue() == "  integ  test_x.py  1 passed\n"


def test_the_totals_line_comes_last_and_is_kept(tmp_path):
    build = os.path.relpath(tmp_path, lp.TOP)
    proc = subprocess.run(["/usr/bin/python3", RUN_TESTS, f"--build={build}", "--only=man", "--skip=e2e man"],
                          capture_output=True, text=True, cwd=lp.TOP)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    last = proc.stdout.splitlines()[-1]
    assert last == "0 passed, 0 failed, 1 skipped", proc.stdout
    assert "  SKIP man: every test: left out by SKIP=" in proc.stdout
    assert (tmp_path / "test-totals").read_text() == last + "\n"

    bad = subprocess.run(["/usr/bin/python3", RUN_TESTS, f"--build={build}", "--skip=e2e units"],
                         capture_output=True, text=True, cwd=lp.TOP)
    assert bad.returncode == 2 and "unknown layer in --skip: units" in bad.stderr
