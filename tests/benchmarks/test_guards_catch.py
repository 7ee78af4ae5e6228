"""benchmarks/guards_catch.py (issue 42): every class 1-36 gathered or reported missing, names
mapped to their class, the guard level each class needs, the table's and --resume's
bookkeeping (verify stood in for), and one tiny real run on the CPU."""

from __future__ import annotations

import json
import types

import pytest

from benchmark_support import load_benchmark

G = load_benchmark("guards_catch")
HOSTILE, HONEST = G.gather()
BY_NAME = {c.name: c for c in HOSTILE + HONEST}
# classes with no hostile candidate in any corpus today: none since session 15 (22 had none
# before: its detector is a floor on the verdict's figure, tests/verify/test_kernel_time.py)
KNOWN_MISSING: set[int] = set()


def test_every_class_has_candidates_or_is_reported_missing():
    for device in ("cpu", "cuda"):
        rows, _ = G.tables(HOSTILE, HONEST, {}, device, G.CLASSES)
        assert [r["class"] for r in rows] == list(range(1, 37))
        for r in rows:
            anywhere = [c for c in HOSTILE if r["class"] in c.classes]
            assert (r["state"] == "missing") == (not anywhere), r
            assert r["candidates"] + len(r["other_device"]) == len(anywhere), r
    rows, _ = G.tables(HOSTILE, HONEST, {}, "cpu", G.CLASSES)
    state = {r["class"]: r["state"] for r in rows}
    assert {k for k, s in state.items() if s == "missing"} <= KNOWN_MISSING, state
    # the GPU corpus's own items, and the task policies (decided from what ran on a GPU)
    assert {k for k, s in state.items() if s == "not on cpu"} == {16, 19, 21, 30, 35}
    # items 1-21: two candidates each, CPU and GPU corpora together (tests/guards/test_corpus.py's rule)
    assert all(sum(k in c.classes for c in HOSTILE) >= 2 for k in range(1, 22))
    # every corpus module is gathered, the honest ones too
    assert {c.source.split(".")[0] for c in HOSTILE} == {"hostile_corpus", "gpu_hostile", "runtime_corpus",
                                                          "structure_corpus", "reference_hunters"}
    assert {c.source for c in HONEST} == {"honest", "builtin", "controls"}
    assert sum(c.source == "builtin" for c in HONEST) >= 10


def test_names_map_to_their_class():
    for c in HOSTILE:
        assert c.classes[0] == int(c.name.split("_")[0][1:]), c.name
    assert BY_NAME["i6_allclose"].classes == (6,)
    assert BY_NAME["g15_skip_unchecked"].classes == (15,) and BY_NAME["g15_skip_unchecked"].devices == ("cuda",)
    assert BY_NAME["h36_pip_at_import"].classes == (36, 26)  # spelled past the static scan too
    assert BY_NAME["h29_read_a_neighbour"].classes == (29,)
    assert BY_NAME["s32_argmax_last_of_ties"].classes == (32,)
    assert BY_NAME["i34_gelu_tanh"].classes == (34,)
    assert BY_NAME["r14_hunter_cpp"].devices == ("cpu", "cuda") and BY_NAME["r14_hunter_cuda"].devices == ("cuda",)
    assert BY_NAME["g8_triton_decoy"].code and "launch(self_dummy)" in BY_NAME["g8_triton_decoy"].code
    for bad in ("pip_at_import", "i37_x", "i0_x", "I6_x"):
        with pytest.raises(ValueError):
            G.class_of(bad)


def test_each_class_gets_the_guard_level_it_needs():
    assert BY_NAME["i34_sigmoid_clamped_at_10"].guards == "strict"
    assert BY_NAME["s32_one_pass_variance"].guards == "strict"
    assert BY_NAME["i6_allclose"].guards == "standard" and BY_NAME["i6_allclose"].policy == "flag"
    assert BY_NAME["i31_int8_matmul_in_fp16"].guards == "standard"
    policy = G._hostile("g30_cublas_in_cpp", None, "cuda", "", {"forbidden_library"}, ("cuda",), "x")
    assert policy.policy == "reject" and policy.guards == "standard"
    assert {c.guards for c in HONEST if c.source in ("honest", "builtin")} == {"strict"}
    assert BY_NAME["controls/honest_subprocess"].guards == "standard"  # as its hostile siblings


