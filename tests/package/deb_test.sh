#!/usr/bin/env bash
# The .deb as an operator gets it: `cpack -G DEB` in this build, its control fields and contents,
# `dpkg --root` into a scratch root (no container, nothing installed on this machine), then the
# installed binary run from there (--version, the simulator found beside it, the Slurm links),
# the unit checked by `systemd-analyze verify` with the install's paths, the man page and the bash
# completion used for real.
# Usage: deb_test.sh BUILD_DIR
set -euo pipefail
BUILD=$(readlink -f "${1:?usage: deb_test.sh BUILD_DIR}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for tool in cpack dpkg dpkg-deb systemd-analyze gzip; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/setup installs it)"
done

# Uncompressed: the test build's binary is large (sanitizers); the format is the same as with xz.
(cd "$BUILD" && cpack -G DEB -B "$WORK/pkg" -D CPACK_DEBIAN_COMPRESSION_TYPE=none >"$WORK/cpack.log" 2>&1) ||
  { tail -20 "$WORK/cpack.log"; fail "cpack -G DEB failed"; }
deb=$(ls "$WORK"/pkg/gpuwarden_*.deb 2>/dev/null | head -1)
[[ -f $deb ]] || { ls -R "$WORK/pkg"; fail "no gpuwarden_*.deb written"; }

# Control fields: name, version of the build, architecture, and shared-library dependencies found
# by dpkg-shlibdeps (libmicrohttpd for the HTTP server, at least).
[[ $(dpkg-deb -f "$deb" Package) == gpuwarden ]] || fail "Package is $(dpkg-deb -f "$deb" Package)"
version=$("$BUILD/bin/gpuwarden" --version | awk '{print $2}')
[[ $(dpkg-deb -f "$deb" Version) == "$version" ]] || fail "Version $(dpkg-deb -f "$deb" Version), binary says $version"
[[ $(dpkg-deb -f "$deb" Architecture) == "$(dpkg --print-architecture)" ]] || fail "Architecture"
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends == *libmicrohttpd* && $depends == *libsqlite3* ]] || fail "Depends lacks the libraries: $depends"
dpkg-deb -e "$deb" "$WORK/control"
grep -qx '/etc/gpuwarden/gpuwarden.yaml' "$WORK/control/conffiles" || fail "the configuration is not a conffile"
! grep -v '^#' "$WORK/control/postinst" | grep -q ldconfig || fail "the postinst runs ldconfig for private libraries"

# dpkg into a scratch root: its own database, dependencies not checked there (they are this
# machine's), the maintainer scripts run outside it with $DPKG_ROOT set (they then touch nothing).
ROOT=$WORK/root
mkdir -p "$ROOT/var/lib/dpkg/info" "$ROOT/var/lib/dpkg/updates" "$ROOT/var/lib/dpkg/triggers"
touch "$ROOT/var/lib/dpkg/status"
dpkg --root="$ROOT" --force-depends --force-script-chrootless -i "$deb" >"$WORK/dpkg.log" 2>&1 ||
  { cat "$WORK/dpkg.log"; fail "dpkg -i failed"; }
[[ $(dpkg --root="$ROOT" -s gpuwarden | awk '/^Status:/ {print $4}') == installed ]] || fail "dpkg does not list it installed"
for f in usr/bin/gpuwarden usr/libexec/gpuwarden-full usr/lib/gpuwarden/libnvml-sim.so usr/lib/systemd/system/gpuwarden.service \
  etc/gpuwarden/gpuwarden.yaml usr/share/man/man1/gpuwarden.1.gz usr/share/bash-completion/completions/gpuwarden \
  usr/share/doc/gpuwarden/config.md usr/share/doc/gpuwarden/knowledge-base.md usr/share/doc/gpuwarden/README.md \
  usr/share/gpuwarden/prometheus/gpuwarden-rules.yml usr/share/gpuwarden/grafana/gpuwarden-dashboard.json \
  usr/share/gpuwarden/scenarios/dgx-h100.yaml; do
  [[ -e $ROOT/$f ]] || fail "/$f is not installed"
done
[[ ! -e $ROOT/usr/share/doc/gpuwarden/mutation ]] || fail "the mutation reports are installed as docs"

