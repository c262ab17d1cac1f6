#!/usr/bin/env bash
# Does compiling the server's hot modules with mypyc pay? (BENCHMARKS.md)
# usage: bench/mypyc_probe.sh DIR [REV]
# Exports REV (default HEAD) twice, to DIR/plain and DIR/compiled, compiles the
# modules below in DIR/compiled with mypyc (from the mypy the test extra
# installs; needs a C compiler), then A/Bs the two folders with bench/ab.py:
#   python bench/ab.py OUT.json DIR/plain DIR/compiled --rounds 3 -- --games 200 --table 4
# Left out, as mypyc cannot build or run them as they are: play/game.py
# (Game.but copies __dict__ into object.__new__(Game)), storage/scripts.py
# (ClassVar fields of frozen dataclasses), storage/packing.py (subclasses a
# redis-py class with __slots__), storage/batch.py (its `except NoScriptError`
# around an await did not catch once compiled) and moose/rules.py (an internal
# mypyc error on State.__new__).
set -euo pipefail
dir=$1; rev=${2:-HEAD}
py=${PYTHON:-python}
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$dir/plain" "$dir/compiled"
mkdir -p "$dir/plain" "$dir/compiled"
for side in plain compiled; do
  git -C "$root" archive "$rev" client server pyproject.toml | tar -x -C "$dir/$side"
done
cd "$dir/compiled"
S=server/moose_server
MYPYPATH=client:server "$py" -m mypyc $S/codec.py $S/net/frames.py $S/net/hub.py \
  $S/storage/store.py $S/net/outbox.py $S/net/ws.py $S/net/handlers.py >build.log 2>&1
mv ./*__mypyc*.so server/  # the modules' shared runtime, beside the packages
find server -name '*.so' | sort
