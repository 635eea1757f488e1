#!/usr/bin/env python3
"""Runs `zlcore batch|ab --launcher slurm ... --dry-run` and checks what it prints
(the plan.json it would write, the sbatch command lines, the shard and merge
job scripts) and its exit status against a golden file. Needs no Slurm: a dry
run spawns neither sbatch nor squeue, and writes nothing.

    dry_run_golden.py ZLCORE SOURCE_DIR GOLDEN_FILE -- batch|ab ARGS...

ARGS may name {out}: a path in a fresh scratch directory (the batch's or
the A/B's --out);
{src}: SOURCE_DIR (for --flaggems-dir SOURCE/examples/suite). The golden must
be the same on every machine and checkout, so before comparing:
  - the scratch directory becomes <tmp> (it is a new random temporary path
    each run; --out is <tmp>/b, so the job names zlcore-b stay fixed);
  - the zlcore binary's install prefix (the directory above its bin/, e.g.
    the build tree) becomes <prefix>: the job scripts exec zlcore and pass
    --backend-dir by absolute path, both under the prefix;
  - SOURCE_DIR becomes <src> (the FlagGems dir, examples/suite, is in it);
  - longer paths are replaced first, so a build tree inside the source tree
    reads <prefix>, not <src>/build.
The environment's ZL_* variables are dropped, since batch reads defaults
from them (ZL_BACKEND, ZL_ISOLATE_TUNER_CACHE, ...), and so are the
framework knobs the plan's caliber records (TRITON_*, GEMS_*, FLAGGEMS_*,
FLAGTUNE), which would otherwise make the golden depend on the shell. A dry-run plan has no
submissions, so it holds no job ids and no timestamps; if it ever does, the
test fails and shows them. To regenerate after an intended change, from the
build directory:
    ZL_REGEN_GOLDEN=1 ctest -R slurm_dry_run_golden
then review `git diff tests/slurm/golden`.
"""
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import golden_file  # noqa: E402  (tests/golden_file.py)


def main():
    zlcore, src, golden = sys.argv[1:4]
    if sys.argv[4:5] != ["--"]:
        raise SystemExit("usage: dry_run_golden.py ZLCORE SOURCE_DIR GOLDEN -- batch|ab ARGS")
    zlcore = os.path.realpath(zlcore)
    src = os.path.realpath(src)
    prefix = os.path.dirname(os.path.dirname(zlcore))
    dropped = ("ZL_", "TRITON_", "GEMS_", "FLAGGEMS_", "USE_FLAGTUNE", "FLAGTUNE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = os.path.realpath(tmp)
        args = [a.replace("{out}", os.path.join(tmp, "b")).replace("{src}", src) for a in sys.argv[5:]]
        p = subprocess.run([zlcore] + args, cwd=tmp, env=env, capture_output=True, text=True)
        actual = f"{p.stdout}--- stderr\n{p.stderr}--- exit {p.returncode}\n"
        actual += "--- files in <tmp>: " + (" ".join(sorted(os.listdir(tmp))) or "none") + "\n"
    for path, name in sorted([(tmp, "<tmp>"), (prefix, "<prefix>"), (src, "<src>")],
                             key=lambda x: -len(x[0])):
        actual = actual.replace(path, name)
    return golden_file.check(golden, actual, "slurm_dry_run_golden")


if __name__ == "__main__":
    sys.exit(main())
