# Training Studio: the two commands of the README.
#   make run   set up (Debian packages, LibTorch venv), build, open the studio on the default preset
#   make test  set up, build, run every test
# Also: make run-cli (train in the terminal), make package (the .deb), make fuzz, make sanitize,
# make bench, make bench-smoke (every benchmark at tiny sizes), make soak, make screenshot (the README's),
# make docs (docs/settings.md from the schema), make format-check / make format (clang-format).
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
# One cache for every clone: paths under the clone are hashed relative to it
# (base_dir) and the build folder is not hashed (hash_dir off, which -g builds
# would otherwise do), so CI's fresh clone in another folder hits what a build
# here put in the cache. The four builds of CI (release with the benchmarks,
# ASan, TSan, fuzz) hold 1.8 GB, inside ccache's default 5 GB.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

FUZZ_SECONDS ?= 60

.PHONY: setup configure build run run-cli test suite-budget package fuzz fuzz-build sanitize sanitize-build bench bench-smoke soak screenshot docs format format-check clean

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

# The suites JOBS at a time (nproc): none shares a folder or a port with another.
# Each suite's time goes to $(BUILD)/suites.xml (JUnit), which suite-budget reads.
# Their scratch files go to a tmpfs where the machine has one large enough
# (tools/suite_scratch.sh says why; SUITE_SCRATCH=disk keeps them on the disk).
test: build
	cd $(BUILD) && $(CURDIR)/tools/suite_scratch.sh ctest -j$(JOBS) $(CTEST_OUTPUT) --timeout 1800 --output-junit suites.xml

# The last make test's wall time and its ten slowest suites; fails when the
# wall time passes SUITE_BUDGET_S by more than a quarter (CI runs it after make
# test, so a change that makes the suites slow is seen in that change).
# docs/testing.md: the budget is 360 s at -j2 on the 2-core machine, where the
# suites take 348 s with nothing else running; CI's machine, shared with other
# work, has run the same suites up to 1.75 times slower, so CI's gate is 520
# s, 1.5 times the suites' time (it fails past 650 s; 900 s until
# 2026-11-30): a change that adds minutes is seen, a busy machine is not.
SUITE_BUDGET_S ?= 520
suite-budget:
	python3 tools/suite_budget.py $(BUILD)/suites.xml --budget-s $(SUITE_BUDGET_S)

# The C++ sources as .clang-format says: format-check names the files that are
# not (CI runs it), format rewrites them. format-check also fails on a new
# include cycle between the engine's folders (tools/layer_cycles.py).
format-check: setup
	bash tools/format_check.sh
	python3 tools/layer_cycles.py
format: setup
	bash tools/format_check.sh --fix

# docs/settings.md from the schema (the test docs_settings_reference checks it).
docs: build
	./$(BUILD)/tools/settings_reference > docs/settings.md

