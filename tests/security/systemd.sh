#!/usr/bin/env bash
# Issue 11, What to build 5: a systemd unit in contrib/ with the recommended hardening options
# that still let the daemon run jobs.  Checks: `systemd-analyze verify` accepts the unit (with
# ExecStart pointing at the binary under test); the options the executor depends on are there
# (KillMode=process: tasks survive a daemon restart and are adopted; Delegate=yes: per-task
# cgroups; no PrivateTmp/ProtectHome/PrivateDevices that would break jobs; exit 2 is not
# restarted); and contrib/README.md explains every option the unit sets.
# usage: systemd.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"
unit=$src/contrib/gsched.service
readme=$src/contrib/README.md

check "the unit exists" [ -f "$unit" ]
check "its README exists" [ -f "$readme" ]
[ -f "$unit" ] || finish
has() { grep -Eq "^$1\$" "$unit"; }
check "KillMode=process (tasks outlive a daemon restart)" has "KillMode=process"
check "Delegate=yes (per-task cgroups)" has "Delegate=yes"
check "Restart=on-failure" has "Restart=on-failure"
check "no restart loop on a configuration error" has "RestartPreventExitStatus=2"
check "NoNewPrivileges=yes" has "NoNewPrivileges=yes"
check "ProtectSystem=full" has "ProtectSystem=full"
check "jobs keep their home directories" has "ProtectHome=no"
check "jobs keep the machine's /tmp" has "PrivateTmp=no"
check "jobs keep the GPU devices" has "PrivateDevices=no"
check "no User= (jobs run as their owners)" sh -c "! grep -q '^User=' '$unit'"
check "StateDirectory for the database" has "StateDirectory=gsched"
check "ExecStart runs gsched serve" grep -Eq '^ExecStart=/usr/local/bin/gsched serve ' "$unit"
check "ExecReload sends SIGHUP" has 'ExecReload=/bin/kill -HUP \$MAINPID'
# every option the unit sets is explained in the README (as `Key=`)
for k in $(grep -Eo '^[A-Za-z]+=' "$unit" | sort -u); do
  check "README explains $k" grep -q "\`$k" "$readme"
done
# the options the unit passes are options of this gsched serve
sed -n 's|^ExecStart=/usr/local/bin/gsched serve ||p' "$unit" | tr ' ' '\n' | grep '^--' > "$tmp/opts"
for o in $(cat "$tmp/opts"); do
  check "serve knows $o" sh -c "'$bin' serve --help | grep -q -- '$o '"
done

if command -v systemd-analyze > /dev/null 2>&1; then
  sed "s|/usr/local/bin/gsched|$bin|" "$unit" > "$tmp/gsched.service"
  out=$(systemd-analyze verify "$tmp/gsched.service" 2>&1); rc=$?
  # systemd-analyze may also complain about units of the machine it runs on: only ours counts
  ours=$(printf '%s\n' "$out" | grep 'gsched.service' || true)
  check "systemd-analyze verify accepts the unit" [ "$rc" -eq 0 -o -z "$ours" ]
  [ -n "$ours" ] && printf '%s\n' "$ours"
else
  echo "# systemd-analyze not installed: the unit's syntax is not verified (install systemd)"
fi
finish
