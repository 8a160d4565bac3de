# SPDX-License-Identifier: LGPL-2.1-or-later
"""org.gtk.GDBus.DocString annotations for the shipped introspection XML. The daemon's own introspection
has none; systemd/interfaces/docstrings.txt holds the text, and these helpers merge it into the XML that
sd-bus writes (make update-interfaces) or strip it again to compare with the daemon (make check)."""

import os
import re
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

import lp

DOCSTRING = "org.gtk.GDBus.DocString"
DOCS_FILE = os.path.join(lp.TOP, "systemd", "interfaces", "docstrings.txt")
MEMBER_LINE = re.compile(r'^( *)<(interface|property|method|signal) name="([^"]+)"([^>]*?)(/?)>$')


def load(path=DOCS_FILE):
    """{"org.linkprobe.LinkProbe1.Link.Name": "The interface name.", ...}"""
    docs = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            name, sep, text = line.partition(": ")
            assert sep and text.strip(), f"{path}:{number}: expected 'NAME: TEXT'"
            assert name not in docs, f"{path}:{number}: {name} described twice"
            docs[name] = text.strip()
    return docs


def annotation(indent, text):
    return f'{indent} <annotation name="{DOCSTRING}" value="{escape(text, {chr(34): "&quot;"})}"/>'


def annotate(xml, docs):
    """xml (sd-bus's introspection of one interface) with a DocString first in every element that has
    a description; self-closing elements are opened for it."""
    out = []
    interface = None
    for line in xml.split("\n"):
        m = MEMBER_LINE.match(line)
        if not m:
            out.append(line)
            continue
        indent, tag, name, rest, closed = m.groups()
        if tag == "interface":
            interface = name
            full = name
        else:
            full = f"{interface}.{name}"
        text = docs.get(full)
        if text is None:
            out.append(line)
            continue
        out.append(f'{indent}<{tag} name="{name}"{rest}>')
        out.append(annotation(indent, text))
        if closed:
            out.append(f"{indent}</{tag}>")
    return "\n".join(out)


def strip(xml):
    """The XML without DocString annotations: what the daemon says."""
    return "\n".join(line for line in xml.split("\n") if f'<annotation name="{DOCSTRING}"' not in line)


def members(xml):
    """Every interface, method, property and signal in an introspection document, as full names, each
    with the DocString it carries (or None)."""
    found = {}
    root = ET.fromstring(xml.split("\n", 2)[2] if xml.startswith("<!DOCTYPE") else xml)
    for interface in root.iter("interface"):
        name = interface.get("name")
        found[name] = docstring_of(interface)
        for element in interface:
            if element.tag in ("method", "property", "signal"):
                found[f"{name}.{element.get('name')}"] = docstring_of(element)
    return found


def docstring_of(element):
    for a in element.findall("annotation"):
        if a.get("name") == DOCSTRING:
            return a.get("value")
    return None
