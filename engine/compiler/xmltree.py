"""XML reading for the MJCF compiler: a small element tree that remembers file and line.

``parse`` builds ``Node`` objects with expat, so every element knows the line of its start tag and
the file it came from (``<include>`` splices elements from other files). Attribute readers
(``Node.floats``, ``Node.keyword`` ...) raise ``ModelError`` naming file, line, element and
attribute on bad values.
"""
from __future__ import annotations

import math
import os
import re
from xml.parsers import expat

from ..types import ModelError


class Node:
    """One XML element: tag, attributes in file order, children, and where it was written."""

    __slots__ = ("tag", "attrib", "children", "line", "file", "parent")

    def __init__(self, tag, attrib, line, file, parent=None):
        self.tag = tag
        self.attrib = dict(attrib)
        self.children = []
        self.line = line
        self.file = file
        self.parent = parent

    def __repr__(self):
        return f"<{self.tag} line {self.line}>"

    # ---- errors --------------------------------------------------------------------------
    def error(self, message, attribute=None):
        return ModelError(message, file=self.file, line=self.line, element=self.tag,
                          attribute=attribute)

    # ---- attribute readers ---------------------------------------------------------------
    def has(self, name):
        return name in self.attrib

    def given(self, name):
        """Whether attribute `name` holds something: an empty or blank number is no value, as
        MuJoCo reads numbers (keywords, names and class names are checked as written)."""
        return bool(self.attrib.get(name, "").strip())

    def text(self, name, default=None):
        return self.attrib.get(name, default)

    def _numbers(self, name, conv, kind):
        raw = self.attrib[name]
        out = []
        for tok in raw.split():
            try:
                v = conv(tok)
            except ValueError:
                raise self.error(f"bad format: '{tok}' is not a valid {kind} in '{raw}'",
                                 name) from None
            if kind == "number" and not math.isfinite(v):
                raise self.error(f"'{tok}' is not a finite number", name)
            if kind == "integer" and not -2 ** 31 <= v < 2 ** 31:
                raise self.error(f"integer '{tok}' is too large (32-bit integers as MuJoCo)",
                                 name)
            out.append(v)
        return out

    def floats(self, name, n=None, exact=True, default=None, minimum=1):
        """Numbers of attribute `name`: exactly n (exact), or between `minimum` and n."""
        if not self.given(name):
            return default
        vals = self._numbers(name, _float, "number")
        if n is not None:
            if exact and len(vals) != n:
                raise self.error(f"expected {n} numbers, got {len(vals)}", name)
            if not exact and not (minimum <= len(vals) <= n):
                raise self.error(f"expected {minimum} to {n} numbers, got {len(vals)}", name)
        elif len(vals) < minimum:
            raise self.error("expected at least one number", name)
        return vals

    def float(self, name, default=None):
        if not self.given(name):
            return default
        return self.floats(name, 1)[0]

    def ints(self, name, n=None, default=None):
        if not self.given(name):
            return default
        vals = self._numbers(name, _int, "integer")
        if n is not None and len(vals) != n:
            raise self.error(f"expected {n} integers, got {len(vals)}", name)
        return vals

    def int(self, name, default=None):
        if not self.given(name):
            return default
        return self.ints(name, 1)[0]

    def keyword(self, name, choices, default=None):
        """Value of `name` looked up in `choices` (a dict keyword -> value)."""
        if name not in self.attrib:
            return default
        raw = self.attrib[name].strip()
        if raw not in choices:
            raise self.error(f"unknown value '{raw}', expected one of: {', '.join(choices)}", name)
        return choices[raw]

    def bool(self, name, default=None):
        return self.keyword(name, {"true": True, "false": False}, default)

    def check_attrs(self, allowed):
        for a in self.attrib:
            if a not in allowed:
                raise self.error(f"unknown attribute '{a}' in <{self.tag}>", a)


# numbers as MuJoCo reads them (strtod, strtol): ASCII digits, whitespace between them; no
# commas, digit-group underscores or other scripts' digits, which Python's float() would take
_FLOAT = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|0[xX][0-9a-fA-F]+"
                    r"|inf(?:inity)?|nan)", re.ASCII | re.IGNORECASE)
_INT = re.compile(r"[+-]?\d+", re.ASCII)


def _float(tok):
    if not _FLOAT.fullmatch(tok):
        raise ValueError(tok)
    return float(int(tok, 16)) if "x" in tok.lower() else float(tok)


def _int(tok):
    if not _INT.fullmatch(tok):
        raise ValueError(tok)
    return int(tok, 10)


