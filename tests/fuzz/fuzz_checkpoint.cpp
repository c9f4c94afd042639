// Checkpoints: the zip container, the records' checksums, the pickle (read
// with no type resolver) and the dictionaries a checkpoint must hold.
#include "studio/errors.h"
#include "tensors/tensor_archive.h"

using namespace studio;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const c10::IValue v = loadTensorArchive(bytes, "fuzz.ckpt", "checkpoint");
    const ArchiveDict root(v, "fuzz.ckpt", "");
    if (root.has("model")) (void)root.dict("model").namedTensors();
    if (root.has("counters")) (void)root.dict("counters").integer("step");
  } catch (const CheckpointError&) {
  }
  return 0;
}
