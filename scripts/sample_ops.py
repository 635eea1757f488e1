#!/usr/bin/env python3
"""Draw operators at random from a suite, reproducibly: `zlcore ops --json` in, one op a line out.

usage: sample_ops.py OPS_JSON --seed N --count K [--early OP]... [--late OP]... [--exclude FILE]...
                     [--exclude-mentioned DIR]...

The sample is random.Random(seed).sample of the sorted marks, so the same suite and seed
give the same list anywhere; ops listed in an --exclude file (one a line, '#' comments, e.g.
an earlier sample) are never drawn, nor, with --exclude-mentioned DIR, any mark that a file
under DIR names as a whole word (prose words that happen to be marks, such as `copy` or `all`,
are left out too: the draw only gets more careful); --early ops are
placed second (after one sampled op, so they do not run first on a fresh worker) and --late
ops last. The seed and the list go to stderr as well, for the record.
"""

import argparse
import json
import pathlib
import random
import re
import sys


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ops_json")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--early", action="append", default=[])
    p.add_argument("--late", action="append", default=[])
    p.add_argument("--exclude", action="append", default=[])
    p.add_argument("--exclude-mentioned", action="append", default=[], metavar="DIR")
    a = p.parse_args(argv)
    excluded = set()
    for path in a.exclude:
        with open(path, encoding="utf-8") as f:
            excluded |= {line.strip() for line in f if line.strip() and not line.startswith("#")}
    with open(a.ops_json, encoding="utf-8") as f:
        marks = sorted(json.load(f)["ops"])
    for folder in a.exclude_mentioned:
        files = sorted(pathlib.Path(folder).rglob("*.md"))
        if not files:
            sys.exit(f"sample_ops.py: --exclude-mentioned {folder}: no .md file there")
        words = set()
        for path in files:
            words |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.read_text(encoding="utf-8")))
        excluded |= words & set(marks)
    fixed = set(a.early) | set(a.late)
    missing = sorted(fixed - set(marks))
    if missing:
        sys.exit(f"sample_ops.py: not marks of the suite: {', '.join(missing)}")
    pool = [m for m in marks if m not in fixed and m not in excluded]
    drawn = random.Random(a.seed).sample(pool, min(a.count, len(pool)))
    ops = drawn[:1] + a.early + drawn[1:] + a.late
    print(f"# seed {a.seed}: {len(drawn)} of {len(pool)} marks drawn ({len(excluded)} excluded), plus "
          f"{', '.join(a.early + a.late) or 'none'}", file=sys.stderr)
    print(" ".join(ops), file=sys.stderr)
    print(f"# seed {a.seed}, {len(drawn)} drawn of {len(pool)}")
    print("\n".join(ops))


if __name__ == "__main__":
    main()
