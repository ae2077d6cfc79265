"""The interactive studio: loads a model, simulates it at real-time pace and draws it with OpenGL.

Run ``python -m studio --help`` for the command line.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = ROOT / "assets" / "scene.xml"
