#!/bin/sh
# Runs the command-line tests with every attnlab process under valgrind's
# memcheck, and fails if any process reported an error.
#   scripts/memcheck_cli.sh [BUILD_DIR] [TEST.py ...]   (default: build, tests/test_cli*.py)
# Each process writes its own log (LOGS/vg.PID); the tests' own verdicts are
# printed but not counted: under valgrind some waits run out.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
[ $# -gt 0 ] && shift
logs=$(mktemp -d "${TMPDIR:-/tmp}/attnlab-memcheck.XXXXXX")
wrap="$logs/attnlab"
# OMP_WAIT_POLICY set: attnlab would otherwise run itself again with it
# (src/main.c), out of valgrind's sight
cat > "$wrap" <<WRAP
#!/bin/sh
OMP_WAIT_POLICY=\${OMP_WAIT_POLICY:-passive}; export OMP_WAIT_POLICY
exec valgrind --tool=memcheck --error-exitcode=99 --track-origins=no --leak-check=no \
  --log-file=$logs/vg.%p "$build/attnlab" "\$@"
WRAP
chmod +x "$wrap"
[ $# -gt 0 ] || set -- "$root"/tests/test_cli*.py
for t in "$@"; do
  echo "memcheck: $(basename "$t")"
  extra=""
  case "$t" in *test_cli_lessons.py) extra="--models $root/assets/models" ;; esac
  # shellcheck disable=SC2086
  ATTNLAB_TEST_TMP="$logs" /usr/bin/python3 "$t" --attnlab "$wrap" $extra 2>&1 | tail -n 3 || true
done
n=$(ls "$logs"/vg.* 2>/dev/null | wc -l)
# a process killed by a signal (the tests send some) writes no summary
bad=$(grep -lE "ERROR SUMMARY: [1-9]|Invalid (read|write|free)|uninitialised" "$logs"/vg.* 2>/dev/null || true)
cut=$(grep -L "ERROR SUMMARY" "$logs"/vg.* 2>/dev/null | wc -l)
echo "memcheck: $n attnlab processes ($cut ended by a signal before valgrind's summary)"
if [ -n "$bad" ]; then
  for f in $bad; do echo "== $f"; grep -v "^==[0-9]*== *$" "$f" | head -40; done
  echo "memcheck: errors in $(echo "$bad" | wc -l) of $n processes (logs in $logs)"
  exit 1
fi
echo "memcheck: no errors"
rm -rf "$logs"
