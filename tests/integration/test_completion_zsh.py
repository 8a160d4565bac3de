# SPDX-License-Identifier: LGPL-2.1-or-later
"""zsh completion (systemd/_linkprobectl), driven the way a user drives it: an interactive zsh on a
pseudo-terminal (zsh/zpty), TAB after a command line, the offered words captured from compadd."""

import os
import re
import shutil
import subprocess

import pytest

import lp

COMPLETION_DIR = os.path.join(lp.TOP, "systemd")

CAPTURE = r"""
zmodload zsh/zpty
dir=$1 line=$2
zpty z zsh -f -i
zpty -w z "PROMPT=; RPROMPT=; unsetopt zle_bracketed_paste 2>/dev/null"
zpty -w z "fpath=($dir \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z "zstyle ':completion:*' list-grouped false; zstyle ':completion:*' menu no"
zpty -w z "compadd() { builtin compadd -O __hits \"\$@\"; local h; for h in \$__hits; do print -r -- \"<HIT>\$h\"; done; builtin compadd \"\$@\" }"
zpty -w z "print -r -- '<READY>'"
zpty -r z out '*<READY>*'
zpty -w -n z "$line"$'\t'
sleep 1
zpty -w -n z $'\C-c'
out=
while zpty -r -t z chunk 2>/dev/null; do out+=$chunk; done
print -r -- "$out"
zpty -d z
"""

pytestmark = pytest.mark.skipif(not shutil.which("zsh"), reason="zsh is not installed (make deps installs it)")


def complete(line, path=None):
    env = dict(os.environ)
    if path:
        env["PATH"] = f"{path}:{env['PATH']}"
    proc = subprocess.run(["zsh", "-f", "-c", CAPTURE, "capture", COMPLETION_DIR, line], capture_output=True,
                          text=True, env=env, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return sorted({m.strip() for m in re.findall(r"<HIT>([^<\r\n]*)", proc.stdout)})


VERBS = sorted("status list show monitor thunderbolt tree rdma gpu topo peers probe inhibit inhibitors metrics "
               "snapshot fabric health switches lldp".split())


def test_syntax():
    assert subprocess.run(["zsh", "-n", os.path.join(COMPLETION_DIR, "_linkprobectl")]).returncode == 0


@pytest.mark.parametrize("line,expected", [
    ("linkprobectl ", VERBS),
    ("linkprobectl s", ["show", "snapshot", "status", "switches"]),
    ("linkprobectl --json=", ["off", "pretty", "short"]),
    ("linkprobectl --color=", ["always", "auto", "never"]),
    ("linkprobectl inhibit --what=", ["gpu", "gpu:rdma", "rdma"]),
    ("linkprobectl --transport=", ["rdma", "tcp"]),
    ("linkprobectl probe ", ["gpu"]),
    ("linkprobectl status --j", ["--json"]),
    ("linkprobectl --no-l", ["--no-legend"]),
    ("linkprobectl fabric ", ["coordinator", "ring", "topology", "verify"]),
    ("linkprobectl fabric topology --format=", ["json", "k8s-labels", "slurm", "slurm-block"]),
    ("linkprobectl fabric ring --backend=", ["jaccl", "jaccl-ring", "ring"]),
    ("linkprobectl fabric ring --hostfile=", ["mlx"]),
])
def test_zsh_completion(line, expected):
    assert complete(line) == expected


def test_zsh_completes_link_names_from_the_daemon(tmp_path):
    # A stand-in for linkprobectl that answers `list` as the daemon would; it sees the bus options.
    fake = tmp_path / "linkprobectl"
    fake.write_text('#!/bin/sh\necho "$*" > "$(dirname "$0")/args"\n'
                    'printf "  1  lo  loopback\\n  2  eth0  ethernet\\n"\n')
    fake.chmod(0o755)
    assert complete("linkprobectl --bus-address=unix:path=/run/x show ", path=str(tmp_path)) == ["eth0", "lo"]
    assert (tmp_path / "args").read_text().split() == ["--bus-address=unix:path=/run/x", "--no-legend",
                                                       "--no-pager", "list"]
    assert complete("linkprobectl list e", path=str(tmp_path)) == ["eth0"]


def test_zsh_completion_knows_everything_linkprobectl_offers():
    help_text = subprocess.run([lp.CTL, "--help"], capture_output=True, text=True).stdout
    with open(os.path.join(COMPLETION_DIR, "_linkprobectl")) as f:
        script = f.read()
    verbs = set(re.findall(r"^  ([a-z]+)\b", help_text, re.M))
    options = set(re.findall(r"(--[a-z-]+)", help_text))
    assert verbs and options
    assert all(f"'{v}:" in script for v in verbs), sorted(v for v in verbs if f"'{v}:" not in script)
    assert all(o in script for o in options), sorted(o for o in options if o not in script)
