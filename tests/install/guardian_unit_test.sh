#!/usr/bin/env bash
# share/systemd/headroom-guardian.service: systemd-analyze verify accepts it (with the built
# binary in ExecStart), it names the journal the export unit reads, it runs with only the
# capabilities it needs, and the package never enables it (no [Install] alias, no preset).
# Usage: guardian_unit_test.sh SOURCE_DIR BUILD_DIR. Exit 77 (skipped) without systemd-analyze.
set -euo pipefail
src=$(cd "${1:?usage: guardian_unit_test.sh SOURCE_DIR BUILD_DIR}" && pwd)
build=$(cd "${2:?usage: guardian_unit_test.sh SOURCE_DIR BUILD_DIR}" && pwd)
unit=$src/share/systemd/headroom-guardian.service
fail() { echo "guardian-unit: FAIL: $*" >&2; exit 1; }
value() { awk -v key="$1" 'index($0, key "=") == 1 { print substr($0, length(key) + 2) }' "$unit"; }

[[ $(value ExecStart) == "/usr/bin/headroom guardian" ]] || fail "ExecStart=$(value ExecStart)"
[[ $(value CapabilityBoundingSet) == "CAP_KILL CAP_SYS_PTRACE CAP_DAC_READ_SEARCH CAP_IPC_LOCK" ]] ||
  fail "CapabilityBoundingSet=$(value CapabilityBoundingSet)"
for kv in NoNewPrivileges=yes ProtectSystem=strict ProtectKernelTunables=yes PrivateNetwork=yes \
          OOMScoreAdjust=-1000 Conflicts=earlyoom.service; do
  [[ $(value "${kv%%=*}") == "${kv#*=}" ]] || fail "expected $kv, got ${kv%%=*}=$(value "${kv%%=*}")"
done
export_journal=$(sed -n 's/^Environment=HEADROOM_JOURNAL=//p' "$src/share/systemd/headroom-export.service")
[[ $(value Environment) == "HEADROOM_JOURNAL=$export_journal" ]] ||
  fail "the journal is not the one headroom-export reads ($export_journal)"
if grep -rqs guardian "$src/share/systemd/"*.preset 2>/dev/null; then fail "a preset enables it"; fi

command -v systemd-analyze >/dev/null || { echo "guardian-unit: no systemd-analyze: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -e "s|^ExecStart=/usr/bin/headroom|ExecStart=$build/headroom|" \
    -e "s|^Documentation=file:/usr/share/doc/headroom/|Documentation=file:$src/docs/|" \
    "$unit" >"$tmp/headroom-guardian.service"
out=$(cd "$tmp" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no \
        "$tmp/headroom-guardian.service" 2>&1) || fail "systemd-analyze verify: $out"
# Only the lines about this unit count: a container's own units may draw warnings of their own.
bad=$(grep 'headroom-guardian' <<<"$out" || true)
[[ -z $bad ]] || fail "systemd-analyze verify: $bad"
echo "guardian-unit: ok"
