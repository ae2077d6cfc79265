"""Shared fixtures, and the test ordering: the studio's window tests run first.

They create GLX contexts through pyglet (under Xvfb); once a process has made an EGL context
current (the offscreen rendering tests: studio render, heightfield pictures, the analysis panel),
libGL no longer finds a GLX context in it. Running the window tests before any offscreen
rendering keeps both kinds in one pytest process.
"""

import pytest

WINDOW_TEST_MODULES = {"test_studio_app.py"}


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.path.name not in WINDOW_TEST_MODULES)


@pytest.fixture(scope="session")
def ray_session():
    """One local Ray with two workers, shared by every test that needs it (Ray starts slowly)."""
    ray = pytest.importorskip("ray")
    from engine.sweep import start_ray
    start_ray(jobs=2)
    yield ray
    ray.shutdown()
