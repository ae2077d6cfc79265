"""The one JIT policy of the engine.

Every compiled kernel is decorated with ``jit``: nopython, cached on disk, the GIL released so
that a simulation thread never blocks the studio, and NumPy's error model (a division by zero
gives inf/nan instead of raising, which the divergence check reports). ``fastmath`` stays off:
results are compared with MuJoCo to 1e-9. No kernel gets numba's C-callable wrapper (``cfunc``):
the kernels are called from Python or from each other only, and the wrapper cost a few percent
of the compile time.

numba's cache does not notice when a kernel that another kernel calls has changed, so the cache
lives in a directory named after a digest of the engine's sources: any edit starts a fresh
cache, and every copy of the same sources (a reinstall, another checkout) uses the same cache,
wherever it lies and whatever its files' times. The base directory is ``NUMBA_CACHE_DIR`` if
set, else ``~/.cache/engine-numba``. Only the engine's own kernels are cached there (a cache
locator that recognises the engine's source files); other numba code in the same process keeps
numba's usual cache places.
Set ``ENGINE_JIT=0`` to run the kernels as plain Python (slow; for debugging only).

A process compiles lean variants of the step for its first model (forward.kernels), on a cold
cache in two background processes, while its own kernels run as plain Python (``twin``: a
kernel's code with the kernels it calls bound to their twins; warmup). Set ``ENGINE_LEAN=0`` in
a process that steps models of many kinds, such as a test suite's workers: it then compiles
the general kernels only (the same results, bit for bit), once, and starts no background
process.

LLVM optimizes at level 1 unless ``NUMBA_OPT`` says otherwise: the kernels are short loops over
small arrays that level 3 does not make measurably faster (benchmarks/smooth.py and contact.py
agree within their noise), while it costs about a sixth more compile time. numba has no
per-function optimization level (one code generator serves every function of the process), so
this setting applies to all numba code compiled in a process that imports the engine; set
``NUMBA_OPT`` explicitly to choose another level for everything.

A kernel called from another kernel is compiled for the types of its arguments with literal
values made plain: by default numba compiles a separate copy of the callee for every distinct
constant argument (``_add_row(..., EQUALITY, ..., False)`` and ``_add_row(..., LIMIT_JOINT, ...,
True)`` would be two functions), which multiplied the engine's compile time.

Machine code is made only for kernels called from Python (or compiled by name): a kernel compiled
because another kernel calls it is optimized and linked into its callers, whose machine code
holds it, and is cached as bitcode; its own machine code is made if Python calls it (_Deferred).
numba made machine code for every kernel it compiled, each with all its callees again: a sixth
of a first step's compile time went to code that nothing ran.

numba's inliner (``inlined`` kernels) copies a callee's IR block by block, each block copying
the callee's every variable again; importing the engine makes it copy each IR once
(_InlineCopy), which took about a tenth off the compile time of a first step (most of it in
PGS).
"""
import contextlib
import copy
import hashlib
import importlib.abc
import importlib.util
import os
import pathlib
import sys
import threading
import time
import types as pytypes

from numba import njit, types
from numba.core import caching, codegen, config, errors, ir, sigutils
from numba.core import cpu as _cpu
from numba.core.compiler_lock import global_compiler_lock

try:
    import fcntl
except ImportError:       # no file locks: every process compiles what it needs
    fcntl = None

ENABLED = os.environ.get("ENGINE_JIT", "1") != "0"
LEAN = os.environ.get("ENGINE_LEAN", "1") != "0"
_ENGINE_DIR = pathlib.Path(__file__).resolve().parent


def cache_dir():
    sources = sorted(_ENGINE_DIR.glob("*.py"))
    digest = hashlib.sha1(b"".join(p.read_bytes() for p in sources)).hexdigest()[:16]
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "engine-numba")
    return os.path.join(base, digest)


KEEP_CACHES = 8             # digests of other sources kept by prune_caches
KEEP_SECONDS = 3600.0       # ... and any used within this time


