"""The interactive studio: loads a model, simulates it at real-time pace and draws it with OpenGL.

Run ``python -m studio --help`` for the command line.

The shader programs and the shipped models live in the repository's ``shaders/`` and
``assets/``; ``studio/shaders`` and ``studio/assets`` link to them, so that an installed
package (``pip install .``: package data) carries copies inside ``studio/``. ``data_dir`` finds
them in either place.
"""
from pathlib import Path


def data_dir(name: str) -> Path:
    """``shaders`` or ``assets``: inside the package (installed, or the links of a checkout),
    else beside it in the source tree (a checkout whose links were not made)."""
    here = Path(__file__).resolve().parent
    for d in (here / name, here.parent / name):
        if d.is_dir():
            return d.resolve()
    raise FileNotFoundError(f"the studio's {name}/ directory is missing (looked in {here} and "
                            f"{here.parent}); reinstall the package")


SHADER_DIR = data_dir("shaders")
ASSET_DIR = data_dir("assets")
DEFAULT_MODEL = ASSET_DIR / "scene.xml"
