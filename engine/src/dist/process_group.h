#pragma once
// The processes of one data-parallel run, as PyTorch's launcher starts them:
// `torchrun --no-python --nproc-per-node N training-studio-cli train ...`
// sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT in each
// worker; this joins them through LibTorch's own c10d (a TCPStore for the
// rendezvous, the Gloo process group on the CPU, NCCL on CUDA when LibTorch
// has it) and runs the few collectives a data-parallel run needs.
//
// A collective that fails (a rank stopped, or did not answer within
// distributed.timeout_s) throws RankLost, naming what was being exchanged.
// Thread: the engine thread; allReduceAsync may be called from the autograd
// engine's thread during a backward pass (the gradient hooks).

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/types.h>

namespace c10d {
class Work;
}

namespace studio {

struct RankLost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// torchrun's variables, read and checked (InputError naming the variable).
struct RankEnvironment {
  int rank = 0, world = 1, localRank = 0;
  int localWorld = 1;  // LOCAL_WORLD_SIZE: the processes on this machine
  std::string masterAddr;
  int masterPort = 0;
  bool agentStore = false;  // TORCHELASTIC_USE_AGENT_STORE: torchrun's agent hosts the store
  std::string restartCount = "0";
  // None when WORLD_SIZE is not set (a run of its own).
  static std::optional<RankEnvironment> read();
};

class ProcessGroup {
 public:
  // Joins the other ranks (waits for them up to `timeout`); InputError when
  // the variables are wrong or MASTER_PORT cannot be used.
  ProcessGroup(const RankEnvironment& env, std::chrono::milliseconds timeout);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return m_env.rank; }
  int world() const { return m_env.world; }
  int localRank() const { return m_env.localRank; }
  int localWorld() const { return m_env.localWorld; }
  bool leader() const { return m_env.rank == 0; }
  const std::string& backendName() const { return m_backendName; }
  // "rank 1 of 2"
  std::string describe() const;
  // The training device: collectives on CUDA tensors go through NCCL when
  // LibTorch was built with it (Gloo otherwise, and always on the CPU).
  void useDevice(const torch::Device& device);

  // In place, summed over the ranks; `what` names the exchange in errors.
  void allReduceSum(std::vector<torch::Tensor>& tensors, const std::string& what);
  // Started, not waited for: wait(work, what) later (the gradient buckets).
  c10::intrusive_ptr<c10d::Work> allReduceAsync(std::vector<torch::Tensor>& tensors);
  void wait(const c10::intrusive_ptr<c10d::Work>& work, const std::string& what);
  // Rank 0's values into every rank's tensors, in place.
  void broadcast(std::vector<torch::Tensor>& tensors, const std::string& what);
  // Every rank's tensor (all the same shape), stacked: [world, ...].
  torch::Tensor allGather(const torch::Tensor& tensor, const std::string& what);
  // Rank 0's text on every rank (through the store).
  std::string shareText(const std::string& key, const std::string& textOnRank0);

 private:
  // Starts a collective (start() returns its work) and waits for it; both
  // failures name `what`.
  void complete(const std::string& what, const std::function<c10::intrusive_ptr<c10d::Work>()>& start);

  struct Impl;
  std::unique_ptr<Impl> m_impl;
  RankEnvironment m_env;
  std::chrono::milliseconds m_timeout;
  std::string m_backendName;
};

// The process's group: joined once by the first run under torchrun (the
// settings' distributed.timeout_s), kept until the process ends. nullptr
// when the process runs alone (WORLD_SIZE unset or 1).
ProcessGroup* joinProcessGroup(std::chrono::milliseconds timeout);
ProcessGroup* currentProcessGroup();

}  // namespace studio
