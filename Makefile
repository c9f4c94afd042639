# Training Studio: the two commands of the README.
#   make run   set up (Debian packages, LibTorch venv), build, open the studio on the default preset
#   make test  set up, build, run every test
# Also: make run-cli (train in the terminal), make fuzz, make bench, make screenshot (the README's).
# A user with their own LibTorch: make build TORCH_PREFIX=/path/to/libtorch
SHELL := /bin/bash
STUDIO_CACHE ?= $(HOME)/.cache/training-studio
VENV := $(STUDIO_CACHE)/venv
JOBS ?= $(shell nproc)
PRESET ?= fashion-mnist-cnn
BUILD := build

export STUDIO_CACHE
export PATH := $(VENV)/bin:$(PATH)
# ccache with precompiled headers
export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime

FUZZ_SECONDS ?= 60

.PHONY: setup configure build run run-cli test fuzz bench screenshot clean

setup:
	@bash packaging/setup.sh >/dev/null

configure: setup
	@prefix="$(TORCH_PREFIX)"; \
	if [ -z "$$prefix" ]; then prefix=$$("$(VENV)/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)'); fi; \
	cmake --preset default -DCMAKE_PREFIX_PATH="$$prefix" -DSTUDIO_PYTHON="$(VENV)/bin/python" > $(BUILD)-configure.log 2>&1 \
	  || { cat $(BUILD)-configure.log; exit 1; }

build: configure
	cmake --build $(BUILD) -j$(JOBS)

run: build
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY$$QT_QPA_PLATFORM" ]; then \
	  echo "make run: no display to open the studio on (DISPLAY and WAYLAND_DISPLAY are unset)." >&2; \
	  echo "  Run it in a desktop session, or over ssh -X; 'xvfb-run make run' starts it on a virtual display;" >&2; \
	  echo "  'make run-cli' trains the same preset in the terminal." >&2; \
	  exit 2; \
	fi
	./$(BUILD)/app/training-studio --preset $(PRESET)

run-cli: build
	./$(BUILD)/app/training-studio-cli train --preset $(PRESET)

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 1200

# libFuzzer on every reader of outside bytes (clang, ASan, UBSan), each target
# for FUZZ_SECONDS after replaying its regressions.
fuzz: setup
	@prefix="$(TORCH_PREFIX)"; \
	if [ -z "$$prefix" ]; then prefix=$$("$(VENV)/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)'); fi; \
	cmake --preset fuzz -DCMAKE_PREFIX_PATH="$$prefix" > build-fuzz-configure.log 2>&1 \
	  || { cat build-fuzz-configure.log; exit 1; }
	cmake --build build-fuzz -j$(JOBS)
	bash tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

bench: build
	./$(BUILD)/bench/bench_engine
	./$(BUILD)/bench/bench_image_folder
	./$(BUILD)/bench/bench_replot
	./$(BUILD)/bench/bench_window

# The README's screenshot: the real window, offscreen, after 700 steps of the default preset.
SCREENSHOT := resources/screenshots/studio.png
screenshot: build
	rm -rf $(BUILD)/screenshot-runs
	QT_QPA_PLATFORM=offscreen ./$(BUILD)/app/training-studio --preset $(PRESET) \
	  --set evaluation.every_steps=100 --set output.dir=$(BUILD)/screenshot-runs \
	  --quit-after-steps 700 --screenshot $(SCREENSHOT)

clean:
	rm -rf $(BUILD) $(BUILD)-configure.log build-fuzz build-fuzz-configure.log
