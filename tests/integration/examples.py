# SPDX-License-Identifier: LGPL-2.1-or-later
"""The examples of README.md and of the manual pages' EXAMPLES, found and run (test_examples.py).

README.md: a fenced ```sh or ```python block is run; on the lines right before its fence,

    <!-- not run: REASON -->     marks it as an illustration that is not run (REASON says why);
    <!-- shows: TEXT -->         says what its output must contain (one comment per fragment);
    <!-- in: checkout -->        runs it in the checkout rather than in a scratch directory (for an
                                 example that names the checkout's files, as a developer types it).

Blocks of any other language (```ini, ```promql, or none) are not run.

A manual page: every .EX block in its EXAMPLES section says, in roff comments on the lines right
before .EX (any .PP/.RS in between allowed),

    .\\" run: sh | python | transcript
    .\\" not run: REASON
    .\\" shows: TEXT
    .\\" in: checkout

A transcript is commands after "$ " (a trailing backslash continues one) each followed by the output a
machine printed, which is not compared (it comes from hardware the tests do not have): each command
must succeed. An .EX block without "run:" or "not run:" is an error, so a new example is decided upon.

Examples run in order, each in bash (-e -o pipefail) or python3, inside the network namespace of an
example network (ExampleNetwork) whose linkprobed is on the D-Bus "system" bus of the test, with the
build directory first on PATH: `linkprobectl` there is build/linkprobectl.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import textwrap

import lp

README_RUN = {"sh", "python"}
MARKER = re.compile(r"^(not run|shows|run|in):\s*(.*?)\s*$")
HTML_COMMENT = re.compile(r"^<!--\s*(.*?)\s*-->$")
ROFF_COMMENT = re.compile(r'^\.\\"\s*(.*?)\s*$')


class Example:
    def __init__(self, source, line, lang, text, shows=(), not_run=None, in_checkout=False):
        self.source = source      # "README.md", "man/linkprobectl.1"
        self.line = line          # of the opening fence or .EX
        self.lang = lang          # sh, python, transcript (or another fence's language: not run)
        self.text = text
        self.shows = list(shows)
        self.not_run = not_run    # the reason, for an illustration
        self.in_checkout = in_checkout

    @property
    def where(self):
        return f"{self.source}:{self.line}"

    @property
    def runs(self):
        return self.not_run is None and self.lang in ("sh", "python", "transcript")

    def __repr__(self):
        return f"<Example {self.where} {self.lang}>"


def _markers(lines, comment, where):
    """The markers in the comments right before a block (lines, nearest last): (not_run, shows, run,
    in_checkout, errors)."""
    not_run, shows, run, in_checkout, errors = None, [], None, False, []
    for number, text in lines:
        m = comment.match(text)
        body = m.group(1) if m else ""
        marker = MARKER.match(body)
        if not marker:
            continue
        key, value = marker.groups()
        if not value:
            errors.append(f"{where(number)}: \"{key}:\" needs a value")
        elif key == "not run":
            not_run = value
        elif key == "shows":
            shows.append(value)
        elif key == "in":
            if value == "checkout":
                in_checkout = True
            else:
                errors.append(f"{where(number)}: \"in:\" takes only \"checkout\"")
        else:
            run = value
    return not_run, shows, run, in_checkout, errors


def readme_examples(path, source="README.md"):
    """(examples, errors) of a Markdown file: every fenced block, with its markers."""
    with open(path) as f:
        lines = f.read().splitlines()
    examples, errors = [], []
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\S*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        start, lang = i, fence.group(1)
        end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == "```"), None)
        if end is None:
            errors.append(f"{source}:{start + 1}: the ``` block is never closed")
            break
        before = []
        j = start - 1
        while j >= 0 and HTML_COMMENT.match(lines[j].strip()):
            before.insert(0, (j + 1, lines[j].strip()))
            j -= 1
        not_run, shows, run, in_checkout, errs = _markers(before, HTML_COMMENT, lambda n: f"{source}:{n}")
        errors += errs
        if run:
            errors.append(f"{source}:{start + 1}: README blocks say their language in the fence (```sh), not "
                          f"with \"run:\"")
        if (not_run or shows) and lang not in README_RUN:
            errors.append(f"{source}:{start + 1}: a ```{lang} block is never run: \"not run:\" and \"shows:\" are "
                          f"for ```sh and ```python blocks")
        if not_run and shows:
            errors.append(f"{source}:{start + 1}: a block that is not run shows nothing: drop \"shows:\"")
        examples.append(Example(source, start + 1, lang, "\n".join(lines[start + 1:end]) + "\n", shows, not_run,
                                in_checkout))
        i = end + 1
    return examples, errors


# roff escapes the manual pages use inside .EX, as the reader sees them.
ROFF_ESCAPES = {"\\-": "-", "\\e": "\\", "\\(aq": "'", "\\(dq": '"', "\\(ga": "`", "\\&": "", "\\(em": "\u2014",
                "\\(->": "\u2192", "\\(en": "\u2013", "\\(bu": "\u2022", "\\~": " ", "\\ ": " ", "\\(rs": "\\"}
ROFF_ESCAPE = re.compile(r"\\\[u([0-9A-Fa-f]{4,5})\]|\\\(..|\\.")


def roff_text(line, where):
    """A line of an .EX block as the reader sees it; an escape this does not know is an error (ValueError)."""
    def replace(m):
        if m.group(1):
            return chr(int(m.group(1), 16))
        if m.group(0) in ROFF_ESCAPES:
            return ROFF_ESCAPES[m.group(0)]
        raise ValueError(f"{where}: roff escape {m.group(0)} is not known to tests/integration/examples.py")
    return ROFF_ESCAPE.sub(replace, line)


def man_examples(path, source=None):
    """(examples, errors) of a manual page's EXAMPLES (or EXAMPLE) section: every .EX block."""
    source = source or os.path.relpath(path, lp.TOP)
    with open(path) as f:
        lines = f.read().splitlines()
    examples, errors = [], []
    section = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(".SH"):
            section = line[3:].strip().strip('"')
        if line.strip() != ".EX" or section not in ("EXAMPLES", "EXAMPLE"):
            i += 1
            continue
        start = i
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == ".EE"), None)
        if end is None:
            errors.append(f"{source}:{start + 1}: .EX without .EE")
            break
        before = []
        j = start - 1
        while j >= 0 and (ROFF_COMMENT.match(lines[j]) or lines[j].strip() in (".PP", ".RS", ".P", ".LP")):
            if ROFF_COMMENT.match(lines[j]):
                before.insert(0, (j + 1, lines[j]))
            j -= 1
        not_run, shows, run, in_checkout, errs = _markers(before, ROFF_COMMENT, lambda n: f"{source}:{n}")
        errors += errs
        try:
            text = "".join(roff_text(t, f"{source}:{start + 2 + k}") + "\n"
                           for k, t in enumerate(lines[start + 1:end]))
        except ValueError as e:
            errors.append(str(e))
            text = ""
        if not run and not not_run:
            errors.append(f"{source}:{start + 1}: an example needs '.\\\" run: sh|python|transcript' or "
                          f"'.\\\" not run: REASON' on the lines right before .EX")
        elif run and not_run:
            errors.append(f"{source}:{start + 1}: both \"run:\" and \"not run:\"")
        elif run and run not in ("sh", "python", "transcript"):
            errors.append(f"{source}:{start + 1}: \"run: {run}\": say sh, python or transcript")
        examples.append(Example(source, start + 1, run or "illustration", text, shows, not_run, in_checkout))
        i = end + 1
    return examples, errors