def test_class_names_come_from_the_catalogue(tmp_path):
    names = G.class_names()
    assert set(names) == set(range(1, 37))
    assert names[1].startswith("write into inputs") and names[31] == "precision dress-up"
    assert names[30] != names[35] and names[24] != names[26]  # a row of two classes, split at '; '
    assert names[23] == names[29]  # one trick for both
    doc = tmp_path / "g.md"
    doc.write_text("| # | trick | d | f | t |\n|---|---|---|---|---|\n"
                   "| 7 (issue 42) | an x clamped at \\|x\\| > 10: more | d | f | t |\n"
                   "| 8, 9 | one thing; another (detail) | d | f | t |\n| oracle | no number | d | f | t |\n")
    assert G.class_names(doc) == {7: "an x clamped at |x| > 10", 8: "one thing", 9: "another"}


def test_caught_needs_the_named_flags_and_false_flags_ignore_notes():
    c = BY_NAME["i4_cache_by_pointer"]  # a tuple of flag sets: any one of them
    assert G.caught(c, {"status": "incorrect", "flags": ["nondeterministic"]})
    assert not G.caught(c, {"status": "incorrect", "flags": ["constant_output"]})
    assert not G.caught(c, {"status": "ok", "flags": ["cached_output"]})
    assert G.caught(BY_NAME["i2_empty_like"], {"status": "runtime_error", "flags": []})  # None: not ok is the catch
    assert not G.false_flag({"status": "ok", "flags": ["timing_skipped"]})
    # the measurement's notes ride in the same list on a GPU and judge nothing (the first GPU run
    # counted them: every honest candidate "flagged", session_2026-11-30c)
    for note in ("kernelbench_host_bound", "events_disagree", "sanitizer_incomplete", "weak_task"):
        assert not G.false_flag({"status": "ok", "flags": [note]}), note
    assert G.false_flag({"status": "ok", "flags": ["decoy_kernel"]}) and G.false_flag({"status": "incorrect", "flags": []})


def test_parse_classes():
    assert G.parse_classes("1,2,22-24") == [1, 2, 22, 23, 24]
    with pytest.raises(ValueError):
        G.parse_classes("35-37")


def _verdict(name, status="ok", flags=()):
    return {"status": status, "flags": list(flags), "message": "", "key": BY_NAME[name].key("cpu")}


def test_the_table_counts_misses_pending_and_false_flags():
    verdicts = {"i1_zero_input": _verdict("i1_zero_input", "rejected", ["input_mutation"]),
                "i1_inplace_then_clone": _verdict("i1_inplace_then_clone", "incorrect"),  # not its flag
                "i2_empty_like": _verdict("i2_empty_like", "incorrect"),
                "honest/relu_clamp": _verdict("honest/relu_clamp", "ok", ["timing_skipped"]),
                "honest/relu_mask": _verdict("honest/relu_mask", "rejected", ["decoy_kernel"])}
    # class 22 without its candidates stands for a class no corpus has one of
    hostile = [c for c in HOSTILE if 22 not in c.classes]
    rows, corpora = G.tables(hostile, HONEST, verdicts, "cpu", [1, 2, 16, 22])
    r1, r2, r16, r22 = rows
    assert (r1["caught"], r1["verified"], r1["missed"], r1["state"]) == (1, 2, ["i1_inplace_then_clone"], "1/2")
    assert r2["caught"] == 1 and r2["pending"] == ["i2_empty_shape"] and len(r2["other_device"]) == 2
    assert r16["state"] == "not on cpu" and r22["state"] == "missing"
    honest = next(c for c in corpora if c["corpus"] == "honest")
    assert honest["verified"] == 2 and honest["false_flags"] == 1
    assert honest["flagged"] == ["honest/relu_mask (rejected decoy_kernel)"]
    text = G.markdown(rows, corpora, "head")
    assert "| 1 | write into inputs" in text and "i1_inplace_then_clone" in text
    assert "1/1 (1 pending)" in text and "| 16 |" in text and "not on cpu" in text and "missing" in text
    assert G.summary(rows, hostile, verdicts, "cpu") == ("2 of 3 hostile candidates caught, 2 classes run, "
                                                   "not runnable here: 16, no candidate anywhere: 22")


