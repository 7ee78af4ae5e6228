"""`kernelmill ptx reroll|expand|stats` as a user runs them."""

from typer.testing import CliRunner

from kernelmill.cli import app

PTX = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n\t.param .u64 p\n)\n{\n"
       + "".join(f"\tld.global.f32 %f{t + 1}, [%rd1+{4 * t}];\n" for t in range(12)).replace("+0]", "]")
       + "\tret;\n}\n")


def test_reroll_expand_stats(tmp_path):
    src, rolled, back = tmp_path / "k.ptx", tmp_path / "k.rptx", tmp_path / "k2.ptx"
    src.write_text(PTX)
    r = CliRunner().invoke(app, ["ptx", "reroll", str(src), "-o", str(rolled)])
    assert r.exit_code == 0, r.output
    assert "for.size.1" in rolled.read_text() and "1 loops" in r.output
    r = CliRunner().invoke(app, ["ptx", "expand", str(rolled), "-o", str(back)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(app, ["ptx", "stats", str(src), str(back)])
    assert r.exit_code == 0 and "total" in r.output


def test_malformed_ptx_names_line_and_column_and_writes_nothing(tmp_path):
    bad, out = tmp_path / "bad.ptx", tmp_path / "out.rptx"
    bad.write_text(PTX.replace("[%rd1+8];", "[%rd1+8;"))
    r = CliRunner().invoke(app, ["ptx", "reroll", str(bad), "-o", str(out)])
    assert r.exit_code == 1 and "bad.ptx:10:" in r.output and "expected ']'" in r.output
    assert not out.exists()


def test_reroll_of_a_many_kernel_file_is_the_same_for_any_jobs(tmp_path):
    # a file of several kernels is shared out over the workers (ptx.batch's parts)
    body = PTX[PTX.index(".visible"):]
    many = PTX[:PTX.index(".visible")] + "".join(body.replace(".entry k(", f".entry k{i}(") + "\n" for i in range(3))
    src = tmp_path / "many.ptx"
    src.write_text(many)
    outs = []
    for jobs in ("1", "2", "3"):
        out = tmp_path / f"many{jobs}.rptx"
        r = CliRunner().invoke(app, ["ptx", "reroll", str(src), "-o", str(out), "--jobs", jobs])
        assert r.exit_code == 0, r.output
        assert "3 loops" in r.output and "3/3 functions checked" in r.output
        outs.append(out.read_text())
    assert outs[0] == outs[1] == outs[2] and outs[0].count("for.size.1") == 3
    r = CliRunner().invoke(app, ["ptx", "reroll", str(src), "-o", str(tmp_path / "x"), "--jobs", "-2"])
    assert r.exit_code == 2 and "--jobs must be >= 0" in r.output
