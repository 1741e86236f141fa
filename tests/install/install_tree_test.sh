#!/usr/bin/env bash
# `make install` as a packager runs it: DESTDIR staging and a prefix other than /usr, then
# the installed tree used from there, then the uninstall that reads the manifest.
# (The component form writes install_manifest_Unspecified.txt, so the build's own
# install_manifest.txt, which `make uninstall` reads, is left alone.)
# Usage: install_tree_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: install_tree_test.sh BUILD_DIR}" && pwd)
fail() { echo "install-tree: FAIL: $*" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
prefix=/opt/headroom-test
DESTDIR=$stage cmake -DCMAKE_INSTALL_PREFIX=$prefix -DCMAKE_INSTALL_COMPONENT=Unspecified \
  -P "$build/cmake_install.cmake" >/dev/null
root=$stage$prefix
manifest=$build/install_manifest_Unspecified.txt
[[ -s $manifest ]] || fail "no manifest"
for f in bin/headroom libexec/headroom/headroom-guardian share/man/man1/headroom.1.gz share/man/man1/headroom-guard.1.gz \
         share/man/zh_TW/man1/headroom-guard.1.gz \
         share/bash-completion/completions/headroom share/zsh/site-functions/_headroom \
         share/locale/zh_TW/LC_MESSAGES/headroom.mo lib/systemd/system/headroom-export.service \
         lib/systemd/system/headroom-guardian.service share/doc/headroom/guardian.md \
         share/headroom/grafana/headroom-dashboard.json share/doc/headroom/guard.md \
         share/headroom/prometheus/headroom.rules.yml share/doc/headroom/export-live.png; do
  [[ -f $root/$f ]] || fail "missing $prefix/$f"
done
# Nothing lands outside the prefix (the manifest lists paths without DESTDIR).
outside=$(grep -v "^$prefix/" "$manifest" || true)
[[ -z $outside ]] || fail "installed outside the prefix: $outside"
# The units name this prefix's binary and docs, not /usr's.
grep -q "^ExecStart=$prefix/bin/headroom export" "$root/lib/systemd/system/headroom-export.service" ||
  fail "ExecStart does not name $prefix/bin/headroom"
grep -q "^Documentation=file:$prefix/share/doc/headroom/" "$root/lib/systemd/system/headroom-export.service" ||
  fail "Documentation does not name $prefix/share/doc/headroom"
# The moved tree works: version, and the catalog found relative to the binary.
[[ $("$root/bin/headroom" --version) == 'headroom '* ]] || fail "--version"
if [[ $(msgunfmt "$root/share/locale/zh_TW/LC_MESSAGES/headroom.mo" | grep -c '^msgid') -gt 1 ]]; then
  [[ "$(env -u LC_ALL LANGUAGE=zh_TW LANG=C.UTF-8 "$root/bin/headroom" --help)" != "$(env -u LC_ALL LANG=C "$root/bin/headroom" --help)" ]] ||
    fail "the installed catalog is not found from $prefix/bin"
fi
# The moved tree's guardian execs the worker beside it in PREFIX/libexec/headroom.
out=$stage/guardian.out
"$root/bin/headroom" guardian --dry-run --only /no/such/cgroup --no-journal --no-nvml >"$out" 2>&1 &
gpid=$!
for _ in $(seq 100); do grep -q 'watching:' "$out" && break; sleep 0.05; done
exe=$(readlink "/proc/$gpid/exe" || true)
kill -TERM "$gpid"
wait "$gpid" || fail "headroom guardian did not stop with status 0: $(cat "$out")"
[[ $exe == "$root/libexec/headroom/headroom-guardian" ]] ||
  fail "headroom guardian runs as '$exe', not $prefix/libexec/headroom/headroom-guardian"
rm -f "$out"
# The Python companion where this prefix's python3 reads packages, importable from there.
pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3)
pydir=$root/lib/python$pyver/dist-packages
[[ -f $pydir/headroom/__init__.py && -f $pydir/headroom/trainer.py ]] ||
  fail "missing $prefix/lib/python$pyver/dist-packages/headroom"
if [[ -x /usr/bin/python3 ]]; then
  [[ $(cd / && PYTHONPATH=$pydir /usr/bin/python3 -c 'import headroom, headroom.trainer; print(headroom.SCHEMA)') == headroom.step/1 ]] ||
    fail "the installed companion does not import"
fi
count=$(wc -l <"$manifest")
# Uninstall as `make uninstall` does: exactly the manifest's files, below DESTDIR.
sed "s|^|$stage|" "$manifest" | xargs -d '\n' rm -f --
left=$(find "$stage" -type f)
[[ -z $left ]] || fail "uninstall left: $left"
rm -f "$manifest"
echo "install-tree: ok ($count files installed under DESTDIR$prefix and removed)"
