# Prelude of the tests that need root (sourced, not run).
#
# need_root WHY LOCK TOOL...: skip (exit 77, saying why) unless this is root and every TOOL
# is installed; then take the machine-wide lock /tmp/gsched-LOCK.lock on descriptor 9 for
# the rest of the test (up to 10 minutes' wait): Unix users and system paths are shared by
# every checkout on the machine, so tests that create the same users (or use the same
# socket) take turns instead of deleting what another run is using.
need_root() {
  local why=$1 lock=$2 t
  shift 2
  if [ "$(id -u)" != 0 ]; then
    echo "SKIP: needs root ($why)"
    exit 77
  fi
  for t in "$@"; do
    command -v "$t" > /dev/null || { echo "SKIP: $t is not installed ($why)"; exit 77; }
  done
  if command -v flock > /dev/null; then
    exec 9> "/tmp/gsched-$lock.lock"
    flock -w 600 9 || {
      echo "SKIP: another test held /tmp/gsched-$lock.lock for 10 minutes"
      exit 77
    }
  fi
}