def transcript_commands(text):
    """The commands of a transcript: each "$ " line, with the lines its trailing backslashes continue."""
    commands, current = [], None
    for line in text.splitlines():
        if current is not None:
            current += "\n" + line
        elif line.startswith("$ "):
            current = line[2:]
        else:
            continue
        if not current.endswith("\\"):
            commands.append(current)
            current = None
    if current is not None:
        commands.append(current)
    return commands


def all_examples():
    """(examples, errors) of README.md and every manual page."""
    examples, errors = readme_examples(os.path.join(lp.TOP, "README.md"))
    for page in sorted(os.listdir(os.path.join(lp.TOP, "man"))):
        if re.fullmatch(r".+\.[1-8]", page):
            found, errs = man_examples(os.path.join(lp.TOP, "man", page))
            examples += found
            errors += errs
    return examples, errors


# --- the network the examples run in -----------------------------------------------------------------

# The reader's own program, for `linkprobectl inhibit ... -- python3 train.py`: it shows that the
# inhibitor is held while it runs.
TRAIN_PY = """\
import subprocess
subprocess.run(["linkprobectl", "--no-legend", "inhibitors"], check=True)
"""


# The node's links as the examples name them, (its name, the far end's, (its addresses, the far end's)):
# eth0 to 192.0.2.7, eth1 to 10.0.0.2, and thunderbolt0 (a veth: the name is what the examples use)
# with link-local addresses only, as thunderbolt-net has, to fe80::2 and fe80::7.
LINKS = [
    ("eth0", "x0", (["192.0.2.2/24", "fd00::2/64"], ["192.0.2.7/24", "fd00::7/64"])),
    ("eth1", "x1", (["10.0.0.1/24"], ["10.0.0.2/24"])),
    ("thunderbolt0", "x2", (["fe80::1/64"], ["fe80::2/64", "fe80::7/64"])),
]