def test_resume_keeps_verdicts_and_verifies_only_what_is_missing_or_changed(tmp_path, monkeypatch):
    asked = []

    def fake_verify(todo, device, cache_dir, record):
        for c in todo:
            asked.append(c.name)
            record(c, types.SimpleNamespace(sample_id=c.name, status="rejected", flags=["input_mutation"], message="m",
                                            phases={"run_wall_s": 1.234, "queue_s": 9.0}))

    monkeypatch.setattr(G, "verify", fake_verify)
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    assert G.main(["--only", "i1_zero_input", "--json", str(out), "--resume"]) == 0  # nothing to resume yet
    assert asked == ["i1_zero_input"]
    first = json.loads(out.read_text())
    assert first["verdicts"]["i1_zero_input"]["status"] == "rejected" and first["classes"][0]["caught"] == 1
    assert first["verdicts"]["i1_zero_input"]["seconds"] == {"run_wall_s": 1.23}  # where the time went
    # a cut run: one verdict whose candidate changed since, the other one not yet there
    first["verdicts"]["i1_zero_input"]["key"] = "stale"
    first["verdicts"]["i5_subclass"] = {**_verdict("i5_subclass", "rejected", ["lazy_output"])}
    first["elapsed_s"] = 100.0
    out.write_text(json.dumps(first))
    asked.clear()
    only = "i1_zero_input,i5_subclass,i5_view_of_input"
    assert G.main(["--only", only, "--classes", "1,5", "--json", str(out), "--markdown", str(md), "--resume"]) == 0
    assert sorted(asked) == ["i1_zero_input", "i5_view_of_input"]  # the kept one is not verified again
    again = json.loads(out.read_text())
    assert set(again["verdicts"]) == {"i1_zero_input", "i5_subclass", "i5_view_of_input"}
    assert again["elapsed_s"] >= 100.0 and [r["class"] for r in again["classes"]] == [1, 5]
    assert "| 5 |" in md.read_text() and "| 1 |" in md.read_text()
    with pytest.raises(SystemExit):  # a run of another device is not resumed
        G.main(["--device", "cuda", "--json", str(out), "--resume"])
    with pytest.raises(SystemExit):
        G.main(["--only", "no_such_candidate"])


def test_a_cpu_only_trick_is_not_run_on_a_gpu():
    """set_num_threads times nothing on a GPU: run there it was ok, a "miss" (session_2026-11-30c)."""
    c = BY_NAME["h27_more_threads"]
    assert G.runnable(c, "cpu") and c.devices == ("cpu",)
    assert BY_NAME["h27_precision_flag_by_getattr"].devices == G.BOTH


def test_report_makes_the_tables_from_the_file_and_verifies_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(G, "verify", lambda *a, **k: pytest.fail("--report verified something"))
    kept = _verdict("i1_zero_input", "rejected", ["input_mutation"])
    stale = {**_verdict("i5_subclass", "rejected", ["lazy_output"]), "key": "another harness"}
    out, md = tmp_path / "gpu.json", tmp_path / "gpu.md"
    out.write_text(json.dumps({"device": "cpu", "elapsed_s": 12.0, "machine": "a machine",
                               "verdicts": {"i1_zero_input": kept, "i5_subclass": stale}}))
    before = out.read_text()
    assert G.main(["--report", "--classes", "1,5", "--json", str(out), "--markdown", str(md)]) == 0
    text = md.read_text()
    assert "a machine" in text and "tables made again by --report" in text
    assert "| 1 | write into inputs" in text and "1/1 (1 pending)" in text  # i1_inplace_then_clone not run
    assert "| 5 |" in text and "| pending |" in text  # the stale verdict is not shown as a catch
    assert out.read_text() == before  # the run's file is left as it was
    with pytest.raises(SystemExit):
        G.main(["--report", "--json", str(tmp_path / "none.json")])


@pytest.mark.slow
def test_a_tiny_real_run_on_the_cpu(tmp_path):
    out = tmp_path / "cpu.json"
    names = "i10_zeros,h36_fetch_weights,honest/relu_clamp"
    assert G.main(["--device", "cpu", "--classes", "10,36", "--only", names, "--json", str(out),
                   "--cache-dir", str(tmp_path / "c")]) == 0
    got = json.loads(out.read_text())
    v = got["verdicts"]
    assert v["i10_zeros"]["status"] == "incorrect" and "constant_output" in v["i10_zeros"]["flags"]
    assert v["h36_fetch_weights"]["status"] == "rejected" and v["h36_fetch_weights"]["guards"] == "standard"
    assert v["honest/relu_clamp"]["status"] == "ok" and v["honest/relu_clamp"]["guards"] == "strict"
    rows = {r["class"]: r for r in got["classes"]}
    assert rows[10]["caught"] == 1 and rows[36]["caught"] == 1 and rows[36]["pending"] == ["h36_pip_at_import"]
    assert next(c for c in got["honest"] if c["corpus"] == "honest")["false_flags"] == 0
