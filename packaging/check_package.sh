#!/usr/bin/env bash
# Checks a built .deb: its control fields, the files a desktop install needs
# (launchers, binaries, presets, desktop file, icon, AppStream metadata, man
# page, the README and the documents that Help shows), and that the desktop file and metadata
# validate. With --install
# (root, a machine you may change): installs it and runs the CLI through its
# launcher (LibTorch from STUDIO_LIBTORCH_VENV or /opt/training-studio/venv).
#   packaging/check_package.sh build/package/training-studio_0.1.0_amd64.deb [--install]
set -euo pipefail
deb="$1"
fail() { echo "check_package: $*" >&2; exit 1; }
[ -f "$deb" ] || fail "no package at $deb"
files=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/training-studio ./usr/bin/training-studio-cli \
         ./usr/libexec/training-studio/training-studio ./usr/libexec/training-studio/training-studio-cli \
         ./usr/libexec/training-studio/install-libtorch \
         ./usr/share/training-studio/presets/fashion-mnist-cnn.json \
         ./usr/share/training-studio/search/studio_search.py \
         ./usr/share/training-studio/export/studio_export.py \
         ./usr/share/training-studio/export/preprocess.py \
         ./usr/share/applications/training-studio.desktop \
         ./usr/share/icons/hicolor/scalable/apps/training-studio.svg \
         ./usr/share/metainfo/io.github.training_studio.TrainingStudio.metainfo.xml \
         ./usr/share/man/man1/training-studio-cli.1.gz \
         ./usr/share/doc/training-studio/README.md \
         ./usr/share/doc/training-studio/user-guide.md \
         ./usr/share/doc/training-studio/cli.md \
         ./usr/share/doc/training-studio/run-folder.md \
         ./usr/share/doc/training-studio/settings.md; do
  grep -qx -- "$f" <<<"$files" || fail "$deb lacks $f"
done
# The CUDA plug-in, where the build's LibTorch has CUDA (the test says so).
if [ "${STUDIO_EXPECT_CUDA_PLUGIN:-0}" = 1 ]; then
  grep -qx -- ./usr/libexec/training-studio/libstudio_cuda.so <<<"$files" || fail "$deb lacks the CUDA plug-in"
fi
depends=$(dpkg-deb -f "$deb" Depends)
for d in libqt6widgets6 libqcustomplot2.1-qt6 python3-venv; do
  grep -q "$d" <<<"$depends" || fail "Depends lacks $d: $depends"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp"
desktop-file-validate "$tmp/usr/share/applications/training-studio.desktop"
appstreamcli validate --no-net --pedantic "$tmp/usr/share/metainfo/io.github.training_studio.TrainingStudio.metainfo.xml" >/dev/null \
  || fail "the AppStream metadata does not validate"
zcat "$tmp/usr/share/man/man1/training-studio-cli.1.gz" | grep -q "^\.SH OPTIONS" || fail "the man page has no OPTIONS section"
zcat "$tmp/usr/share/man/man1/training-studio-cli.1.gz" | grep -q 'lr\\-find' || fail "the man page does not list the subcommands"
if readelf -d "$tmp/usr/libexec/training-studio/training-studio-cli" | grep -q "R.*PATH"; then
  fail "the installed CLI keeps the build's RPATH"
fi
echo "check_package: $deb has what a desktop install needs"
if [ "${2:-}" = "--install" ]; then
  dpkg -i "$deb"
  training-studio-cli --version
  training-studio-cli presets | grep -qx fashion-mnist-cnn || fail "the installed CLI finds no presets"
  echo "check_package: installed; the CLI runs and finds the presets in /usr/share/training-studio"
fi
