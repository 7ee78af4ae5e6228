"""The link names torch's libraries through empty stand-ins (verify/build/link_stubs.py): which
flags are rewritten and which are not, the stubs' SONAMEs, the cache, and the builder's
second link with torch's flags when one with stubs fails. The real builds in
test_inline_build.py and test_slim_units.py link this way and import the result."""

from __future__ import annotations

import os
import subprocess

import pytest

from kernelmill.verify.build.buildcache import BuildCache
from kernelmill.verify.build.link_stubs import LinkStubs, library_facts, strict


def _torch_ldflags(extra=()):
    from kernelmill.verify.build.inline_build import torch_flags

    return torch_flags("km_x", False, [], [], list(extra), [])["ldflags"]


def _torch_lib():
    import torch.utils.cpp_extension as ce

    return ce.TORCH_LIB_PATH


def test_library_facts_read_soname_and_versions():
    soname, versioned = library_facts(os.path.join(_torch_lib(), "libc10.so"))
    assert soname == "libc10.so" and versioned is False
    # libstdc++ carries real symbol versions (GLIBCXX_3.4...): never stubbed
    libstdcxx = subprocess.run(["c++", "-print-file-name=libstdc++.so.6"], capture_output=True,
                               text=True).stdout.strip()
    assert library_facts(os.path.realpath(libstdcxx))[1] is True
    assert library_facts("/nonexistent/libnothing.so") is None


def test_torchs_libraries_become_stubs_with_their_sonames(tmp_path):
    ld = _torch_ldflags(["-lm"])
    out = LinkStubs(BuildCache(tmp_path)).ldflags(ld, ["c++"])
    assert out is not None and "-lm" in out and f"-L{_torch_lib()}" in out
    stubs = [f for f in out if f.endswith(".so")]
    names = [f[2:] for f in ld if f.startswith("-l") and f != "-lm"]
    assert sorted(os.path.basename(s) for s in stubs) == sorted(f"lib{n}.so" for n in names)
    for s in stubs:  # each stub: the real library's SONAME, no symbols of its own, passed --no-as-needed
        real = os.path.join(_torch_lib(), os.path.basename(s))
        assert library_facts(s) == (library_facts(real)[0], False)
        defined = subprocess.run(["nm", "-D", "--defined-only", s], capture_output=True, text=True).stdout
        assert defined.strip() == ""
        i = out.index(s)
        assert out[i - 1] == "-Wl,--push-state,--no-as-needed" and out[i + 1] == "-Wl,--pop-state"
    assert not any(f in out for f in (f"-l{n}" for n in names))


def test_stubs_are_made_once_per_cache(tmp_path, monkeypatch):
    first = LinkStubs(BuildCache(tmp_path)).ldflags(_torch_ldflags(), ["c++"])
    import kernelmill.verify.build.link_stubs as ls

    monkeypatch.setattr(ls, "library_facts", lambda path: pytest.fail("a cached stub was made again"))
    assert LinkStubs(BuildCache(tmp_path)).ldflags(_torch_ldflags(), ["c++"]) == first


def test_what_keeps_torchs_real_libraries(tmp_path, monkeypatch):
    # flags that want every reference resolved at link time
    for strict_flag in ("-Wl,--no-undefined", "-Wl,-z,defs"):
        assert strict([strict_flag]) and LinkStubs(BuildCache(tmp_path)).ldflags(_torch_ldflags([strict_flag]), ["c++"]) is None
    assert not strict(["-Wl,-rpath,/x", "-lm", "-fopenmp"])
    # a user folder with its own libc10.so comes first: ld would take that one
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "libc10.so").write_bytes(b"")
    out = LinkStubs(BuildCache(tmp_path / "c1")).ldflags(_torch_ldflags([f"-L{shadow}"]), ["c++"])
    assert "-lc10" in out and "-ltorch_cpu" not in out
    # a library with symbol versions beyond its base one: the references would lose them
    import kernelmill.verify.build.link_stubs as ls

    monkeypatch.setattr(ls, "library_facts", lambda path: ("libwhatever.so", True))
    assert LinkStubs(BuildCache(tmp_path / "c2")).ldflags(_torch_ldflags(), ["c++"]) is None


FLAGS = {"cxx": "c++", "cflags": ["-DTORCH_EXTENSION_NAME=ext_st", "-std=c++17"], "post_cflags": ["-fPIC"],
         "ldflags": None}


def test_a_failed_link_with_stubs_links_again_with_torchs_flags(tmp_path, unit_compiler, monkeypatch):
    from kernelmill.verify.build import inline_build

    links = []
    fake = inline_build._run

    def run(cmd, cwd):
        if not any(c.endswith((".cpp", ".cu")) for c in cmd):
            links.append(cmd)
            if any("--push-state" in c for c in cmd):
                return 1, "ld: an old linker: unrecognized option '--push-state'"
        return fake(cmd, cwd)

    monkeypatch.setattr(inline_build, "_run", run)
    main, _ = inline_build.assemble("ext_st", "torch::Tensor twice(torch::Tensor x) { return x * 2; }", None,
                                    ["twice"])
    builder = inline_build.InlineBuilder(tmp_path)
    assert (builder.build("ext_st", main, None, {**FLAGS, "ldflags": _torch_ldflags()}) / "ext_st.so").exists()
    assert len(links) == 2 and links[1][links[1].index("-o") - len(_torch_ldflags()):links[1].index("-o")] == _torch_ldflags()
    assert builder.log["link_stubs"] is False and "--push-state" in builder.log["link_stubs_error"]
    # with stubs that link: one link, logged
    links.clear()
    monkeypatch.setattr(inline_build, "_run", lambda cmd, cwd: (links.append(cmd), fake(cmd, cwd))[1])
    again = inline_build.InlineBuilder(tmp_path / "c2")
    again.build("ext_st", main, None, {**FLAGS, "ldflags": _torch_ldflags()})
    assert again.log["link_stubs"] is True
    assert sum(1 for c in links if not any(x.endswith((".cpp", ".cu")) for x in c)) == 1


def test_a_failure_making_stubs_keeps_torchs_link(tmp_path, unit_compiler, monkeypatch):
    from kernelmill.verify.build import inline_build, link_stubs

    def broken(self, ldflags, cxx):
        raise OSError("read-only cache")

    monkeypatch.setattr(link_stubs.LinkStubs, "ldflags", broken)
    main, _ = inline_build.assemble("ext_st", "torch::Tensor twice(torch::Tensor x) { return x * 2; }", None,
                                    ["twice"])
    builder = inline_build.InlineBuilder(tmp_path)
    assert (builder.build("ext_st", main, None, {**FLAGS, "ldflags": _torch_ldflags()}) / "ext_st.so").exists()
    assert builder.log["link_stubs"] is False and "read-only cache" in builder.log["link_stubs_error"]
