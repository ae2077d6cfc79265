"""ImGui panels of the studio, one module per panel.

Every panel has ``draw(app)``; it reads the runner's published Snapshot and the Model, and
changes the simulation only through ``app.runner.submit`` / ``app.runner.set_option`` (applied
by the simulation thread between steps). Panels never step physics.
"""
