#!/usr/bin/env bash
# Installs everything Training Studio needs to build and test on Debian 12.
# Idempotent: a second run only checks and costs seconds.
#   - Debian packages (Qt 6, QCustomPlot, spdlog, nlohmann_json, readerwriterqueue,
#     CLI11, zlib, libpng, TurboJPEG, libcsv, OpenSSL's libcrypto (SHA-256),
#     Gloo's headers (LibTorch's c10d Gloo process group is declared with them),
#     ninja, ccache, xvfb, a font for offscreen rendering, the Fashion-MNIST
#     data set, clang with its libFuzzer and sanitizer runtimes for make fuzz,
#     clang-format for make format-check,
#     gdb, through which Qt Test prints every thread's stack when a test hangs)
#   - LibTorch 2.11 as the pip wheel torch==2.11.0 in a virtual environment kept
#     outside the clone, in $STUDIO_CACHE (default ~/.cache/training-studio),
#     with numpy and Pillow (the tests' reference image decoder) and safetensors
#     (the tests read the exported model.safetensors with it), Optuna (the
#     search's samplers, pruners and study storage), optuna-dashboard (a
#     study's web view), scikit-learn (Optuna's fANOVA importances; the
#     metrics' references), and onnx, onnxscript and onnxruntime (export
#     --format onnx writes and checks model.onnx with them), psycopg2 (a
#     search's study in PostgreSQL, search --storage), and cleanlab
#     (test_audit's reference for the audit's label issues only: it is AGPL,
#     and the studio neither imports nor ships it), and pycocotools (the
#     reference of the studio's COCO detection figures, in the tests only)
#   - PostgreSQL's server, which test_search_shared starts in a temporary
#     folder (a study shared by several runners)
# Prints the virtual environment's path on its last line.
#
# The installed package (make package: build/package/training-studio_*.deb,
# installed with `sudo apt install ./training-studio_*.deb`) does not carry
# LibTorch (the wheel and its CUDA libraries are several GB): its postinst
# runs /usr/libexec/training-studio/install-libtorch, which puts the same
# torch==2.11.0 wheel in /opt/training-studio/venv, and the launchers in
# /usr/bin add that venv's torch/lib to LD_LIBRARY_PATH before starting the
# binaries in /usr/libexec/training-studio. STUDIO_LIBTORCH_VENV points them
# (and install-libtorch) at another venv, this script's for instance.
set -euo pipefail

cache="${STUDIO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/training-studio}"
venv="$cache/venv"
torch_version="2.11.0"
torchvision_version="0.26.0"  # the release built against torch 2.11

debs=(build-essential qt6-base-dev qt6-base-dev-tools libgl-dev
      libqcustomplot-dev libqcustomplot2.1-qt6
      libspdlog-dev nlohmann-json3-dev libreaderwriterqueue-dev libcli11-dev
      zlib1g-dev libpng-dev libturbojpeg0-dev libcsv-dev libssl-dev libyaml-cpp-dev libtinyxml2-dev
      libprotobuf-dev protobuf-compiler libcrcutil-dev libgloo-dev libgoogle-perftools-dev
      help2man desktop-file-utils appstream dpkg-dev
      ninja-build ccache gdb xvfb xauth dataset-fashion-mnist clang libclang-rt-14-dev clang-format
      python3-venv fonts-dejavu-core postgresql)

missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

py="${STUDIO_PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating virtual environment $venv" >&2
  mkdir -p "$cache"
  "$py" -m venv "$venv"
fi
have=$("$venv/bin/python" - <<PY 2>/dev/null || true
import importlib.metadata as m
try:
    ok = m.version("torch").split("+")[0] == "$torch_version"
    m.version("numpy"); m.version("cmake"); m.version("pillow"); m.version("safetensors"); m.version("tensorboard")
    m.version("optuna"); m.version("optuna-dashboard"); m.version("scikit-learn")
    m.version("onnx"); m.version("onnxscript"); m.version("onnxruntime"); m.version("psycopg2-binary")
    m.version("cleanlab"); m.version("pycocotools")
    ok = ok and m.version("torchvision").split("+")[0] == "$torchvision_version"
    print("ok" if ok else "")
except Exception:
    print("")
PY
)
if [ "$have" != "ok" ]; then
  echo "setup: installing torch==$torch_version, torchvision==$torchvision_version, numpy, pillow, safetensors, tensorboard, optuna, optuna-dashboard, scikit-learn, onnx, onnxscript, onnxruntime, psycopg2-binary, cleanlab, pycocotools and cmake into $venv (a few GB, once)" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --progress-bar off \
      "torch==$torch_version" "torchvision==$torchvision_version" numpy pillow safetensors tensorboard optuna optuna-dashboard scikit-learn onnx onnxscript onnxruntime psycopg2-binary cleanlab pycocotools "cmake>=3.28" >&2
fi
echo "$venv"
