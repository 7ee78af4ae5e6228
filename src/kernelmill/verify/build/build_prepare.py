"""Building the precompiled torch headers before the first candidate needs them.

Every g++ unit of a ``load_inline`` build includes ``torch/extension.h``;
with a precompiled header it costs about 40% of a plain compile (measured in
docs/verify_scale.md). Left to the builder, the header is built lazily, the
second time a flag set is seen, and the candidate that builds it waits for it
(26 s on the H200 machine). A verification run with enough compiled
candidates instead starts `prepare_pch` in a background process as it starts
(`start_background`) for the flag sets its candidates use: `flag_specs` reads
each candidate's ``load_inline`` calls without running them (``extra_cflags``
and ``extra_cuda_cflags`` given as literals, or names bound to literals in the module
or the enclosing functions, or a row of a literal table picked at run time;
``extra_include_paths`` or anything computed is left to the lazy path). The
headers are built in parallel, in the shared build cache, so they are kept
across runs and no candidate waits for one. Candidates that arrive while it
runs compile without it (the builder never waits).

Run by hand: ``python -m kernelmill.verify.build.build_prepare CACHE_DIR [--cuda]
[--specs JSON]`` (JSON: a list of ``[with_cuda, extra_cflags, extra_cuda_cflags]``).
"""

from __future__ import annotations

import ast
import json
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ...cudasrc.inline_calls import inline_calls
from . import inline_build
from .buildcache import BuildCache
from .inline_build import InlineBuilder, Unsupported, torch_flags

# an eager header costs ~2 plain compiles: worth it for a flag set this many candidates use
EAGER_MIN_CANDIDATES = int(os.environ.get("KERNELMILL_PCH_EAGER_MIN", "3"))

Spec = tuple  # (with_cuda, extra_cflags tuple, extra_cuda_cflags tuple)


def _resolve(node, names: dict):
    """The value a name stands for, through names bound to names (a table row's `cpp`
    naming a module-level string); anything else as it is."""
    for _ in range(8):
        if not (isinstance(node, ast.Name) and isinstance(names.get(node.id), ast.AST)):
            break
        node = names[node.id]
    return node


def _literal_strings(node, names: dict) -> tuple | None:
    node = _resolve(node, names)
    if isinstance(node, ast.Constant) and node.value is None:
        return ()
    if isinstance(node, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return tuple(e.value for e in node.elts)
    return None


def _module_names(tree: ast.Module) -> dict:
    return {t.id: n.value for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
            if isinstance(t, ast.Name)}


def _function_names(fn: ast.AST, outer: dict) -> dict:
    """The names a call inside function `fn` may read: `outer`'s, then the function's own
    (its parameters, and names it binds any other way than one plain assignment, hide
    the outer value and are not read: which value a call sees is not known)."""
    values: dict = {}
    bound: dict = {}
    args = fn.args
    for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if a is not None:
            bound[a.arg] = 2
    unpacked = []  # `a, b = table[key]`: read below, once every plain name is known
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and _names_of(n.targets[0]) and isinstance(
                n.value, ast.Subscript):
            unpacked.append((_names_of(n.targets[0]), n.value))
            for name in _names_of(n.targets[0]):
                bound[name] = bound.get(name, 0) + 1
            continue
        if isinstance(n, ast.Assign):
            targets, value = n.targets, n.value
        elif isinstance(n, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)):
            targets, value = [n.target], None
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            targets, value = [i.optional_vars for i in n.items if i.optional_vars is not None], None
        else:
            continue
        for t in targets:
            if isinstance(t, ast.Name) and value is not None:
                bound[t.id] = bound.get(t.id, 0) + 1
                values[t.id] = value
            else:
                for name in ast.walk(t):
                    if isinstance(name, ast.Name):
                        bound[name.id] = 2
    names = {k: v for k, v in outer.items() if k not in bound}
    names.update({k: values[k] for k, count in bound.items() if count == 1 and k in values})
    for group, (targets, sub) in enumerate(unpacked):
        # a table of extensions picked at run time (LLM candidates that build several lazily):
        # every row is an alternative, the names of one row kept together
        table = names.get(sub.value.id) if isinstance(sub.value, ast.Name) else sub.value
        rows = table.values if isinstance(table, ast.Dict) else []
        if rows and all(isinstance(r, (ast.Tuple, ast.List)) and len(r.elts) == len(targets) for r in rows) and all(
                bound[t] == 1 for t in targets):
            for i, t in enumerate(targets):
                names[t] = _Alternatives((id(fn), group), [r.elts[i] for r in rows])
    return names