# ----------------------------------------------------------------------------------------------
# parsing
# ----------------------------------------------------------------------------------------------
def parse_text(text, file, warn=None):
    """Parse XML text into a Node tree; malformed XML raises ModelError with the parser's line.

    Attributes written without whitespace between them (``name="a"type="box"``) are not
    well-formed XML, but MuJoCo's parser (tinyxml2) reads them, and published models have them:
    such text is read again with the missing spaces inserted, and ``warn(message)`` is told."""
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    try:
        return _parse(data, file)
    except ModelError as error:
        fixed = _ADJACENT_ATTRIBUTES.sub(rb"\1 ", data)
        if fixed == data:
            raise
        try:
            root = _parse(fixed, file)
        except ModelError:
            raise error from None
        if warn is not None:
            warn(f"{file}, line {error.line}: attributes not separated by whitespace (not "
                 "well-formed XML); read as MuJoCo reads them")
        return root


# a quoted attribute value directly followed by the next attribute's name
_ADJACENT_ATTRIBUTES = re.compile(rb"""(=\s*(?:"[^"<]*"|'[^'<]*'))(?=[A-Za-z_:])""")


def _parse(data, file):
    parser = expat.ParserCreate()
    root = []
    stack = []

    def start(tag, attrs):
        parent = stack[-1] if stack else None
        node = Node(tag, attrs, parser.CurrentLineNumber, file, parent)
        if parent is not None:
            parent.children.append(node)
        else:
            root.append(node)
        stack.append(node)

    def end(tag):
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.ordered_attributes = False
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        raise ModelError(f"malformed XML: {expat.ErrorString(e.code)} (column {e.offset + 1})",
                         file=file, line=e.lineno) from None
    except LookupError:
        raise ModelError("the XML declaration names an unknown encoding", file=file,
                         line=1) from None
    if not root:
        raise ModelError("empty XML document", file=file, line=1)
    return root[0]


class Source:
    """Where included files come from: the file system (relative to a directory) or assets."""

    def __init__(self, assets=None, model_dir=None):
        self.assets = dict(assets or {})
        self.model_dir = model_dir

    def find(self, name, directories):
        """Return (bytes, resolved name) or None. Assets are looked up by exact and base name."""
        found = self.locate(name, directories)
        if found is None or found[0] is not None:
            return found
        with open(found[1], "rb") as f:
            return f.read(), found[1]

    def locate(self, name, directories):
        """(bytes, name) of an asset, (None, path) of a file, or None; files are not read."""
        if name in self.assets:
            return _as_bytes(self.assets[name]), name
        if os.path.isabs(name):
            directories = [""]
        for d in directories:
            if d is None:
                continue
            path = name if os.path.isabs(name) else os.path.normpath(os.path.join(d, name))
            if path in self.assets:
                return _as_bytes(self.assets[path]), path
            if os.path.isfile(path):
                return None, path
        base = os.path.basename(name)
        if base in self.assets:
            return _as_bytes(self.assets[base]), base
        return None


def _as_bytes(v):
    return v.encode("utf-8") if isinstance(v, str) else bytes(v)


def expand_includes(node, source, directory, seen=None, warn=None):
    """Replace every <include file=...> below `node` by the children of the included file's root.

    As MuJoCo (xml.cc, IncludeXML): the file is looked up relative to the model file's directory
    first, then relative to the directory of the file that includes it; its root element may be
    <mujoco> or <mujocoinclude> (MuJoCo does not look at its name) and must have children; a
    file is included once per model ("already included": this also refuses cycles)."""
    seen = set() if seen is None else seen
    stack = [(node, directory)]       # iterative: a nesting of any depth is no Python recursion
    while stack:
        parent, parent_dir = stack.pop()
        todo = [(c, parent_dir) for c in reversed(parent.children)]
        children = []
        while todo:
            child, child_dir = todo.pop()
            if child.tag != "include":
                child.parent = parent
                children.append(child)
                stack.append((child, child_dir))
                continue
            child.check_attrs(("file",))
            name = child.text("file")
            if not name:
                raise child.error("missing attribute 'file'", "file")
            if child.children:
                raise child.error("<include> cannot have children")
            found = source.find(name, [source.model_dir, child_dir])
            if found is None:
                raise child.error(f"included file '{name}' not found", "file")
            data, path = found
            if path in seen:
                raise child.error(f"file '{name}' already included", "file")
            seen.add(path)
            sub = parse_text(data, path, warn)
            if not sub.children:
                raise child.error(f"included file '{name}' is empty (its root element "
                                  f"<{sub.tag}> has no children)", "file")
            sub_dir = os.path.dirname(path) if os.path.isabs(path) or os.path.exists(path) \
                else child_dir
            todo.extend((c, sub_dir) for c in reversed(sub.children))
        parent.children = children