def prune_caches(keep=KEEP_CACHES, keep_seconds=KEEP_SECONDS):
    """Delete the caches of other engine sources (sibling digest directories) but the `keep`
    most recently written and those written within `keep_seconds`; returns the deleted paths.

    Every edit of the engine starts a new cache of several hundred megabytes (each kernel's
    file holds the machine code of all the kernels it calls), which nothing else removes. A
    process still using a deleted cache only compiles again: numba recreates the directory
    when it saves a kernel."""
    import shutil
    import time

    current = cache_dir()
    base = os.path.dirname(current)
    found = []
    for name in os.listdir(base) if os.path.isdir(base) else ():
        path = os.path.join(base, name)
        if (path == current or len(name) != 16 or not os.path.isdir(path)
                or any(c not in "0123456789abcdef" for c in name)):
            continue
        # the digest directory's own time and that of its kernels' directory, written by saves
        written = max([os.path.getmtime(path)] + [e.stat().st_mtime for e in os.scandir(path)])
        found.append((written, path))
    found.sort(reverse=True)
    now = time.time()
    deleted = [path for k, (written, path) in enumerate(found)
               if k >= keep and now - written > keep_seconds]
    for path in deleted:
        shutil.rmtree(path, ignore_errors=True)
    return deleted


class _EngineCacheLocator(caching.UserProvidedCacheLocator):
    """Where numba caches a kernel defined in the engine's own modules: cache_dir(), the same
    for every copy of the same sources. numba's own locators key a kernel's cache on the path
    of its source file and check the file's modification time: a reinstall, a second checkout or
    a fresh clone of the same engine compiled everything again."""

    _root = cache_dir()

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._cache_path = os.path.join(self._root, "engine")

    def get_source_stamp(self):
        """The sources' digest (the cache directory's name) instead of the file's time and size:
        the cached kernels are stale exactly when the sources differ."""
        return os.path.basename(self._root)

    @classmethod
    def from_function(cls, py_func, py_file):
        if pathlib.Path(py_file).resolve().parent != _ENGINE_DIR:
            return None      # not an engine kernel: numba's other locators decide
        return super(caching.UserProvidedCacheLocator, cls).from_function(py_func, py_file)


class _InlineCopy:
    """The ``copy`` module as numba's inliner sees it, with the blocks of one IR copied with
    one memo.

    numba compiles a kernel marked inline="always" into each caller by copying the callee's IR
    (twice per call site), block by block, each block with a deepcopy of its own. A block
    holds its function's scope, which holds every variable of the function, so each block
    copied all of them again: the copy cost blocks x variables, which for the row products
    inlined into PGS's sweeps (and the helpers inlined into them) was most of pgs_from's compile
    time. With one memo per IR (the blocks of an IR share its scope) the copy is linear and the
    result the same as the IR it copies: one scope, each variable one object."""

    def __init__(self):
        self.memos = {}

    def deepcopy(self, x, memo=None):
        if memo is None and isinstance(x, ir.Block):
            memo = self.memos.setdefault(id(x.scope), {})
        return copy.deepcopy(x, memo)

    def __getattr__(self, name):
        return getattr(copy, name)


def _share_inline_copies(inliner):
    """Install _InlineCopy in numba's inliner (the module ``inliner``), its memos kept for one
    inlining only (the IR copied may change afterwards)."""
    inline_ir = inliner.InlineWorker.inline_ir
    if getattr(inline_ir, "_engine_shared_copies", False):
        return
    shim = _InlineCopy()

    def inline_ir_shared(self, *args, **kwargs):
        shim.memos.clear()
        try:
            return inline_ir(self, *args, **kwargs)
        finally:
            shim.memos.clear()

    inline_ir_shared._engine_shared_copies = True
    inliner.copy = shim
    inliner.InlineWorker.inline_ir = inline_ir_shared


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls then(module) when the module ``name`` has been imported: numba imports its inliner
    (and with it its parallel-loop machinery, a tenth of a second) at the first compilation,
    not when the engine is imported."""

    def __init__(self, name, then):
        self.name = name
        self.then = then

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        exec_module = spec.loader.exec_module

        def exec_then(module):
            exec_module(module)
            self.then(module)

        spec.loader.exec_module = exec_then
        return spec


def _when_imported(name, then):
    """then(module) now if the module ``name`` is imported, else once it is."""
    if name in sys.modules:
        then(sys.modules[name])
    else:
        sys.meta_path.insert(0, _AfterImport(name, then))


if "NUMBA_OPT" not in os.environ:
    os.environ["NUMBA_OPT"] = "1"
    config.reload_config()
if _EngineCacheLocator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, _EngineCacheLocator)
_when_imported("numba.core.inline_closurecall", _share_inline_copies)


class _PlainMessages(errors._DummyColorScheme):
    """numba's error messages without terminal colours. With colorama installed numba marks up
    every message it builds, and typing builds one for each overload it tries and rejects: the
    markup re-initialised colorama's stream wrappers each time (a few percent of a cold
    start's compile time)."""

    def code(self, msg):
        return msg

    errmsg = filename = indicate = highlight = reset = code


