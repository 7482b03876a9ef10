"""tests/zygote.py runs a script as ``python script args`` in ``cwd`` would, and each run in a
fresh child: the knob tests' stage runs and tests/forked.py's runs through it must mean what
subprocess runs meant."""

import json
import subprocess
import sys

import pytest

from tests import forked

PROBE = """
import json, os, sys
import biochunk
# A run that changes process state: a second run must not see it.
biochunk.PROBE_RUNS = getattr(biochunk, "PROBE_RUNS", 0) + 1
os.environ["PROBE"] = os.environ.get("PROBE", "") + "x"
print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "path0": sys.path[0], "name": __name__,
                  "runs": biochunk.PROBE_RUNS, "env": os.environ["PROBE"]}))
print("to stderr", file=sys.stderr)
sys.exit(int(sys.argv[1]))
"""


@pytest.fixture
def zygote(tmp_path):
    """The zygote tests/forked.py runs scripts in (one per test process: starting one imports
    the whole library, ~14 s), and scripts of this module's own in a folder of the test's."""
    (tmp_path / "stages").mkdir()
    (tmp_path / "stages" / "probe.py").write_text(PROBE)
    (tmp_path / "stages" / "bad.py").write_text("raise ValueError('broken input')\n")
    (tmp_path / "work").mkdir()
    z, env = forked.zygote()
    return tmp_path, env, z


def test_a_run_is_what_python_script_gives_and_leaves_nothing_for_the_next(zygote):
    root, env, z = zygote
    script = root / "stages" / "probe.py"
    runs = [z.run([str(script), code, "b c"], root / "work") for code in ("0", "3", "0")]
    direct = subprocess.run([sys.executable, str(script), "3", "b c"], cwd=root / "work", env=env, capture_output=True, text=True)
    # stdout and stderr share the run's log, in the order the buffers were flushed.
    assert [code for code, _ in runs] == [0, 3, 0] and direct.returncode == 3
    assert sorted(runs[1][1].splitlines()) == sorted((direct.stdout + direct.stderr).splitlines())
    first = json.loads(next(line for line in runs[0][1].splitlines() if line.startswith("{")))
    assert first == {**json.loads(direct.stdout), "argv": [str(script), "0", "b c"]}
    assert first["runs"] == 1 and first["env"] == "x" and first["name"] == "__main__"
    assert runs[2][1] == runs[0][1]
    # Split, as tests/forked.py asks: stdout and stderr apart, as subprocess.run captures them.
    code, out, err = z.run_split([str(script), "3", "b c"], root / "work")
    assert (code, out, err) == (3, direct.stdout, direct.stderr)


def test_a_run_reads_no_input(zygote):
    """stdin is /dev/null in the fork, not the pipe that carries the zygote's requests."""
    root, _, z = zygote
    script = root / "stages" / "reads.py"
    script.write_text("import sys; print(repr(sys.stdin.read()))\n")
    assert z.run_split([str(script)], root) == (0, "''\n", "")


def test_a_failing_script_gives_its_status_and_traceback(zygote):
    root, _, z = zygote
    code, output = z.run([str(root / "stages" / "bad.py")], root)
    assert code == 1 and "ValueError: broken input" in output


def test_run_python_gives_what_subprocess_run_gives(zygote):
    """tests/forked.py's fork stands in for subprocess.run(cmd, cwd=..., capture_output=True, text=True)."""
    root, env, _ = zygote
    cmd = [sys.executable, str(root / "stages" / "probe.py"), "3", "b c"]
    ran = forked.run_python(cmd, root / "work")
    direct = subprocess.run(cmd, cwd=root / "work", env=env, capture_output=True, text=True)
    assert (ran.args, ran.returncode, ran.stdout, ran.stderr) == (cmd, 3, direct.stdout, direct.stderr)