# The installed binary runs from there: its version, the simulator found beside it (lib/gpuwarden),
# and the Slurm links.
[[ $("$ROOT/usr/bin/gpuwarden" --version) == "gpuwarden $version" ]] || fail "--version"
n=$("$ROOT/usr/bin/gpuwarden" --simulate dgx-h100 discovery --json 2>"$WORK/disc.err" |
  python3 -c 'import json,sys; print(len(json.load(sys.stdin)["gpus"]))') || { cat "$WORK/disc.err"; fail "discovery from the install"; }
[[ $n == 8 ]] || fail "discovery from the install saw $n GPUs, not 8"
# The front answers query itself (src/cli/front_route.h): the simulator is found from bin/ as well.
n=$("$ROOT/usr/bin/gpuwarden" --simulate dgx-h100 query --query-gpu=index --format=csv,noheader | wc -l)
[[ $n == 8 ]] || fail "query from the install gave $n rows, not 8"
for hook in prolog epilog healthcheck; do
  [[ $(readlink "$ROOT/usr/bin/gpuwarden-slurm-$hook") == gpuwarden ]] || fail "gpuwarden-slurm-$hook is not a link to gpuwarden"
done

# The unit runs what was installed, with the configuration where it was installed, reads the
# kernel log, and passes systemd's own check.
unit=$ROOT/usr/lib/systemd/system/gpuwarden.service
grep -qx 'ExecStart=/usr/bin/gpuwarden serve --config /etc/gpuwarden/gpuwarden.yaml --data-dir /var/lib/gpuwarden' "$unit" ||
  fail "ExecStart: $(grep ExecStart= "$unit")"
grep -qx 'ExecReload=/usr/bin/gpuwarden reload --data-dir /var/lib/gpuwarden' "$unit" || fail "ExecReload: $(grep ExecReload= "$unit")"
grep -qx 'Environment=GPUWARDEN_RUNTIME_DIR=/run/gpuwarden' "$unit" && grep -qx 'RuntimeDirectory=gpuwarden' "$unit" ||
  fail "the agent's control socket is not where root's CLI looks (/run/gpuwarden)"
grep -qx 'Type=notify' "$unit" && grep -qx 'DeviceAllow=/dev/kmsg r' "$unit" &&
  grep -qx 'AmbientCapabilities=CAP_SYSLOG' "$unit" || fail "the unit does not notify or cannot read /dev/kmsg"
! grep -qx 'ProtectKernelLogs=yes' "$unit" || fail "ProtectKernelLogs=yes hides /dev/kmsg"
# The root gets this machine's own units (sysinit.target and the rest a real node has) beside ours.
cp -an /usr/lib/systemd/system/. "$ROOT/usr/lib/systemd/system/" 2>/dev/null || cp -an /lib/systemd/system/. "$ROOT/usr/lib/systemd/system/"
systemd-analyze verify --man=no --root="$ROOT" /usr/lib/systemd/system/gpuwarden.service >"$WORK/verify.log" 2>&1 ||
  { cat "$WORK/verify.log"; fail "systemd-analyze verify"; }
if grep -v 'nvidia-persistenced.service\|network-online' "$WORK/verify.log" | grep -q gpuwarden; then
  cat "$WORK/verify.log"; fail "systemd-analyze verify complains about the unit"
fi

# The man page: a real one, with the sections an operator looks for.
man=$(gzip -dc "$ROOT/usr/share/man/man1/gpuwarden.1.gz")
for section in NAME SYNOPSIS DESCRIPTION "EXIT STATUS" FILES "SEE ALSO"; do
  grep -q "^\.SH \"\?$section\"\?" <<<"$man" || fail "the man page has no $section section"
done
grep -q 'serve' <<<"$man" || fail "the man page does not list the commands"

# Bash completion, used as bash uses it.
complete_line() {  # WORDS... -> the candidates for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gpuwarden; echo "${COMPREPLY[*]}"' \
    _ "$ROOT/usr/share/bash-completion/completions/gpuwarden" "$@"
}
[[ $(complete_line gpuwarden sl) == slurm ]] || fail "completion of 'sl': $(complete_line gpuwarden sl)"
[[ $(complete_line gpuwarden slurm pro) == prolog ]] || fail "completion of 'slurm pro': $(complete_line gpuwarden slurm pro)"
[[ $(complete_line gpuwarden serve --li) == --listen ]] || fail "completion of 'serve --li': $(complete_line gpuwarden serve --li)"
[[ " $(complete_line gpuwarden diag --si) " == *" --simulate "* ]] || fail "global options do not complete after a command"
echo "deb_test: ok ($(du -h "$deb" | cut -f1) package, version $version)"