class _Alternatives:
    """A name bound to one of several values, chosen at run time (one per table row);
    names of one `group` take the same row."""

    def __init__(self, group: tuple, values: list):
        self.group, self.values = group, values


def _names_of(target) -> list[str] | None:
    """The names of a tuple target `a, b, c` (None for anything else)."""
    if isinstance(target, (ast.Tuple, ast.List)) and target.elts and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts]
    return None


def _alternatives(kw: dict, names: dict) -> list[dict]:
    """The names a call may see, one dict per table row its arguments read (one dict when
    they read none); rows of different tables are not combined: those names stay unread."""
    groups = {}
    for node in kw.values():
        for n in ast.walk(node):
            v = names.get(n.id) if isinstance(n, ast.Name) else None
            if isinstance(v, _Alternatives):
                groups.setdefault(v.group, len(v.values))
    if len(groups) != 1:
        return [names]
    (group, rows), = groups.items()
    return [{k: (v.values[i] if isinstance(v, _Alternatives) and v.group == group else v) for k, v in names.items()}
            for i in range(rows)]


def _load_inline_calls(code: str, positional: int):
    """(the arguments by name of each ``load_inline`` call with at most `positional`
    positional arguments, named as load_inline names them; the names its arguments
    may refer to: the module's top-level names and, for a call inside a function (LLM
    candidates build in ``__init__`` or ``forward`` from local strings), that function's)
    in `code`; calls with ``**kwargs`` or include folders are left out."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    module = _module_names(tree)
    calls = []
    for found in inline_calls(tree):
        if found.call.args[positional:] or found.star_kwargs or found.arguments.get("extra_include_paths") is not None:
            continue
        names = module
        for scope in found.scopes:  # the names a call inside functions sees, innermost last
            names = _function_names(scope, names)
        calls += [(dict(found.arguments), n) for n in _alternatives(dict(found.arguments), names)]
    return calls


def flag_specs(code: str) -> list[Spec]:
    """The flag sets of the ``load_inline`` calls in `code`, read without running it;
    calls whose flags are not literals (or that add include folders) are left out."""
    specs = []
    for kw, names in _load_inline_calls(code, 3):
        cuda = kw.get("cuda_sources")
        with_cuda = cuda is not None and not (isinstance(cuda, ast.Constant) and cuda.value is None)
        cflags = _literal_strings(kw.get("extra_cflags", ast.Constant(None)), names)
        cuda_cflags = _literal_strings(kw.get("extra_cuda_cflags", ast.Constant(None)), names)
        if cflags is not None and cuda_cflags is not None:
            specs.append((with_cuda, cflags, cuda_cflags if with_cuda else ()))
    return specs


def _literal_text(node, names: dict) -> str | None:
    """A source given as a string literal, a name bound to one (`_resolve`), or a list of those."""
    node = _resolve(node, names)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        parts = [_literal_text(e, names) for e in node.elts]
        return None if any(p is None for p in parts) else "\n".join(parts)
    return None


def binding_specs(code: str) -> list[tuple[Spec, str]]:
    """(flag set, binding unit) of each ``load_inline(functions=...)`` call in `code` that
    the slim path builds (slim_units.py; C++ or CUDA sources), read without running it:
    the binding object depends on the bound functions' types only, so one made ahead
    serves every candidate with that signature list and flag set. Calls with anything
    computed are left out."""
    from .cuda_split import split_cuda_unit
    from .slim_units import plan

    out = []
    for kw, names in _load_inline_calls(code, 4):
        def named(arg: str, default):
            return _resolve(kw.get(arg, ast.Constant(default)), names)

        try:
            functions = ast.literal_eval(named("functions", None))
            handling = ast.literal_eval(named("with_pytorch_error_handling", True))
            implicit = ast.literal_eval(named("no_implicit_headers", False))
        except ValueError:
            continue
        cpp = _literal_text(kw.get("cpp_sources", ast.Constant(None)), names)
        cuda_node = kw.get("cuda_sources", ast.Constant(None))
        with_cuda = not (isinstance(cuda_node, ast.Constant) and cuda_node.value is None)
        cuda = _literal_text(cuda_node, names) if with_cuda else None
        cflags = _literal_strings(kw.get("extra_cflags", ast.Constant(None)), names)
        cuda_cflags = _literal_strings(kw.get("extra_cuda_cflags", ast.Constant(None)), names)
        if cpp is None or cflags is None or (with_cuda and (cuda is None or cuda_cflags is None)):
            continue  # something computed
        try:
            main_cpp, cuda_cu = inline_build.assemble("km_probe", [cpp], cuda, functions, handling, implicit)
        except ValueError:
            continue
        split = split_cuda_unit(cuda_cu) if cuda_cu is not None else None
        p = plan(main_cpp, "km_probe", split.host_unit if split is not None else None)
        if p is None:
            continue
        out.append(((with_cuda, cflags, cuda_cflags if with_cuda else ()), p.binding))
    return out


def prepare_bindings(cache_root: str | Path, bindings: list[tuple[Spec, str]]) -> dict:
    """Compile the slim path's binding objects (`binding_specs`) into the cache, each with
    its flag set's precompiled torch/extension.h where there is one; up to four at a time
    (each is one g++ process; the caller's priority is theirs)."""
    import shlex

    builder = InlineBuilder(cache_root)
    inline_build.set_fingerprint("")
    unique = dict.fromkeys(((bool(s[0]), tuple(s[1]), tuple(s[2])), t) for s, t in bindings)

    def one(item) -> str:
        (cuda, cflags, cuda_cflags), text = item
        inline_build.set_fingerprint("")  # a pool thread
        try:
            fl = torch_flags("kernelmill_pch_probe", cuda, list(cflags), list(cuda_cflags), None, None)
        except Unsupported:
            return "failed"
        kind, fname, src, cxx, shared, post, _p = inline_build.sigbind_unit(text, fl, shlex.split(fl["cxx"]))
        if builder.cache.get("obj", builder.unit_key(kind, src, cxx, shared, post)) is not None:
            return "cached"
        try:
            builder.compile_unit(kind, fname, src, cxx, shared, post, lambda: builder._pch(fl["cxx"], shared))
            return "built"
        except inline_build.CompileError as exc:
            errors.append(str(exc)[-600:])
            return "failed"

    done: dict = {"built": 0, "cached": 0, "failed": 0}
    errors: list[str] = []
    if unique:
        with ThreadPoolExecutor(max_workers=min(4, len(unique))) as pool:
            for what in pool.map(one, unique):
                done[what] += 1
    if errors:
        done["error"] = errors[0]  # the first, for whoever reads the run's log
    return done


def flag_sets(spec: Spec, merged: bool = True) -> list[tuple[str, list[str]]]:
    """(compiler, flags) of every g++ unit of a ``load_inline`` call with these flags:
    the binding unit and, with CUDA, the host unit of a split CUDA unit. `merged`
    (the builder compiles the two as one where it may: unit_merge): with CUDA, the
    host unit's set only, when the binding unit may take its flags; the binding
    unit's own header is then built only if candidates that do not merge use it
    often enough (the lazy path, inline_build._PCH_AFTER_USES)."""
    from .cuda_split import host_flags
    from .unit_merge import flags_match

    with_cuda, cflags, cuda_cflags = spec
    flags = torch_flags("kernelmill_pch_probe", with_cuda, list(cflags), list(cuda_cflags), None, None)
    sets = [(flags["cxx"], flags["cflags"])]
    if with_cuda:
        host = host_flags(flags["cuda_cflags"])
        sets = ([] if merged and flags_match(flags["cflags"], host) else sets) + [(flags["cxx"], host)]
    return sets


def default_flag_sets(with_cuda: bool, merged: bool = True) -> list[tuple[str, list[str]]]:
    return flag_sets((with_cuda, (), ()), merged)


def prepare_pch(cache_root: str | Path, specs: list[Spec], merged: bool = True, slim: bool = True) -> dict:
    """Build the precompiled headers for these flag sets (in parallel); returns
    what happened per set. Already built: nothing to do. `slim`: torch/types.h
    precompiled too, for the slim units' flag sets (slim_units.py)."""
    builder = InlineBuilder(cache_root)
    inline_build.set_fingerprint("")  # these calls have no user include folders
    sets: dict[str, tuple[str, list[str], str]] = {}
    try:
        for spec in specs:
            for cxx, fl in flag_sets(spec, merged):
                sets.setdefault(json.dumps([cxx, inline_build.unnamed(fl)]), (cxx, fl, inline_build._PCH_HEADER))
            # the slim units' torch/types.h (slim_units.py): for the binding unit's flags and,
            # with CUDA, the host unit's (the declarations compile with either)
            for cxx, fl in (flag_sets(spec, merged=False) if slim else []):
                sets.setdefault(json.dumps([cxx, inline_build.unnamed(fl), "types"]), (cxx, fl, inline_build._TYPES_HEADER))
            if inline_build._STUB_LINK:  # the link's stubs of torch's libraries (link_stubs.py), not by a build
                link = torch_flags("kernelmill_pch_probe", spec[0], list(spec[1]), list(spec[2]), None, None)
                builder.stubs.ldflags(link["ldflags"], shlex.split(link["cxx"]))
    except Unsupported as exc:
        return {"error": str(exc)}
    sets = list(sets.values())
    if not sets:
        return {"sets": []}

    def one(cs):
        t = time.perf_counter()
        path = builder._pch(cs[0], cs[1], eager=True, header=cs[2])
        return {"ready": path is not None, "seconds": round(time.perf_counter() - t, 2)}

    with ThreadPoolExecutor(max_workers=min(4, len(sets))) as pool:
        done = list(pool.map(one, sets))
    out = {"sets": done}
    if "pch_error" in builder.log:
        out["error"] = builder.log["pch_error"]
    return out


def run_specs(codes, min_uses: int = EAGER_MIN_CANDIDATES) -> list[Spec]:
    """Flag sets used by at least `min_uses` of these candidate sources."""
    counts: dict[Spec, int] = {}
    for code in codes:
        for spec in set(flag_specs(code)):
            counts[spec] = counts.get(spec, 0) + 1
    return sorted(s for s, n in counts.items() if n >= min_uses)


def start_background(cache_root: str | Path, specs: list[Spec], env: dict | None = None,
                     nice: int = 0, merged: bool = True, idle: bool = True,
                     slim: bool = True, bindings: list | None = None,
                     identifiers: bool = True) -> subprocess.Popen | None:
    """Start `prepare_pch` in its own process (not waited for; it finishes on
    its own even if the run ends first, and a kill leaves no entry), `nice`
    lower in CPU priority, as the build processes are (VerifyConfig.build_nice),
    and with `idle` on idle CPU time only (sandbox.idle_priority): the builds that
    started with the batch never use it, so it must not slow them. `bindings`: the slim
    path's binding objects to make after the headers (`binding_specs`; a build never
    waits for one being made). `identifiers=False` when `start_identifiers` makes them: then
    no process at idle priority ever holds their lock, and a build can wait for it."""
    extra = [] if identifiers else ["--no-identifiers"]
    if bindings:
        import tempfile

        try:  # a run's first build may not have made the cache folder yet
            Path(cache_root).mkdir(parents=True, exist_ok=True)
            fd, path = tempfile.mkstemp(prefix="bindings-", suffix=".json", dir=str(cache_root))
            with os.fdopen(fd, "w") as fh:
                json.dump(bindings, fh)
            extra += ["--bindings", path]
        except OSError as exc:  # the headers are still worth making
            print(f"kernelmill: the binding objects will not be made ahead: {exc}", file=sys.stderr)
    try:
        return subprocess.Popen([sys.executable, "-m", "kernelmill.verify.build.build_prepare", str(cache_root),
                                 "--specs", json.dumps(specs), "--nice", str(int(nice))]
                                + ([] if merged else ["--apart"]) + (["--idle"] if idle else [])
                                + ([] if slim else ["--no-slim"]) + extra,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                start_new_session=True)
    except OSError as exc:
        print(f"kernelmill: could not start the precompiled-header build: {exc}", file=sys.stderr)
        return None


def identifier_jobs(specs: list[Spec], arch: str) -> list[dict]:
    """What `prepare_identifiers` makes for these flag sets, worked out here: the compiler,
    its flags and the entry's key, as a build with TORCH_CUDA_ARCH_LIST `arch` keys them. For
    a caller that has imported torch already (the runner), so the process that runs the
    ``-E`` needs no torch of its own. Flag sets torch's flags cannot be read for are left out."""
    jobs = []
    env_id = inline_build._env_id(arch, fingerprint="")
    for spec in specs:
        try:
            flags = torch_flags("kernelmill_pch_probe", spec[0], list(spec[1]), list(spec[2]), None, None)
        except Unsupported:
            continue
        cflags = inline_build.unnamed(flags["cflags"])
        jobs.append({"cxx": flags["cxx"], "flags": cflags, "env": env_id,
                     "key": InlineBuilder._pch_key(flags["cxx"], cflags, env_id=env_id)})
    return jobs


def start_identifiers(cache_root: str | Path, specs: list[Spec], env: dict | None = None,
                      nice: int = 0, jobs: list[dict] | None = None) -> subprocess.Popen | None:
    """Start `prepare_identifiers` alone in its own process, `nice` lower than the caller
    (the runner gives 0: its own priority, not the builds' nor idle): one ``-E`` of the torch
    header per flag set (~1 s idle), begun before the builds, so a build that will fail finds
    them made. Made last by `start_background`'s idle process, then at the builds' nice 10, a
    cold run's failing builds waited for them and made their own (issue 40: 8.8 and 8.6 s
    median to `compile_error`, session_2026-11-30b and 30c). `jobs` (`identifier_jobs`, worked
    out by the caller): the process then imports no torch (at the run's priority it still
    took ~10 s on a cold machine, its builds waiting for it: session_2026-11-30d)."""
    # the `maker` lock, taken here and handed to the process (held until it exits): a build
    # that starts before the process has imported torch waits for its copy instead of making
    # one (InlineBuilder.header_identifiers); None when another run's process holds it
    try:
        maker = BuildCache(cache_root).try_lock_fd("idents", inline_build.IDENTS_MAKER)
    except OSError:
        maker = None
    try:
        what = ["--jobs", json.dumps(jobs), "--since", repr(time.time())] if jobs else ["--specs", json.dumps(specs)]
        return subprocess.Popen([sys.executable, "-m", "kernelmill.verify.build.build_prepare", str(cache_root),
                                 *what, "--nice", str(int(nice)), "--identifiers-only"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                start_new_session=True, pass_fds=() if maker is None else (maker,))
    except OSError as exc:
        print(f"kernelmill: could not start making the header identifiers: {exc}", file=sys.stderr)
        return None
    finally:
        if maker is not None:
            os.close(maker)  # the child's copy of the descriptor keeps the lock


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-"):
        raise SystemExit("usage: python -m kernelmill.verify.build.build_prepare CACHE_DIR [--cuda] [--specs JSON] "
                         "[--nice N] [--apart] [--idle] [--no-slim] [--bindings FILE] [--no-identifiers] "
                         "[--identifiers-only]")
    if "--specs" in argv:
        try:
            specs = [(bool(c), tuple(a), tuple(b)) for c, a, b in json.loads(argv[argv.index("--specs") + 1])]
        except (IndexError, ValueError, TypeError) as exc:
            raise SystemExit(f"--specs: expected a JSON list of [with_cuda, [cflags], [cuda_cflags]]: {exc}")
    else:
        specs = [("--cuda" in argv, (), ())]
    if "--nice" in argv:
        try:
            from ..sandbox import lower_priority

            lower_priority(int(argv[argv.index("--nice") + 1]))
        except (IndexError, ValueError):
            raise SystemExit("--nice: expected a nice increment (0-19)")
    if "--idle" in argv:
        from ..sandbox import idle_priority

        idle_priority()
    bindings = None
    if "--bindings" in argv:  # a file start_background wrote: read, then removed
        path = Path(argv[argv.index("--bindings") + 1])
        try:
            bindings = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise SystemExit(f"--bindings: {exc}")
        path.unlink(missing_ok=True)
    if "--jobs" in argv:  # start_identifiers with the caller's identifier_jobs: no torch here
        Path(argv[0]).mkdir(parents=True, exist_ok=True)
        try:
            jobs = json.loads(argv[argv.index("--jobs") + 1])
            since = float(argv[argv.index("--since") + 1]) if "--since" in argv else None
        except (IndexError, ValueError) as exc:
            raise SystemExit(f"--jobs: expected identifier_jobs' JSON list (and --since SECONDS): {exc}")
        print(json.dumps({"identifiers": make_identifier_jobs(argv[0], jobs, since)}))
        return
    if any(with_cuda for with_cuda, _a, _b in specs) or any(s[0] for s, _t in bindings or []):
        builds_arch_env()
    if "--identifiers-only" in argv:  # start_identifiers: the fail-fast check's, before anything else
        Path(argv[0]).mkdir(parents=True, exist_ok=True)
        print(json.dumps({"identifiers": prepare_identifiers(argv[0], specs)}))
        return
    out = prepare_pch(argv[0], specs, merged="--apart" not in argv, slim="--no-slim" not in argv)
    if bindings is not None:
        out["bindings"] = prepare_bindings(argv[0], bindings)
    if "--no-identifiers" not in argv:
        out["identifiers"] = prepare_identifiers(argv[0], specs)
    print(json.dumps(out))


def prepare_identifiers(cache_root: str | Path, specs: list[Spec]) -> dict:
    """The torch header's identifiers for the binding unit's flag sets, after the headers
    (fail_fast.py: a build whose binding names something nothing declares fails at once;
    without them the first such build of a flag set makes them, one ``-E``)."""
    builder = InlineBuilder(cache_root)
    inline_build.set_fingerprint("")
    done, t0 = 0, time.perf_counter()
    for spec in specs:
        try:
            flags = torch_flags("kernelmill_pch_probe", spec[0], list(spec[1]), list(spec[2]), None, None)
        except Unsupported:
            continue
        # defer=False: this process may be the maker itself (start_identifiers' lock is its own)
        done += builder.header_identifiers(flags["cxx"], flags["cflags"], defer=False) is not None
    return {"made": done, "seconds": round(time.perf_counter() - t0, 2)}


def make_identifier_jobs(cache_root: str | Path, jobs: list[dict], since: float | None = None) -> dict:
    """`prepare_identifiers` for jobs worked out by the caller (`identifier_jobs`); each entry
    records when this process began and how long its ``-E`` took (`since`: when the caller
    started it), which a build that waited for it shows (`measurement.build.idents_maker`)."""
    builder = InlineBuilder(cache_root)
    begun = time.time()
    t0 = time.perf_counter()
    unique = list({job["key"]: job for job in jobs}.values())

    def one(job: dict) -> bool:
        facts = {"started_after_s": round(begun - since, 3)} if since is not None else {}
        facts["queued_s"] = round(time.perf_counter() - t0, 3)  # waiting for a worker of this process
        return builder.identifiers_for(job["cxx"], list(job["flags"]), job["key"], job["env"], facts) is not None

    # the flag sets side by side, each its own `-E` (a thread waits on its compiler): one after
    # another, the set a cold run's failing builds needed waited 3.9 s behind the others
    # before its own 2.6 s (session_2026-11-30e: 6.5 s median to compile_error, target 5 s)
    with ThreadPoolExecutor(max_workers=max(1, min(len(unique), os.cpu_count() or 1, 4))) as pool:
        done = sum(pool.map(one, unique))
    return {"made": done, "seconds": round(time.perf_counter() - t0, 2)}


def builds_arch_env() -> None:
    """Name the visible GPUs' architectures in TORCH_CUDA_ARCH_LIST, as a verification
    run's build environment does (backends.Backend.env), unless it is set (the user's
    list, which a run's builds keep too, as torch does): a header is
    keyed by it (inline_build._env_id), and headers prepared by hand without it were
    found by no build (twelfth session: 0 of 9 builds used them, 9 of 9 with it)."""
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return
    from ..devices import cuda_devices

    arch = ";".join(sorted({d["capability"] for d in cuda_devices()}))
    if arch:
        os.environ["TORCH_CUDA_ARCH_LIST"] = arch



if __name__ == "__main__":
    main()
