"""Shared fixtures, the test ordering (the studio's window tests run first) and the number of
test processes.

The window tests create GLX contexts through pyglet (under Xvfb); once a process has made an EGL
context current (the offscreen rendering tests: studio render, heightfield pictures, the
analysis panel), libGL no longer finds a GLX context in it. Running the window tests before any
offscreen rendering keeps both kinds in one pytest process. With pytest-xdist (``-n auto
--dist loadfile``) the window tests' module is the first one handed out, whole, to a worker.

The workers, and the processes the tests start, step models of every kind: they compile the
general kernels, not a lean variant for their first model and not in a background process
(``ENGINE_LEAN=0``, engine.jit), which would compile in each worker what the general kernels
compile anyway. tests/test_lean_kernels.py and tests/test_warmup.py test those two. With
several workers, each first compiles its share of the general kernels (warmup.compile_shared):
they would otherwise all compile the same ones at the same time.
"""
import os

os.environ.setdefault("ENGINE_LEAN", "0")

import pytest  # noqa: E402

WINDOW_TEST_MODULES = {"test_studio_app.py"}


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.path.name not in WINDOW_TEST_MODULES)


@pytest.fixture(scope="session", autouse=True)
def general_kernels():
    """With several workers: the general kernels, compiled once among them before the tests."""
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
        from engine import warmup
        warmup.compile_shared()


@pytest.fixture(scope="session")
def ray_session():
    """One local Ray with two workers, shared by every test that needs it (Ray starts slowly)."""
    ray = pytest.importorskip("ray")
    from engine.sweep import start_ray
    start_ray(jobs=2)
    yield ray
    ray.shutdown()


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: a worker per core, at most four and at most one per 5 GB of memory (each
    worker compiles the kernels its tests need and holds them, with the models, in about 4 GB)."""
    cores = len(os.sched_getaffinity(0))
    memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    return max(1, min(cores, 4, int(memory_gb // 5)))
