"""The documentation's code runs as written.

Python: in README.md and docs/*.md, a ```python block that starts with an import is a program; the
program blocks of one file run in order in one fresh process, as a reader pastes them one after
the other (blocks without imports are fragments of the language's syntax, shown inside such
programs). The README's `tack` commands run through `python -m tack`, and its C++ block compiles
and runs inside main() against the C++ build."""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path, language):
    """The ```language blocks of a Markdown file, as (first line number, text)."""
    out = []
    pattern = re.compile(r"^```" + language + r"\n(.*?)^```", re.S | re.M)
    text = path.read_text()
    for m in pattern.finditer(text):
        out.append((text[: m.start()].count("\n") + 2, m.group(1)))
    return out


def is_program(code):
    first = next((l for l in code.splitlines() if l.strip() and not l.startswith("#")), "")
    return first.startswith(("import ", "from "))


def programs_of(path):
    return [(line, code) for line, code in blocks(path, "python") if is_program(code)]


def env_for(tmp_path):
    env = dict(os.environ, TACK_CACHE_DIR=str(tmp_path / "cache"))
    # mpi4py as a singleton, as root in a container too.
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_tcp_if_include="lo", OMPI_MCA_oob_tcp_if_include="lo")
    return env


@pytest.mark.parametrize("doc", [d for d in DOCS if programs_of(d)], ids=lambda d: d.name)
def test_python_blocks_run_as_written(doc, tmp_path):
    programs = programs_of(doc)
    if any("mpi4py" in code for _, code in programs):
        pytest.importorskip("mpi4py.MPI", reason="mpi4py (scripts/install-python installs it)")
    # Each block keeps its own line numbers in tracebacks: padded to where it is in the file.
    script = tmp_path / f"{doc.stem}_blocks.py"
    # Line 1 (blank in any Markdown file that opens with a block's fence): the kernels files the
    # docs import (examples/kernels.py, tests/kernels/workgroups.py), after the standard library,
    # which tests/kernels/random.py would shadow.
    paths = [str(ROOT / "examples"), str(ROOT / "tests" / "kernels")]
    lines = [f"import sys; sys.path += {paths!r}"]
    for line, code in programs:
        lines += [""] * (line - 1 - len(lines))
        lines += code.splitlines()
    script.write_text("\n".join(lines) + "\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         cwd=ROOT / "examples", env=env_for(tmp_path), timeout=600)
    assert run.returncode == 0, f"{doc.name}:\n{run.stdout}\n{run.stderr}"


def test_the_readme_has_its_programs():
    assert len(programs_of(ROOT / "README.md")) >= 2


def readme_commands():
    for _, code in blocks(ROOT / "README.md", "sh"):
        for line in code.splitlines():
            command = line.split("#")[0].strip()
            if command.startswith(("tack ", "python -m tack ")):
                yield command


@pytest.mark.parametrize("command", list(readme_commands()))
def test_readme_tack_commands_run(command, tmp_path):
    words = shlex.split(command)
    args = words[1:] if words[0] == "tack" else words[3:]
    run = subprocess.run([sys.executable, "-m", "tack", *args], capture_output=True, text=True,
                         cwd=ROOT, env=env_for(tmp_path), timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr


def test_readme_cpp_block_compiles_and_runs_inside_main(tmp_path):
    build = ROOT / "build"
    lib = build / "lib" / "libtack.so"
    compiler = shutil.which("c++") or shutil.which("g++")
    if not lib.exists() or compiler is None:
        pytest.skip("needs the C++ build (scripts/build) and a C++ compiler")
    (_, code), = blocks(ROOT / "README.md", "cpp")
    includes = [l for l in code.splitlines() if l.startswith("#include")]
    body = [l for l in code.splitlines() if not l.startswith("#include")]
    source = tmp_path / "readme.cpp"
    source.write_text("\n".join(includes + ["#include <vector>", "", "int main() {"] + body +
                                ["  return result.size() == (1u << 20) ? 0 : 1;", "}"]) + "\n")
    exe = tmp_path / "readme"
    subprocess.run([compiler, "-std=c++20", "-O1", f"-I{ROOT / 'include'}", str(source),
                    "-o", str(exe), f"-L{lib.parent}", "-ltack", f"-Wl,-rpath,{lib.parent}"],
                   check=True, capture_output=True, text=True, timeout=600)
    # kernels.py of the block: the examples' one, which has saxpy.
    run = subprocess.run([str(exe)], capture_output=True, text=True, cwd=ROOT / "examples",
                         env=env_for(tmp_path), timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
