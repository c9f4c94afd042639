#pragma once
// The errors the engine reports, with one base. Each message names the field,
// file, row or column and says what to do; front-ends show what() as it is.
//   InputError  something the person gave us is wrong: settings, data files,
//               model files, run folders, checkpoints (CLI exit status 2,
//               an inline error in the window);
//   IoError     the machine refused: a full disk, a folder that is not
//               writable (exit status 1).
// Torch-free. Thread: plain values, any thread.

#include <stdexcept>
#include <string>

namespace studio {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct InputError : Error {
  using Error::Error;
};

// A data file or folder (IDX, image folder, CSV table).
struct DataError : InputError {
  using InputError::InputError;
};

// A settings file or a --set value.
struct ConfigFileError : InputError {
  using InputError::InputError;
};

// A model file (model.path) that cannot be used.
struct ModelError : InputError {
  using InputError::InputError;
};

// A checkpoint that is missing, damaged, or not data only.
struct CheckpointError : InputError {
  using InputError::InputError;
};

// Writing a file failed (disk full, not writable, a link where a file must be).
struct IoError : Error {
  using Error::Error;
};

}  // namespace studio