errors._termcolor_inst = _PlainMessages()


def _drop_llvm_lock_events():
    """Stop numba from broadcasting an event at every call into LLVM.

    numba registers callbacks on llvmlite's lock, taken by every call into LLVM's C API (about
    300 000 in a cold start), that broadcast its "numba:llvm_lock" event to one timer per
    compilation under way (a kernel's, its callee's, ...): 5-11 us a call at the nesting of the
    engine's compiles against 0.45 us without. The timers only fill the llvm_lock entry of a
    kernel's compile metadata (``get_metadata``), which then reads zero, here as for any numba
    function compiled in the process."""
    from llvmlite.binding import ffi
    lock = ffi.lib._lock
    for acquire, release in list(lock._cblist):
        if getattr(acquire, "__module__", None) == "numba.core.base":
            lock.unregister(acquire, release)


_drop_llvm_lock_events()


def _cheap_flag_keys():
    """Make numba's compile flags cheap to hash and compare, with the same results.

    Typing looks every call of a NumPy function or operator up in a cache keyed by the flags of
    the compilation (``TargetConfig``, about 40 options): each lookup hashed them and compared
    them with the key found, and both built a dict of all the options through their properties
    (a few percent of a cold start's compile time, in about 250 000 lookups). The hash depends
    only on the options' names (numba hashes the sorted keys of that dict), so it is computed
    once per class; equal explicit settings make equal flags without building the dicts."""
    from numba.core import targetconfig

    config_class = targetconfig.TargetConfig
    if getattr(config_class, "_engine_cheap_keys", False):
        return
    hashes = {}

    def values(self):
        explicit = self._values
        return {k: explicit.get(k, option.default) for k, option in self.options.items()}

    def hash_(self):
        cls = type(self)
        h = hashes.get(cls)
        if h is None:
            h = hashes[cls] = hash(tuple(sorted(self.options)))
        return h

    def eq(self, other):
        if not isinstance(other, config_class):
            return NotImplemented
        if type(self) is type(other) and self._values == other._values:
            return True
        return values(self) == values(other)

    config_class.values, config_class.__hash__, config_class.__eq__ = values, hash_, eq
    config_class._engine_cheap_keys = True


_cheap_flag_keys()

LOCK_WAIT = 900.0      # seconds a process waits for another's compilation of a kernel
_held = set()          # the locks this process holds (its threads take them in turn)


@contextlib.contextmanager
def kernel_lock(fn, args, wait=True):
    """Hold the lock file of kernel fn for argument types args (a lock per kernel and signature
    in the cache directory), to be taken inside numba's compiler lock: yields True, once any
    other process holding it has let it go; with wait=False, yields False at once instead
    when another process holds it."""
    name = hashlib.sha1(f"{fn.__module__}:{fn.__qualname__}{args}".encode()).hexdigest()[:20]
    if fcntl is None or name in _held:    # (numba compiling it again within its compilation)
        yield True
        return
    try:
        os.makedirs(os.path.join(_EngineCacheLocator._root, "locks"), exist_ok=True)
        lock = open(os.path.join(_EngineCacheLocator._root, "locks", name), "a")
    except OSError:           # a read-only cache: nothing is shared anyway
        yield True
        return
    with lock:
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait:
                    yield False
                    return
                if time.monotonic() > deadline:
                    break     # a process stuck with the lock: compile here all the same
                time.sleep(0.05)
        _held.add(name)
        try:
            yield True        # (closing the file releases the lock)
        finally:
            _held.discard(name)


