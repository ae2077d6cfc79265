"""Test ordering: the studio's window tests run first.

They create GLX contexts through pyglet (under Xvfb); once a process has made an EGL context
current (the offscreen rendering tests: studio render, heightfield pictures, the analysis panel),
libGL no longer finds a GLX context in it. Running the window tests before any offscreen
rendering keeps both kinds in one pytest process.
"""

WINDOW_TEST_MODULES = {"test_studio_app.py"}


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.path.name not in WINDOW_TEST_MODULES)
