"""The studio's UI state, one dataclass (as simulate groups its state and imgui_bundle's demos
pass an ``AppState``): what is selected and shown, the camera choice, the view's quality
settings, the decorations' scales and the status line. The panels edit it; the frame loop
(``studio.app``) reads it. Nothing here touches the simulation."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

STATUS_SECONDS = 8.0             # a status message is shown this long


@dataclass
class UIState:
    selected_body: int | None = None
    camera_index: int = -1               # -1: the free camera, else a model camera
    tracking: bool = False               # the free camera follows the selected body
    show_help: bool = False
    show_panels: bool = True
    show_profiler: bool = False
    labels: str = "none"                 # none body geom site: names drawn at the objects
    frames: str = "none"                 # none body geom site world: coordinate axes drawn
    wireframe: bool = False
    force_scale: float = 1.0             # contact-force arrows: x scene.default_force_scale
    tendon_reference: float | None = None    # N drawn fully red (None: the model's weight)
    render_scale_setting: float | None = None   # None: auto (studio.viewport)
    msaa: int = 0
    fxaa: bool = True                    # FXAA on the 3D view (after a reduced render scale)
    keyframe: int = 0                    # the one chosen in the Simulation panel
    output_dir: Path = field(default_factory=lambda: Path.cwd())   # screenshots, videos, ...
    status: str = ""
    status_time: float = 0.0
    panel_width: float = 0.0             # the side panel's width (0: not yet laid out)

    def say(self, message: str) -> None:
        """Show ``message`` in the status line for STATUS_SECONDS."""
        self.status, self.status_time = message, time.perf_counter()

    def current_status(self) -> str:
        if self.status and time.perf_counter() - self.status_time > STATUS_SECONDS:
            self.status = ""
        return self.status
