"""What the studio remembers between sessions: the folder the file browser was last in and the
output folder (screenshots, videos, recordings, printed model and data). A small JSON file in
``$STUDIO_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/engine-studio``, else ``~/.config/engine-studio``;
an unreadable or unwritable file is ignored (the studio works without it)."""
from __future__ import annotations

import json
import os
from pathlib import Path

DEFAULT_OUTPUT = Path.home() / "studio-output"


def _file() -> Path:
    base = os.environ.get("STUDIO_CONFIG_DIR") or os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config"),
        "engine-studio")
    return Path(base) / "settings.json"


def load() -> dict:
    try:
        data = json.loads(_file().read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def save(**values) -> None:
    """Update the stored values (None removes a key)."""
    data = load()
    for k, v in values.items():
        if v is None:
            data.pop(k, None)
        else:
            data[k] = str(v) if isinstance(v, Path) else v
    try:
        f = _file()
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(data, indent=1))
    except OSError:
        pass


def folder(key: str, default: Path) -> Path:
    """A stored folder that still exists, else ``default``."""
    p = load().get(key)
    return Path(p) if p and Path(p).is_dir() else Path(default)
