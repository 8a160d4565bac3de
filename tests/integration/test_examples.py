# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every shell and Python example of README.md and of the manual pages' EXAMPLES runs, in order,
against a private daemon on an example network, or is marked as an illustration that is not run
(tests/integration/examples.py describes the markers and the network). A failure names the file and
line of the block, what failed and how, and shows the block."""

import textwrap

import pytest

import examples

EXAMPLES, ERRORS = examples.all_examples()
RUN = [e for e in EXAMPLES if e.runs]


def test_every_example_is_run_or_marked():
    assert not ERRORS, "examples that are not run nor marked as such, or markers that are wrong:\n" + "\n".join(ERRORS)
    assert len(RUN) >= 10, [e.where for e in RUN]


@pytest.fixture(scope="module")
def network():
    net = examples.ExampleNetwork()
    yield net
    net.close()


def measures(example):
    """An example that measures within a deadline (the GPU probe's memory and FLOPS, the TCP probe's
    rates) runs in make check's pass of its own, with no other test file beside it."""
    return "--measure" in example.text or "linkprobe-probe-tcp" in example.text


@pytest.mark.parametrize("example", [pytest.param(e, marks=pytest.mark.alone) if measures(e) else e for e in RUN],
                         ids=[e.where for e in RUN])
def test_example(network, example):
    problem = network.run(example)
    if problem:
        kind = "transcript" if example.lang == "transcript" else f"```{example.lang} block"
        pytest.fail(f"{example.where}: the {kind} failed: {problem}\n--- {example.where} ---\n"
                    f"{textwrap.indent(example.text.rstrip(), '  ')}\n(mark an illustration that cannot run with "
                    f"a \"not run: REASON\" comment: tests/integration/examples.py)", pytrace=False)


# --- finding them ---------------------------------------------------------------------------------------

def test_readme_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(textwrap.dedent("""\
        Text.
        <!-- shows: hello -->
        <!-- shows: world -->
        ```sh
        echo hello world
        ```
        <!-- not run: runs until Ctrl-C -->
        ```python
        while True: pass
        ```
        ```ini
        [Gpu]
        ```
        <!-- not run: -->
        ```sh
        true
        ```
        <!-- not run: a config -->
        ```ini
        [Gpu]
        ```
        ```sh
        never closed
        """))
    found, errors = examples.readme_examples(str(readme))
    assert [(e.line, e.lang, e.runs, e.shows, e.not_run) for e in found] == [
        (4, "sh", True, ["hello", "world"], None),
        (8, "python", False, [], "runs until Ctrl-C"),
        (11, "ini", False, [], None),
        (15, "sh", True, [], None),
        (19, "ini", False, [], "a config"),
    ]
    assert found[0].text == "echo hello world\n"
    assert errors == [
        'README.md:14: "not run:" needs a value',
        'README.md:19: a ```ini block is never run: "not run:" and "shows:" are for ```sh and ```python blocks',
        "README.md:22: the ``` block is never closed",
    ]


def test_man_markers(tmp_path):
    page = tmp_path / "x.1"
    page.write_text(textwrap.dedent("""\
        .SH DESCRIPTION
        .EX
        not an example: outside EXAMPLES
        .EE
        .SH EXAMPLES
        .\\" run: transcript
        .\\" shows: 2 links
        .PP
        .RS
        .EX
        $ linkprobectl \\-\\-json list | jq \\e
            \\(aq.[0]\\(aq
        [ ... ]
        $ linkprobectl list
        2 links listed.
        .EE
        .RE
        .EX
        unmarked
        .EE
        .\\" run: perl
        .EX
        print
        .EE
        .\\" not run: hardware
        .EX
        \\[u2514]\\[u2500] \\*(Tm
        .EE
        """))
    found, errors = examples.man_examples(str(page), "x.1")
    assert [(e.line, e.lang, e.runs, e.shows, e.not_run) for e in found] == [
        (10, "transcript", True, ["2 links"], None),
        (18, "illustration", False, [], None),
        (22, "perl", False, [], None),
        (26, "illustration", False, [], "hardware"),
    ]
    assert examples.transcript_commands(found[0].text) == ["linkprobectl --json list | jq \\\n    '.[0]'",
                                                           "linkprobectl list"]
    assert errors == [
        "x.1:18: an example needs '.\\\" run: sh|python|transcript' or '.\\\" not run: REASON' on the lines right "
        "before .EX",
        'x.1:22: "run: perl": say sh, python or transcript',
        "x.1:27: roff escape \\* is not known to tests/integration/examples.py",
    ]
