"""tests/zygote.py runs a script as ``python script args`` in ``cwd`` would, and each run in a
fresh child: the knob tests' stage runs through it must mean what subprocess runs meant."""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.knobs import Zygote

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


def test_a_run_is_what_python_script_gives_and_leaves_nothing_for_the_next(tmp_path):
    (tmp_path / "stages").mkdir()
    script = tmp_path / "stages" / "probe.py"
    script.write_text(PROBE)
    (tmp_path / "work").mkdir()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    z = Zygote(tmp_path, env)
    try:
        runs = [z.run([str(script), code, "b c"], tmp_path / "work") for code in ("0", "3", "0")]
    finally:
        z.close()
    direct = subprocess.run([sys.executable, str(script), "3", "b c"], cwd=tmp_path / "work", env=env, capture_output=True, text=True)
    # stdout and stderr share the run's log, in the order the buffers were flushed.
    assert [code for code, _ in runs] == [0, 3, 0] and direct.returncode == 3
    assert sorted(runs[1][1].splitlines()) == sorted((direct.stdout + direct.stderr).splitlines())
    first = json.loads(next(line for line in runs[0][1].splitlines() if line.startswith("{")))
    assert first == {**json.loads(direct.stdout), "argv": [str(script), "0", "b c"]}
    assert first["runs"] == 1 and first["env"] == "x" and first["name"] == "__main__"
    assert runs[2][1] == runs[0][1]


def test_a_failing_script_gives_its_status_and_traceback(tmp_path):
    (tmp_path / "stages").mkdir()
    script = tmp_path / "stages" / "bad.py"
    script.write_text("raise ValueError('broken input')\n")
    z = Zygote(tmp_path, dict(os.environ))
    try:
        code, output = z.run([str(script)], tmp_path)
    finally:
        z.close()
    assert code == 1 and "ValueError: broken input" in output
