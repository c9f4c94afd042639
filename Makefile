# Training Studio: the two commands of the README.
#   make run   set up (Debian packages, LibTorch venv), build, start on the default preset
#   make test  set up, build, run every test
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

.PHONY: setup configure build run test bench clean

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
	./$(BUILD)/app/training-studio-cli train --preset $(PRESET)

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 1200

bench: build
	./$(BUILD)/bench/bench_engine

clean:
	rm -rf $(BUILD) $(BUILD)-configure.log
