# Prelude of the elastic-job tests with a real PyTorch (sourced, not run; before daemon.sh).
# Sets PY: a python3 that imports torch (the PATH's, else Debian's /usr/bin/python3, which
# python3-torch installs into); none: "SKIP: ..." and exit 77.  Tasks get PY's absolute path,
# since a task's PATH is the daemon's fixed one (docs/daemon.md, Environment).
#   elastic_policy            the policy the tests rescale with: $GSCHED_ELASTIC_POLICY, else
#                             the first of afs, pollux, optimus, elasticflow that 'gsched
#                             policies' lists (exit 1 if none)
#   elastic_policy_args POL   the serve options that make POL act within a second or two
PY=""
for p in "$(command -v python3)" /usr/bin/python3; do
  [ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import torch, torch.distributed' 2> /dev/null && { PY=$p; break; }
done
if [ -z "$PY" ]; then
  echo "SKIP: python3-torch is not installed (apt-get install python3-torch)"
  exit 77
fi
export OMP_NUM_THREADS=1 # the reference runs: one thread, as the jobs (2 ranks on 2 cores)

elastic_policy() {
  local have p
  have=$("$bin" policies 2> /dev/null | awk '{ print $1 }')
  for p in ${GSCHED_ELASTIC_POLICY:-afs pollux optimus elasticflow}; do
    printf '%s\n' "$have" | grep -qx "$p" && { echo "$p"; return 0; }
  done
  return 1
}

elastic_policy_args() {
  case $1 in
    pollux | optimus | elasticflow) echo "--set interval=1s" ;;
  esac
}
