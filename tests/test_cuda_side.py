#!/usr/bin/env python3
"""LibTorch's CUDA half as a plug-in (engine/src/cuda/cuda_side.h): the
programs link only LibTorch's CPU half and load libstudio_cuda.so (with
libtorch_cuda.so and the CUDA libraries) when they start, where an NVIDIA
driver is; STUDIO_CUDA=1 loads it anyway, =0 never.

Checked here: the CLI names no CUDA library of its own (the point: each start
without a driver skips loading them); `--version` says whether the plug-in
is loaded and why not, and agrees with the machine (is libcuda.so.1 there?);
loaded on purpose, LibTorch's own CUDA hooks are the plug-in's (they are only
if the plug-in loaded before anything asked LibTorch about CUDA), and a run
on the CPU trains beside it; a plug-in that is not there is named; a GPU asked
for where none can be used says why.
Environment (ctest sets it): STUDIO_CLI, STUDIO_PRESET_DIR.
"""
import ctypes
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from suite_limits import HANG_LIMIT_S  # noqa: E402

CLI = os.environ["STUDIO_CLI"]


def cli(*args, **env):
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=HANG_LIMIT_S,
                       env={**os.environ, **env})
    return p.returncode, p.stdout + p.stderr


def driver_here():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


class CudaSideTest(unittest.TestCase):
    def test_the_cli_links_no_cuda_library(self):
        needed = subprocess.run(["readelf", "-d", CLI], capture_output=True, text=True, check=True).stdout
        libraries = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", needed)
        self.assertIn("libtorch_cpu.so", libraries)
        for name in libraries:
            self.assertNotRegex(name, r"cuda|cudart|cublas|cudnn|nccl", needed)

    def test_version_says_whether_cuda_is_loaded_as_the_machine_has_a_driver(self):
        env = {k: v for k, v in os.environ.items() if k not in ("STUDIO_CUDA", "STUDIO_CUDA_PLUGIN")}
        p = subprocess.run([CLI, "--version"], capture_output=True, text=True, timeout=HANG_LIMIT_S, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        first, second = p.stdout.splitlines()[:2]
        self.assertRegex(first, r"^training-studio-cli \d+\.\d+\.\d+$")
        if driver_here():
            self.assertRegex(second, r"^CUDA: loaded from .*libstudio_cuda\.so \(CUDA runtime \d+\.\d+, \d+ GPU")
        else:
            self.assertEqual(second, "CUDA: not loaded: no NVIDIA driver here (libcuda.so.1 not found): the CPU only")

    def test_loaded_on_purpose_libtorch_uses_it_and_a_cpu_run_trains(self):
        code, text = cli("--version", STUDIO_CUDA="1")
        self.assertEqual(code, 0, text)
        # hasCUDART() and the runtime's version come from LibTorch's hooks: libtorch_cuda's, not the stub's.
        self.assertRegex(text, r"CUDA: loaded from \S+/libstudio_cuda\.so \(CUDA runtime \d+\.\d+, \d+ GPU\(s\) seen\)")
        self.assertNotIn("asked about CUDA before", text)
        with tempfile.TemporaryDirectory(prefix="studio-cuda-side-") as out:
            code, text = cli("train", "--preset", "fashion-mnist-mlp", "--set", "data.train_limit=256",
                             "--set", "train.max_steps=3", "--set", "performance.device=cpu", "--out", out,
                             STUDIO_CUDA="1")
            self.assertEqual(code, 0, text)
            self.assertTrue(any(os.path.isfile(os.path.join(out, d, "summary.json")) for d in os.listdir(out)))

    def test_never_loaded_when_told_not_to(self):
        code, text = cli("--version", STUDIO_CUDA="0")
        self.assertEqual(code, 0, text)
        self.assertIn("CUDA: not loaded (STUDIO_CUDA=0): the CPU only", text)

    def test_a_plugin_that_is_not_there_is_named(self):
        code, text = cli("--version", STUDIO_CUDA="1", STUDIO_CUDA_PLUGIN="/nonexistent/libstudio_cuda.so")
        self.assertEqual(code, 0, text)
        self.assertIn("CUDA: not loaded: /nonexistent/libstudio_cuda.so: cannot open shared object file", text)

    def test_a_gpu_asked_for_where_none_can_be_used_says_why(self):
        if driver_here():
            self.skipTest("a driver is here: the GPU may well be usable")
        with tempfile.TemporaryDirectory(prefix="studio-cuda-side-") as out:
            code, text = cli("train", "--preset", "fashion-mnist-mlp", "--set", "performance.device=cuda",
                             "--out", out)
        self.assertEqual(code, 2, text)
        self.assertIn('performance.device is "cuda" but no CUDA GPU is available here; use "auto" or "cpu" '
                      "(CUDA: not loaded: no NVIDIA driver here", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