def _compile_once(dispatcher):
    """Make the processes compiling the engine at the same time (the cold start's background
    process, a test suite's workers) compile each kernel once: the first to need a kernel,
    directly or as the callee of a kernel it compiles, compiles it; another that needs it then
    waits, and loads it from the cache (numba looks there before compiling).

    Without it both processes of a cold start compiled the constraint stage with its solver,
    one from the front of its list, the other from the end (37 s of each one's 100). The lock
    is taken inside numba's compiler lock, which serialises a process's threads: the locks a
    process holds are then those of one chain of callers and callees, and as no kernel calls
    itself, two processes never wait for each other."""
    compile_ = dispatcher.compile

    def compile(sig):
        with global_compiler_lock:
            args, _ = sigutils.normalize_signature(sig)
            if tuple(args) in dispatcher.overloads:
                return compile_(sig)
            with kernel_lock(dispatcher.py_func, tuple(args)), _compiling(dispatcher):
                return compile_(sig)

    dispatcher.compile = compile


# ------------------------------------------------------------------------------------------------
# machine code only for the kernels called from Python
# ------------------------------------------------------------------------------------------------
_COMPILING = []     # the engine's kernels being compiled or loaded (callers before callees)
# numba's own versions of what this section wraps
_finalize_final_module = codegen.CPUCodeLibrary._finalize_final_module
_get_executable = _cpu.CPUContext.get_executable
_pointer_to_function = codegen.JITCodeLibrary.get_pointer_to_function
_serialize_object_code = codegen.CPUCodeLibrary.serialize_using_object_code
_unserialize_library = codegen.CPUCodeLibrary._unserialize.__func__
_set_env_address = codegen.JITCPUCodegen.set_env


@contextlib.contextmanager
def _compiling(dispatcher):
    _COMPILING.append(dispatcher)
    try:
        yield
    finally:
        _COMPILING.pop()


@contextlib.contextmanager
def callees_only():
    """Kernels compiled or loaded inside are made as callees are: without machine code until
    called from Python (for a process that compiles kernels for other kernels to call)."""
    with global_compiler_lock:
        _COMPILING.append(None)
        try:
            yield
        finally:
            _COMPILING.pop()


def _as_callee(fndesc):
    """Whether numba is making the compiled function of fndesc for a kernel that the engine
    compiles because another of its kernels calls it (not from Python, not by name), or
    within callees_only."""
    if len(_COMPILING) < 2 or _COMPILING[-1] is None:
        return False
    fn = _COMPILING[-1].py_func
    return fndesc.qualname == fn.__qualname__ and fndesc.modname == fn.__module__


class _Deferred:
    """The compiled function of a kernel compiled as the callee of another, before its machine
    code exists: the key under which numba's lowering finds the kernel's implementation for
    its callers, and, when called (from Python), the compiled function itself.

    numba links the optimized module of every kernel a kernel calls into its own, and makes
    machine code of each module it finishes: of the step's, which holds the whole pipeline, but
    also of every stage's and every helper's below it, each with its callees again (a sixth of
    a cold start's compile time, which the step's own module does not use). A callee's library
    is finished (optimized, so that callers link it) without machine code; the code is made
    when a kernel is called from Python or its machine code is asked for otherwise, and the
    disk cache keeps such a kernel as bitcode until then."""

    def __init__(self, context, library, fndesc, env):
        self.context, self.library, self.fndesc, self.env = context, library, fndesc, env
        self.cfunc = None
        self.owner = None            # (dispatcher, compile result) once the dispatcher has it

    def materialize(self):
        """The compiled function (its machine code made now if need be); the dispatcher then
        calls it directly and the disk cache holds it as machine code."""
        with global_compiler_lock:
            if self.cfunc is None:
                _make_machine_code(self.library)
                self.cfunc = _get_executable(self.context, self.library, self.fndesc, self.env)
                if self.owner is not None:
                    dispatcher, cres = self.owner
                    dispatcher._insert([a._code for a in cres.signature.args], self.cfunc,
                                       cres.objectmode)
                    try:                 # (a cache that cannot be written: loaded as bitcode)
                        dispatcher._cache.save_overload(tuple(cres.signature.args), cres)
                    except OSError:
                        pass
        return self.cfunc

    def __call__(self, *args, **kws):
        return self.materialize()(*args, **kws)