# The .deb (CPack): build/package/training-studio_<version>_<arch>.deb.
package: build
	cd $(BUILD) && cpack -G DEB
	@ls $(BUILD)/package/*.deb

# libFuzzer on every reader of outside bytes (clang, ASan, UBSan), each target
# for FUZZ_SECONDS after replaying its regressions.
fuzz: fuzz-build
	bash tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)
fuzz-build: setup
	@prefix="$(TORCH_PREFIX)"; \
	if [ -z "$$prefix" ]; then prefix=$$("$(VENV)/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)'); fi; \
	cmake --preset fuzz -DCMAKE_PREFIX_PATH="$$prefix" > build-fuzz-configure.log 2>&1 \
	  || { cat build-fuzz-configure.log; exit 1; }
	cmake --build build-fuzz -j$(JOBS)

# The engine, CLI and window suites (offscreen) under AddressSanitizer +
# UndefinedBehaviorSanitizer (build-asan), then the session, queue and
# window-drain suites under ThreadSanitizer (build-tsan, clang). Our code is instrumented, the libraries
# it calls are not: LeakSanitizer's reports of LibTorch's own leaks are
# suppressed in the file named here, each entry saying why, and ThreadSanitizer
# ignores what uninstrumented libraries do inside themselves
# (ignore_noninstrumented_modules: libgomp's and Qt's locks are invisible to
# it). A report from our code fails the suite. Instrumented training is several
# times slower; Qt Test's limit per test function (15 minutes) and ctest's per
# suite (30) are tests/CMakeLists.txt's, the same in every build, so a function
# that hangs is ended by Qt Test, which says which one and, with gdb, prints every
# thread's stack (DEBUGINFOD_URLS empty: gdb never waits on the network for
# symbols); ctest keeps the start and the end of a long output. Each
# suite runs under tests/sanitized_run.sh, which says how one that did not pass
# ended (the signal, its peak memory, the memory and disk left) and stops one
# whose memory passes 3/4 of the machine's with every thread's stack.
# Only the TSan suites' targets are built in build-tsan; they depend on the
# headless runner (tests/CMakeLists.txt), which test_window_live starts under
# torchrun: without it, CI failed there.
TSAN_SUITES := test_session test_nonfinite test_window_live test_window_runs
CTEST_OUTPUT := --output-on-failure --test-output-size-failed 1048576 --test-output-truncation middle
SANITIZER_ENV := DEBUGINFOD_URLS= \
  ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=0 \
  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/fuzz/lsan-libtorch.supp \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  TSAN_OPTIONS=suppressions=$(CURDIR)/tests/tsan.supp:halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1
sanitize: sanitize-build
	cd build-asan && $(SANITIZER_ENV) $(CURDIR)/tools/suite_scratch.sh ctest -j$(JOBS) $(CTEST_OUTPUT) --timeout 1800
	cd build-tsan && $(SANITIZER_ENV) $(CURDIR)/tools/suite_scratch.sh ctest $(CTEST_OUTPUT) --timeout 1800 -R '^($(subst $(eval) ,|,$(TSAN_SUITES)))$$'
# The two sanitizer builds alone (CI's cache is warmed with them).
sanitize-build: setup
	@prefix="$(TORCH_PREFIX)"; \
	if [ -z "$$prefix" ]; then prefix=$$("$(VENV)/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)'); fi; \
	for p in asan tsan; do \
	  cmake --preset $$p -DCMAKE_PREFIX_PATH="$$prefix" -DSTUDIO_PYTHON="$(VENV)/bin/python" > build-$$p-configure.log 2>&1 \
	    || { cat build-$$p-configure.log; exit 1; }; \
	done
	cmake --build build-asan -j$(JOBS)
	cmake --build build-tsan -j$(JOBS) --target $(TSAN_SUITES)

bench: build
	cmake --build $(BUILD) -j$(JOBS) --target benchmarks
	./$(BUILD)/bench/bench_engine --matrix
	./$(BUILD)/bench/bench_image_folder
	./$(BUILD)/bench/bench_memory
	./$(BUILD)/bench/bench_replot
	./$(BUILD)/bench/bench_window
	STUDIO_PYTHON=$(VENV)/bin/python bash bench/predict_bench.sh $(BUILD)
	STUDIO_PYTHON=$(VENV)/bin/python bash bench/search_bench.sh $(BUILD)
	STUDIO_PYTHON=$(VENV)/bin/python bash bench/finetune_bench.sh $(BUILD)
	STUDIO_PYTHON=$(VENV)/bin/python bash bench/photo_pipeline_bench.sh $(BUILD)
	STUDIO_PYTHON=$(VENV)/bin/python bash bench/onnx_bench.sh $(BUILD)
	STUDIO_PYTHON=$(VENV)/bin/python bash bench/audit_bench.sh $(BUILD)
	STUDIO_PYTHON=$(VENV)/bin/python bash bench/detection_bench.sh $(BUILD)
	STUDIO_PYTHON=$(VENV)/bin/python bash bench/detection_infer_bench.sh $(BUILD)
	STUDIO_PYTHON=$(VENV)/bin/python bash bench/segmentation_figures_bench.sh $(BUILD)
	STUDIO_PYTHON=$(VENV)/bin/python bash bench/segmentation_bench.sh $(BUILD)
	STUDIO_PYTHON=$(VENV)/bin/python bash bench/segmentation_infer_bench.sh $(BUILD)
	STUDIO_PYTHON=$(VENV)/bin/python bash bench/active_learning_bench.sh $(BUILD)
	bash bench/search_shared_bench.sh $(BUILD)

# Every benchmark of make bench at tiny sizes, one round each: that each still
# runs to its end (CI runs it; the figures it prints are not measurements).
bench-smoke: build
	cmake --build $(BUILD) -j$(JOBS) --target benchmarks
	./$(BUILD)/bench/bench_engine --matrix --smoke
	./$(BUILD)/bench/bench_image_folder 512
	./$(BUILD)/bench/bench_memory --batch 4 --reps 1
	./$(BUILD)/bench/bench_replot --points 2000 --curves 2 --repeats 2
	QT_QPA_PLATFORM=offscreen ./$(BUILD)/bench/bench_window --steps 40 --rounds 1
	QT_QPA_PLATFORM=offscreen ./$(BUILD)/bench/bench_soak --minutes 0.1 --smoke
	BENCH_SMOKE=1 STUDIO_PYTHON=$(VENV)/bin/python bash bench/predict_bench.sh $(BUILD)
	BENCH_SMOKE=1 STUDIO_PYTHON=$(VENV)/bin/python bash bench/search_bench.sh $(BUILD)
	BENCH_SMOKE=1 STUDIO_PYTHON=$(VENV)/bin/python bash bench/finetune_bench.sh $(BUILD)
	BENCH_SMOKE=1 STUDIO_PYTHON=$(VENV)/bin/python bash bench/photo_pipeline_bench.sh $(BUILD)
	BENCH_SMOKE=1 STUDIO_PYTHON=$(VENV)/bin/python bash bench/onnx_bench.sh $(BUILD)
	BENCH_SMOKE=1 STUDIO_PYTHON=$(VENV)/bin/python bash bench/audit_bench.sh $(BUILD)
	BENCH_SMOKE=1 STUDIO_PYTHON=$(VENV)/bin/python bash bench/coco_eval_bench.sh $(BUILD)
	BENCH_SMOKE=1 STUDIO_PYTHON=$(VENV)/bin/python bash bench/detection_bench.sh $(BUILD)
	BENCH_SMOKE=1 STUDIO_PYTHON=$(VENV)/bin/python bash bench/detection_infer_bench.sh $(BUILD)
	BENCH_SMOKE=1 STUDIO_PYTHON=$(VENV)/bin/python bash bench/segmentation_figures_bench.sh $(BUILD)
	BENCH_SMOKE=1 STUDIO_PYTHON=$(VENV)/bin/python bash bench/segmentation_bench.sh $(BUILD)
	BENCH_SMOKE=1 STUDIO_PYTHON=$(VENV)/bin/python bash bench/segmentation_infer_bench.sh $(BUILD)
	BENCH_SMOKE=1 STUDIO_PYTHON=$(VENV)/bin/python bash bench/active_learning_bench.sh $(BUILD)
	BENCH_SMOKE=1 bash bench/search_shared_bench.sh $(BUILD)

# A long run with the window attached (offscreen), metrics every step: resident
# memory, dropped records and the UI thread's share (bench/RESULTS.md).
SOAK_MINUTES ?= 30
soak: build
	cmake --build $(BUILD) -j$(JOBS) --target benchmarks
	./$(BUILD)/bench/bench_soak --minutes $(SOAK_MINUTES)

# The README's screenshots: the real window, offscreen, after 700 steps of the
# default preset; then a second run at a third of its learning rate, and the
# two compared (overlaid, the runs table showing the setting that differs).
SCREENSHOT := resources/screenshots/studio.png
COMPARE_SCREENSHOT := resources/screenshots/compare.png
screenshot: build
	rm -rf $(BUILD)/screenshot-runs
	QT_QPA_PLATFORM=offscreen ./$(BUILD)/app/training-studio --preset $(PRESET) \
	  --set evaluation.every_steps=100 --set output.dir=$(BUILD)/screenshot-runs \
	  --quit-after-steps 700 --screenshot $(SCREENSHOT)
	QT_QPA_PLATFORM=offscreen ./$(BUILD)/app/training-studio --preset $(PRESET) --set name=lower-lr \
	  --set schedule.onecycle.max_lr=0.033 --set optimizer.lr=0.033 \
	  --set evaluation.every_steps=100 --set output.dir=$(BUILD)/screenshot-runs --quit-after-steps 700
	runs=""; for d in $(BUILD)/screenshot-runs/*/; do runs="$$runs --compare $${d%/}"; done; \
	QT_QPA_PLATFORM=offscreen ./$(BUILD)/app/training-studio --preset $(PRESET) \
	  --set output.dir=$(BUILD)/screenshot-runs $$runs --screenshot $(COMPARE_SCREENSHOT)

clean:
	rm -rf $(BUILD) $(BUILD)-configure.log build-fuzz build-fuzz-configure.log
