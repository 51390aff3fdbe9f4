#!/usr/bin/env bash
# npm run setup:system: installs the Debian packages that the full test suite needs (test/support/system.ts
# skips a test whose package is missing, and fails it under CI=true). Skips packages already installed.
#   --dry-run   print what would be installed, install nothing
set -euo pipefail

# python3, pip and setuptools: the Python adapter's tests. mypy: its type check (mypy --strict).
# python3-torch: the PyTorch tests. chromium: the browser tests of the reports (playwright-core drives
# /usr/bin/chromium). slurm-wlm, munge and procps: the single-node cluster of test/slurm/cluster.sh.
# util-linux (prlimit) and mount: memory caps and the tmpfs fault tests. git: the commit that --version
# and run.json record. xz-utils: the portable bundle (npm run bundle) and its test. gcc and libc6-dev: the
# fault test that preloads a library of its own (LD_PRELOAD) into a trial's launch.
packages=(python3 python3-pip python3-setuptools mypy python3-torch chromium slurm-wlm munge procps util-linux mount git xz-utils gcc libc6-dev)

dry_run=0
case "${1:-}" in
  '') ;;
  --dry-run) dry_run=1 ;;
  *) echo "setup-system.sh: unknown argument '$1' (expected nothing or --dry-run)" >&2; exit 2 ;;
esac

if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
  echo "setup-system.sh: apt-get not found: this script installs Debian packages; on another system install" \
    "the equivalents of: ${packages[*]}" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" == 'install ok installed' ]] || missing+=("$p")
done
if [[ "${#missing[@]}" -eq 0 ]]; then
  echo "setup-system.sh: every package is installed: ${packages[*]}"
  exit 0
fi

as_root=()
if [[ "$(id -u)" != 0 ]]; then
  if ! command -v sudo >/dev/null; then
    echo "setup-system.sh: installing ${missing[*]} needs root, and sudo is not installed;" \
      "run this script as root (su -c 'bash scripts/setup-system.sh')" >&2
    exit 1
  fi
  as_root=(sudo)
fi

install=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get)
echo "setup-system.sh: installing ${missing[*]}"
if [[ "$dry_run" == 1 ]]; then
  echo "${install[*]} update"
  echo "${install[*]} install -y --no-install-recommends ${missing[*]}"
  exit 0
fi
"${install[@]}" update
"${install[@]}" install -y --no-install-recommends "${missing[@]}"

if [[ "$(id -u)" != 0 ]]; then
  echo "setup-system.sh: done. The SLURM and tmpfs tests also need root: as another user they are skipped."
else
  echo "setup-system.sh: done."
fi