def machine_code(entry):
    """entry (a compile result's entry_point) as a function that runs compiled code."""
    return entry.materialize() if isinstance(entry, _Deferred) else entry


def _set_environments(library):
    """Point the environment globals that library's module references at their environments,
    as numba does for a kernel loaded from the cache: a callee without machine code of its own
    did not set those of its code linked into its callers."""
    from numba.core.environment import lookup_environment
    for gv in library._final_module.global_variables:
        if gv.name.startswith("_ZN08NumbaEnv"):
            env = lookup_environment(gv.name)
            if env is not None:
                library.codegen.set_env(gv.name, env)


def _make_machine_code(library):
    """Give a library finished without machine code its machine code (numba's last step)."""
    if getattr(library, "_engine_deferred", False):
        library._engine_deferred = library._engine_defer = False
        library._finalized = False
        library._dynamic_globals = []               # (found again)
        if not library._object_caching_enabled:     # (loaded as bitcode) keep the object code
            library.enable_object_caching()
        _finalize_final_module(library)
        _set_environments(library)


def _deferring_finalize(library):
    if getattr(library, "_engine_defer", False):
        library._finalize_dynamic_globals()        # (what numba's cache checks)
        library._verify_declare_only_symbols()
        library._engine_deferred = True
        library._finalized = True
        return
    _finalize_final_module(library)


def _get_executable_deferred(context, library, fndesc, env):
    if getattr(library, "_engine_deferred", False):
        return _Deferred(context, library, fndesc, env)
    if not library._finalized and _as_callee(fndesc):
        library._engine_defer = True
        library._ensure_finalized()
        return _Deferred(context, library, fndesc, env)
    cfunc = _get_executable(context, library, fndesc, env)
    _set_environments(library)
    return cfunc


def _pointer_with_code(library, name):
    _make_machine_code(library)
    return _pointer_to_function(library, name)


def _serialize(library):
    """A library without machine code is cached as its optimized bitcode."""
    if getattr(library, "_engine_deferred", False):
        return (library.name, "bitcode", library._final_module.as_bitcode())
    return _serialize_object_code(library)


def _unserialize(cls, codegen_, state):
    """A kernel cached as bitcode, loaded as the callee of a kernel being compiled, stays
    without machine code."""
    name, kind, data = state
    if kind == "bitcode" and len(_COMPILING) >= 2:
        library = codegen_.create_library(name)
        library._final_module = codegen.ll.parse_bitcode(data)
        library._engine_defer = True
        library._finalize_final_module()
        return library
    return _unserialize_library(cls, codegen_, state)


def _set_env(codegen_, env_name, env):
    """numba's set_env, but not for a global that no module with machine code defines yet."""
    if codegen_._engine.get_global_value_address(env_name):
        _set_env_address(codegen_, env_name, env)


if not getattr(codegen.CPUCodeLibrary, "_engine_deferring", False):   # (once per process)
    codegen.CPUCodeLibrary._engine_deferring = True
    codegen.CPUCodeLibrary._finalize_final_module = _deferring_finalize
    codegen.CPUCodeLibrary.serialize_using_object_code = _serialize
    codegen.CPUCodeLibrary._unserialize = classmethod(_unserialize)
    codegen.JITCodeLibrary.get_pointer_to_function = _pointer_with_code
    codegen.JITCPUCodegen.set_env = _set_env
    _cpu.CPUContext.get_executable = _get_executable_deferred


