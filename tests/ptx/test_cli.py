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
