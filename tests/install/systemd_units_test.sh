#!/usr/bin/env bash
# The shipped systemd units (share/systemd), parsed: the watch unit and the export unit name
# one journal, the watch unit's outputs and journal are in directories it may write, and it
# runs hardened (no privilege, a read-only system). Regression: the watch unit ran as root with
# no hardening and recorded its runs where the export unit does not read.
# Usage: systemd_units_test.sh SOURCE_DIR
set -euo pipefail
src=$(cd "${1:?usage: systemd_units_test.sh SOURCE_DIR}" && pwd)
watch=$src/share/systemd/headroom-watch@.service
export_unit=$src/share/systemd/headroom-export.service
fail() { echo "systemd-units: FAIL: $*" >&2; exit 1; }

# The value(s) of KEY in the [Service] section, one per line, in file order.
service_values() {
  awk -v key="$2" '
    /^\[/ { section = $0; next }
    section == "[Service]" && index($0, key "=") == 1 { print substr($0, length(key) + 2) }
  ' "$1"
}
# The one HEADROOM_JOURNAL a unit sets.
journal_of() {
  local j
  j=$(service_values "$1" Environment | sed -n 's/^"\{0,1\}HEADROOM_JOURNAL=\([^" ]*\).*/\1/p')
  [[ $(wc -l <<<"$j") -eq 1 && -n $j ]] || fail "$(basename "$1"): no single HEADROOM_JOURNAL"
  echo "$j"
}

watch_journal=$(journal_of "$watch")
export_journal=$(journal_of "$export_unit")
[[ $watch_journal == "$export_journal" ]] ||
  fail "watch records in $watch_journal, export reads $export_journal"

# Hardening the watch unit must keep (values as systemd reads them).
expect() {
  local got
  got=$(service_values "$watch" "$1" | tail -1)
  [[ $got == "$2" ]] || fail "watch: $1=$got, expected $1=$2"
}
expect NoNewPrivileges yes
expect ProtectSystem strict
expect ProtectHome yes
expect PrivateTmp yes
expect PrivateNetwork yes
expect CapabilityBoundingSet ""
expect RestrictSUIDSGID yes
expect ProtectKernelTunables yes
expect ProtectControlGroups yes
[[ -z $(service_values "$watch" User) ]] || fail "watch: User= set; the unit runs uncapable"
if [[ -n $(service_values "$watch" DynamicUser) ]]; then
  fail "watch: DynamicUser would put the journal where the export unit cannot read it"
fi

# Under ProtectSystem=strict only StateDirectory= and ReadWritePaths= are writable: the
# journal and every output ExecStart names must be below one of them.
writable=()
for d in $(service_values "$watch" StateDirectory); do writable+=("/var/lib/$d"); done
for d in $(service_values "$watch" ReadWritePaths); do writable+=("$d"); done
below_writable() {
  local p=$1 w
  for w in "${writable[@]}"; do
    [[ $p == "$w"/* ]] && return 0
  done
  return 1
}
below_writable "$watch_journal" || fail "watch: the journal $watch_journal is not writable"
exec_start=$(service_values "$watch" ExecStart)
[[ $exec_start == /usr/bin/headroom\ watch\ * ]] || fail "watch: ExecStart is not headroom watch"
read -r -a words <<<"$exec_start"
outputs=0
for ((i = 0; i < ${#words[@]}; i++)); do
  case ${words[i]} in
    --out | --events | --log)
      below_writable "${words[i + 1]}" || fail "watch: ${words[i]} ${words[i + 1]} is not writable"
      outputs=$((outputs + 1))
      ;;
  esac
done
[[ $outputs -ge 2 ]] || fail "watch: ExecStart names no --out and --events"

# systemd's own parser, where it runs offline: no unknown keys or bad values.
if command -v systemd-analyze >/dev/null 2>&1; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for unit in "$watch" "$export_unit"; do
    name=$(basename "$unit")
    [[ $name == *@.service ]] && name=${name/@.service/@test.service}
    sed 's|/usr/bin/headroom|/bin/true|' "$unit" >"$tmp/$name"
    out=$(systemd-analyze verify --man=no "$tmp/$name" 2>&1 || true)
    if grep -Ei "unknown (key|lvalue|section)|failed to parse|invalid" <<<"$out" >/dev/null; then
      fail "systemd-analyze verify $name: $out"
    fi
  done
fi
echo "systemd-units: ok (one journal: $watch_journal; watch hardened)"