def _keep_deferred_out_of_dispatch(dispatcher):
    """numba's dispatcher calls the compiled functions it holds as C functions: a _Deferred one
    is held only as the compile result (for typing and lowering its callers) until it has
    machine code."""
    add_overload = dispatcher.add_overload

    def add(cres):
        if isinstance(cres.entry_point, _Deferred):
            cres.entry_point.owner = (dispatcher, cres)
            dispatcher.overloads[tuple(cres.signature.args)] = cres
        else:
            add_overload(cres)

    dispatcher.add_overload = add


def jit(fn):
    """Compile ``fn`` with the engine's policy."""
    if not ENABLED:
        return fn
    dispatcher = njit(cache=True, nogil=True, error_model="numpy", no_cfunc_wrapper=True)(fn)
    _compile_once(dispatcher)
    _keep_deferred_out_of_dispatch(dispatcher)
    _interpret_when_cold(dispatcher)
    typed_call = dispatcher.get_call_template

    def get_call_template(args, kws):
        """Typing of a call from compiled code: one compilation per plain signature."""
        return typed_call(tuple(types.unliteral(a) for a in args),
                          {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


# the kernels of calls_stages (numba's library names: their qualified names, variants included)
_STAGE_CALLERS = set()


def calls_stages(fn):
    """jit, for a kernel whose own code mostly calls other kernels (the step calls the stages,
    a stage its parts): its compiled module is not optimized again once its callees' modules are
    linked in.

    numba links the module of every kernel a kernel calls into its own, then runs LLVM's
    module passes over the whole: the callees, already optimized in their own modules, once
    more at each level above them. The step kernel re-optimized the whole engine below it
    (13 s of CPU of a cold start against 6.6 s without, benchmarks/cold_start.py). Its own code
    is still optimized function by function (numba's function passes, as for every kernel);
    only the inlining of small callees into it is lost, which a caller of whole stages does not
    miss (the humanoid's step took the same time either way). numba names a library by the
    function's qualified name, so a function of another package with the same name would be
    compiled alike."""
    dispatcher = jit(fn)
    _STAGE_CALLERS.add(fn.__qualname__)
    return dispatcher


def _optimize_final_module(library, _optimize=codegen.CPUCodeLibrary._optimize_final_module):
    if library.name not in _STAGE_CALLERS:
        _optimize(library)


codegen.CPUCodeLibrary._optimize_final_module = _optimize_final_module


def variant(kernel, tag, **names):
    """A copy of ``kernel`` in which the module-level ``names`` are bound to other objects (other
    kernels, usually leaner ones; its calls ``module.name(...)`` reach a variant of
    ``module.name`` in names too), compiled and cached apart under the name ``<kernel>__<tag>``
    (or compiled into its callers if the kernel is ``inlined``).

    numba compiles a kernel together with every kernel it can call: a branch taken only for
    another integrator or solver costs compile time all the same. A variant that calls a kernel
    with only one branch compiled in costs only what that branch needs."""
    fn = getattr(kernel, "py_func", kernel)
    if not set(names) & set(fn.__code__.co_names):
        return kernel                 # calls none of them: the kernel itself serves
    glb = dict(fn.__globals__)
    for name, value in glb.items():
        if isinstance(value, pytypes.ModuleType):
            glb[name] = _module_view(value, names)
    glb.update((n, k) for n, k in names.items() if not isinstance(glb.get(n), pytypes.ModuleType))
    copy = pytypes.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__qualname__ = f"{fn.__qualname__}__{tag}"
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    if not ENABLED:
        return copy
    if getattr(kernel, "targetoptions", {}).get("inline") == "always":
        return inlined(copy)
    if fn.__qualname__ in _STAGE_CALLERS:
        return calls_stages(copy)
    return jit(copy)


def _module_view(module, names):
    """module, or a copy of it in which the kernels that names holds variants of are bound to
    those variants: so that a variant's calls ``module.name(...)`` reach them too."""
    def code(k):
        return getattr(getattr(k, "py_func", k), "__code__", None)
    bound = {n: k for n, k in names.items()
             if code(k) is not None and code(getattr(module, n, None)) is code(k)}
    if not bound:
        return module
    view = pytypes.ModuleType(module.__name__, module.__doc__)
    view.__dict__.update(module.__dict__)
    view.__dict__.update(bound)
    return view


def inlined(fn):
    """Compile ``fn`` into its caller instead of as a kernel of its own.

    For the integrators, each called from the step kernel only: numba optimizes every kernel
    together with all the kernels it calls, so an integrator compiled on its own would optimize
    the whole forward pipeline once more."""
    if not ENABLED:
        return fn
    dispatcher = njit(inline="always", nogil=True, error_model="numpy", no_cfunc_wrapper=True)(fn)
    _interpret_when_cold(dispatcher)
    return dispatcher


# ------------------------------------------------------------------------------------------------
# the kernels as plain Python while a cold cache compiles
# ------------------------------------------------------------------------------------------------
def interpreting():
    """Whether kernels that are not in the cache run as plain Python instead of compiling here
    (set by warmup: while the background processes compile a cold cache)."""
    return False


def on_disk(kernel):
    """Whether numba's cache holds kernel compiled for this machine (by any process since the
    engine's sources last changed): calling it then loads it in about a second."""
    try:
        index = kernel._cache._cache_file._load_index()
        magic = kernel.targetctx.codegen().magic_tuple()
    except Exception:                 # not a cached dispatcher (ENGINE_JIT=0), or numba changed
        return False
    return any(key[1] == magic for key in index)


def _interpret_when_cold(dispatcher):
    """Calls from Python that would compile the kernel (no compiled version for the arguments'
    types) run its plain-Python twin instead when the arguments are plain handles of a Model or
    Data (types._new_struct makes every handle plain while interpreting()), or while
    interpreting() and the cache does not hold the kernel. numba's dispatcher calls what
    ``_compile_for_args`` returns when it is not compiled code: here, the twin."""
    compile_for_args = type(dispatcher)._compile_for_args

    def _compile_for_args(*args, **kws):
        if any(isinstance(a, pytypes.SimpleNamespace) for a in args) or (
                interpreting() and not on_disk(dispatcher)):
            return twin(dispatcher)
        return machine_code(compile_for_args(dispatcher, *args, **kws))

    dispatcher._compile_for_args = _compile_for_args


_TWINS = {}                 # engine module name -> the globals of its plain-Python twin
_twins_lock = threading.RLock()


def twin(dispatcher):
    """The plain-Python twin of an engine kernel (a lean variant's twin is that of the kernel it
    varies: the same results): its code, with the kernels and engine modules it names bound to
    their twins. As ENGINE_JIT=0 runs them, in the process that also compiles them: the same
    results, bit for bit (tests/test_warmup.py), without compiling."""
    fn = dispatcher.py_func
    found = _twin_globals(fn.__module__).get(fn.__name__)
    if getattr(found, "__code__", None) is fn.__code__:
        return found
    return _twin_of(dispatcher)          # (not a global of its module under its name)


def _twin_globals(module_name):
    with _twins_lock:
        found = _TWINS.get(module_name)
        if found is not None:
            return found
        found = _TWINS[module_name] = {}      # registered first: modules import each other
        found.update((k, _twin_of(v)) for k, v in vars(sys.modules[module_name]).items())
        return found


def _is_engine(name):
    return name == __package__ or name.startswith(__package__ + ".")


def _twin_of(value):
    fn = getattr(value, "py_func", None)
    if fn is not None and hasattr(value, "targetoptions") and _is_engine(fn.__module__):
        # a kernel of this module, or one it imported: its code over its own module's twin
        twin_fn = pytypes.FunctionType(fn.__code__, _twin_globals(fn.__module__), fn.__name__,
                                       fn.__defaults__, fn.__closure__)
        twin_fn.__qualname__ = fn.__qualname__
        return twin_fn
    if isinstance(value, pytypes.ModuleType) and _is_engine(value.__name__):
        return _TwinModule(value.__name__)
    return value


class _TwinModule:
    """An engine module as its twins see it: its kernels' twins, its other names as they are."""

    def __init__(self, name):
        self.__name__ = name

    def __getattr__(self, attr):
        return _twin_globals(self.__name__)[attr]
