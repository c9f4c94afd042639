#include "cuda/cuda_side.h"

#include "studio/devices.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <ATen/detail/CUDAHooksInterface.h>

#include <dlfcn.h>
#include <unistd.h>

namespace studio {

namespace {

// Set before main by loadCudaSide (below), read after: plain data only, no
// object that needs a constructor of its own to run first.
CudaSide* g_side = nullptr;
char g_status[1024];

void say(const std::string& text) { std::snprintf(g_status, sizeof g_status, "%s", text.c_str()); }

bool readable(const std::string& path) { return !path.empty() && ::access(path.c_str(), R_OK) == 0; }

// Where the plug-in is: STUDIO_CUDA_PLUGIN, beside the program (the build
// folder's app/ and the installed libexec folder), the build folder. Empty
// when none is found.
std::string findPlugin() {
  if (const char* named = std::getenv("STUDIO_CUDA_PLUGIN"); named && *named) return named;
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    std::string beside(exe, static_cast<size_t>(n));
    beside = beside.substr(0, beside.rfind('/') + 1) + "libstudio_cuda.so";
    if (readable(beside)) return beside;
  }
#ifdef STUDIO_CUDA_PLUGIN_BUILT
  if (readable(STUDIO_CUDA_PLUGIN_BUILT)) return STUDIO_CUDA_PLUGIN_BUILT;
#endif
  return {};
}

// Before main (and so before anything asks LibTorch about CUDA); its
// strings are locals, the results plain data.
__attribute__((constructor(101))) void loadCudaSide() {
  const char* wanted = std::getenv("STUDIO_CUDA");
  const bool never = wanted && std::strcmp(wanted, "0") == 0;
  const bool always = wanted && std::strcmp(wanted, "1") == 0;
  if (never) return say("not loaded (STUDIO_CUDA=0): the CPU only");
#ifndef STUDIO_CUDA_PLUGIN_BUILT
  if (!always) return say("this build's LibTorch has no CUDA: the CPU only");
#endif
  // The driver's library: without it no GPU can be used.
  if (!always && !::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL))
    return say("not loaded: no NVIDIA driver here (libcuda.so.1 not found): the CPU only");
  const std::string path = findPlugin();
  if (path.empty()) return say("not loaded: libstudio_cuda.so is neither beside the program nor where it was built");
  void* plugin = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!plugin) return say(std::string("not loaded: ") + ::dlerror());
  auto* entry = reinterpret_cast<CudaSide* (*)()>(::dlsym(plugin, "studio_cuda_side"));
  if (!entry) return say("not loaded: " + path + " has no studio_cuda_side");
  g_side = entry();
  say("loaded from " + path);
}

}  // namespace

CudaSide* cudaSide() { return g_side; }

std::string cudaSideStatus() {
  std::string status = std::string("CUDA: ") + g_status;
  if (!g_side) return status;
  // LibTorch's own answer: its CUDA hooks are the plug-in's libtorch_cuda's
  // only if nothing asked for them before the plug-in loaded.
  const auto& hooks = at::detail::getCUDAHooks();
  if (!hooks.hasCUDART()) return status + ", but LibTorch was asked about CUDA before it loaded: the CPU only";
  const long runtime = hooks.versionCUDART();
  return status + " (CUDA runtime " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) +
         ", " + std::to_string(hooks.getNumGPUs()) + " GPU(s) seen)";
}

}  // namespace studio
