"""The command as a shell user meets it: ``python -m ccsim`` is the ``ccsim`` command, and
``ccsim completion bash|zsh`` prints a completion script, generated from the parser, that is
valid shell and completes commands, options and scenario files."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import ccsim
import pytest
from ccsim.cli.parser import _build_parser
from conftest import _cli_env, run_cli


def test_python_m_ccsim_is_the_command() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim", "--version"], capture_output=True, text=True, env=_cli_env(), timeout=60
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"ccsim {ccsim.__version__}\n", "")
    usage = run_cli("--help")
    assert usage.returncode == 0 and usage.stdout.startswith("usage: ccsim ")


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    proc = run_cli("completion", "bash")
    assert proc.returncode == 0, proc.stderr
    path = tmp_path_factory.mktemp("completion") / "ccsim.bash"
    path.write_text(proc.stdout, encoding="utf-8")
    return path


def complete(script: Path, words: list[str], cwd: Path | None = None) -> list[str]:
    """What bash offers for the last of ``words`` after sourcing ``script``, as the shell would
    call the completion function that the script registers for ``ccsim``."""
    line = " ".join(words)
    program = (
        f"source {script}\n"
        "function=$(complete -p ccsim | sed -E 's/.* -F ([^ ]+) .*/\\1/')\n"
        f"COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}\n"
        f'"$function" ccsim "{words[-1]}" "{words[-2]}"\n'
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    proc = subprocess.run(["bash", "-c", program], capture_output=True, text=True, cwd=cwd, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return sorted(filter(None, proc.stdout.splitlines()))


def test_the_bash_script_is_valid_and_completes_commands_options_and_files(bash_script: Path, tmp_path: Path) -> None:
    syntax = subprocess.run(["bash", "-n", str(bash_script)], capture_output=True, text=True, timeout=30)
    assert syntax.returncode == 0, syntax.stderr
    commands = [c for a in _build_parser()._actions if a.dest == "command" for c in a.choices]
    assert complete(bash_script, ["ccsim", ""]) == sorted(commands)
    assert complete(bash_script, ["ccsim", "--"]) == ["--help", "--version"]
    assert complete(bash_script, ["ccsim", "re"]) == ["reproduce"]
    assert complete(bash_script, ["ccsim", "sweep", "--re"]) == ["--retry-failed"]
    assert complete(bash_script, ["ccsim", "completion", ""]) == ["bash", "zsh"]
    assert complete(bash_script, ["ccsim", "arima", ""]) == ["fit"]
    # Scenario files: .toml files and folders, nothing else.
    (tmp_path / "dir").mkdir()
    for name in ("a.toml", "b.toml", "notes.txt"):
        (tmp_path / name).write_text("", encoding="utf-8")
    assert complete(bash_script, ["ccsim", "run", ""], cwd=tmp_path) == ["a.toml", "b.toml", "dir"]
    assert complete(bash_script, ["ccsim", "run", "a.toml", "--ou"], cwd=tmp_path) == ["--out"]


def test_the_zsh_script_names_every_command() -> None:
    proc = run_cli("completion", "zsh")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("#compdef ccsim")
    for command in ("run", "validate", "sweep", "smc", "compare", "reproduce", "completion"):
        assert f"\n    {command}:'" in proc.stdout, command
    if shutil.which("zsh"):
        syntax = subprocess.run(["zsh", "-n"], input=proc.stdout, capture_output=True, text=True, timeout=30)
        assert syntax.returncode == 0, syntax.stderr


def test_an_unknown_shell_is_refused_in_one_line() -> None:
    proc = run_cli("completion", "fish")
    assert proc.returncode == 2 and "invalid choice: 'fish'" in proc.stderr and "Traceback" not in proc.stderr