class ExampleNetwork:
    """The node the examples describe: linkprobed in a network namespace with the LINKS above, veth
    pairs to a far node that runs linkprobe-responder on port 7471 of every address; PoCL's CPU device
    as its GPU (a test package). The daemon measures GPUs quickly (Quick=yes)."""

    def __init__(self):
        self.node = self.far = self.bus = self.daemon = self.responder = None
        self.dir = tempfile.mkdtemp(prefix="lp-examples-")
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self):
        self.node, self.far = lp.NetNS(), lp.NetNS()
        for mine, theirs, addresses in LINKS:
            lp.run(["ip", "link", "add", mine, "netns", self.node.name, "type", "veth", "peer", "name", theirs,
                    "netns", self.far.name])
            for ns, ifname, side in ((self.node, mine, 0), (self.far, theirs, 1)):
                for address in addresses[side]:
                    ns.ip("addr", "add", address, "dev", ifname, *(["nodad"] if ":" in address else []))
                ns.ip("link", "set", ifname, "up")
        self.responder = subprocess.Popen(self.far.exec_cmd([os.path.join(lp.BUILD, "linkprobe-responder"),
                                                             "--listen", "[::]"]),
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.bus = lp.PrivateBus()
        # As the README's [Peers] example configures it: a measured path to 192.0.2.7 from the start, so
        # that an example reading results has one whatever ran before it.
        self.daemon = lp.Daemon(self.bus, netns=self.node, gpu=True,
                                config="[Gpu]\nQuick=yes\nRandomizedDelaySec=0\n[Peers]\nAddress=192.0.2.7\n")
        lp.wait_for(self._peer_measured, 60, "the first measurement of 192.0.2.7", interval=0.2)
        with open(os.path.join(self.dir, "train.py"), "w") as f:
            f.write(TRAIN_PY)

    def _peer_measured(self):
        out = lp.ctl(self.bus, "--json", "peers").stdout
        return any(p.get("ProbeState") == "ok" for p in json.loads(out or "[]"))

    def env(self):
        env = dict(os.environ)
        env["PATH"] = lp.BUILD + os.pathsep + env.get("PATH", "/usr/bin:/bin")
        env["DBUS_SYSTEM_BUS_ADDRESS"] = self.bus.address
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        env["SYSTEMD_PAGER"] = "cat"
        env["COLUMNS"] = "200"
        return env

    def run(self, example, timeout=180):
        """Runs example; returns None when it did what it must, else what went wrong (with its output)."""
        if example.lang == "transcript":
            steps = [("sh", command, f"`{command}`") for command in transcript_commands(example.text)]
        else:
            steps = [(example.lang, example.text, "the block")]
        output = ""
        for lang, text, what in steps:
            if lang == "python":
                cmd = ["/usr/bin/python3", "-c", text]
            else:
                cmd = ["bash", "-e", "-o", "pipefail", "-c", text]
            try:
                proc = subprocess.run(self.node.exec_cmd(cmd), cwd=lp.TOP if example.in_checkout else self.dir,
                                      env=self.env(), capture_output=True,
                                      text=True, timeout=timeout)
            except subprocess.TimeoutExpired as e:
                return f"{what} did not finish within {timeout} s; its output so far:\n{_out(e.stdout, e.stderr)}"
            if proc.returncode != 0:
                return f"{what} exited with status {proc.returncode}:\n{_out(proc.stdout, proc.stderr)}"
            output += proc.stdout
        missing = [s for s in example.shows if s not in output]
        if missing:
            return (f"it ran, but its output lacks " + ", ".join(repr(s) for s in missing) + f":\n{_out(output, '')}")
        return None

    def close(self):
        if self.daemon:
            self.daemon.stop()
        if self.bus:
            self.bus.stop()
        lp.stop_process(self.responder)
        for ns in (self.node, self.far):
            if ns:
                ns.delete()
        shutil.rmtree(self.dir, ignore_errors=True)


def _out(stdout, stderr):
    def text(v):
        return v.decode(errors="replace") if isinstance(v, bytes) else (v or "")
    out = text(stdout).rstrip()
    err = text(stderr).rstrip()
    parts = [textwrap.indent(out, "  ") if out else "  (no output)"]
    if err:
        parts.append("stderr:\n" + textwrap.indent(err, "  "))
    return "\n".join(parts)
