#include "dist/process_group.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <mutex>

#include <netdb.h>
#include <sys/socket.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include "cuda/cuda_side.h"
#include "studio/errors.h"
#include "studio/log.h"

namespace studio {

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// A whole number in [lo, hi] from torchrun's variable `name`.
int intVariable(const char* name, const char* value, long lo, long hi, const std::string& why) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || v < lo || v > hi)
    throw InputError(std::string("environment variable ") + name + "=" + value + " " + why +
                     " (torchrun sets it; for a run of its own unset WORLD_SIZE)");
  return static_cast<int>(v);
}

std::string messageOf(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return c->what_without_backtrace();
  return e.what();
}

}  // namespace

std::optional<RankEnvironment> RankEnvironment::read() {
  const char* worldText = env("WORLD_SIZE");
  if (!worldText) return std::nullopt;
  RankEnvironment r;
  r.world = intVariable("WORLD_SIZE", worldText, 1, 1 << 20, "must be a whole number of processes, at least 1");
  const char* rankText = env("RANK");
  if (!rankText) throw InputError("WORLD_SIZE is set but RANK is not: start the processes with torchrun");
  r.rank = intVariable("RANK", rankText, 0, r.world - 1,
                       "must be a rank between 0 and WORLD_SIZE - 1 = " + std::to_string(r.world - 1));
  if (const char* local = env("LOCAL_RANK"))
    r.localRank = intVariable("LOCAL_RANK", local, 0, r.world - 1,
                              "must be between 0 and WORLD_SIZE - 1 = " + std::to_string(r.world - 1));
  r.localWorld = r.world;
  if (const char* localWorld = env("LOCAL_WORLD_SIZE"))
    r.localWorld = intVariable("LOCAL_WORLD_SIZE", localWorld, 1, r.world, "must be between 1 and WORLD_SIZE");
  if (r.world == 1) return r;
  const char* addr = env("MASTER_ADDR");
  const char* port = env("MASTER_PORT");
  if (!addr || !port)
    throw InputError(std::string("WORLD_SIZE=") + worldText + " but " + (!addr ? "MASTER_ADDR" : "MASTER_PORT") +
                     " is not set: start the processes with torchrun, or set rank 0's address and a free port");
  r.masterAddr = addr;
  // Resolved once here: c10d retries an unknown name until its timeout and
  // then reports it under pages of stack frames.
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(addr, nullptr, &hints, &found); rc != 0)
    throw InputError(std::string("MASTER_ADDR \"") + addr + "\" is not an address this machine can resolve (" +
                     ::gai_strerror(rc) + "): set it to rank 0's host name or IP address (torchrun --master-addr)");
  ::freeaddrinfo(found);
  r.masterPort = intVariable("MASTER_PORT", port, 1, 65535, "must be a TCP port between 1 and 65535");
  const char* agent = env("TORCHELASTIC_USE_AGENT_STORE");
  r.agentStore = agent && std::string(agent) == "True";
  if (const char* restarts = env("TORCHELASTIC_RESTART_COUNT")) r.restartCount = restarts;
  return r;
}

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> gloo;
  c10::intrusive_ptr<c10d::Backend> nccl;  // CUDA tensors, when built with NCCL

  c10d::Backend& backendFor(const std::vector<torch::Tensor>& tensors) {
    if (nccl && !tensors.empty() && tensors.front().is_cuda()) return *nccl;
    return *gloo;
  }
};

ProcessGroup::ProcessGroup(const RankEnvironment& env, std::chrono::milliseconds timeout)
    : m_impl(std::make_unique<Impl>()), m_env(env), m_timeout(timeout), m_backendName("gloo") {
  const std::string where = m_env.masterAddr + ":" + std::to_string(m_env.masterPort);
  c10d::TCPStoreOptions o;
  o.port = static_cast<uint16_t>(m_env.masterPort);
  o.numWorkers = m_env.world;
  o.timeout = timeout;
  // Under torchrun's agent the agent hosts the store and every rank is a
  // client (as torch.distributed does it); otherwise rank 0 hosts it.
  o.isServer = !m_env.agentStore && m_env.rank == 0;
  try {
    auto tcp = c10::make_intrusive<c10d::TCPStore>(m_env.masterAddr, o);
    const std::string prefix =
        m_env.agentStore ? "/worker/attempt_" + m_env.restartCount + "/training-studio" : "training-studio";
    m_impl->store = c10::make_intrusive<c10d::PrefixStore>(prefix, tcp);
  } catch (const std::exception& e) {
    const std::string why = messageOf(e);
    if (o.isServer)
      throw InputError("rank 0 could not open the rendezvous at " + where + " (MASTER_ADDR:MASTER_PORT): " + why +
                       " -- the port may be in use by another program or run; choose another with "
                       "torchrun --master-port, or check that MASTER_ADDR is this machine");
    throw InputError(describe() + " could not reach the rendezvous at " + where + " within distributed.timeout_s (" +
                     std::to_string(timeout.count() / 1000) + " s): " + why +
                     " -- is rank 0 running, and is MASTER_ADDR:MASTER_PORT its address?");
  }
  try {
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    m_impl->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(m_impl->store, m_env.rank, m_env.world, options);
  } catch (const std::exception& e) {
    throw RankLost(describe() + " could not connect to the other ranks (Gloo): " + messageOf(e));
  }
  log::info("joined the process group as " + describe() + " (rendezvous " + where +
            (m_env.agentStore ? ", torchrun's store" : "") + ", Gloo)");
}

ProcessGroup::~ProcessGroup() = default;

std::string ProcessGroup::describe() const {
  return "rank " + std::to_string(m_env.rank) + " of " + std::to_string(m_env.world);
}

void ProcessGroup::useDevice(const torch::Device& device) {
  if (!device.is_cuda() || m_impl->nccl) return;
  CudaSide* side = cudaSide();
  try {
    if (side)
      m_impl->nccl = side->makeNccl(c10::make_intrusive<c10d::PrefixStore>("nccl", m_impl->store), m_env.rank,
                                    m_env.world, m_timeout);
  } catch (const std::exception& e) {
    throw RankLost(describe() + " could not set up NCCL on " + device.str() + ": " + messageOf(e));
  }
  if (m_impl->nccl) {
    m_backendName = "nccl";
    log::info(describe() + ": collectives on " + device.str() + " through NCCL");
  } else {
    log::warn("this LibTorch build has no NCCL here: collectives on " + device.str() +
              " go through Gloo (slower: copies through host memory)");
  }
}

void ProcessGroup::wait(const c10::intrusive_ptr<c10d::Work>& work, const std::string& what) {
  try {
    work->wait();
  } catch (const std::exception& e) {
    throw RankLost(describe() + ": " + what + " with the other ranks failed (" + messageOf(e) +
                   "): another rank has stopped (see its output) or did not answer within distributed.timeout_s (" +
                   std::to_string(m_timeout.count() / 1000) + " s)");
  }
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::allReduceAsync(std::vector<torch::Tensor>& tensors) {
  return m_impl->backendFor(tensors).allreduce(tensors, c10d::AllreduceOptions{});
}

void ProcessGroup::complete(const std::string& what, const std::function<c10::intrusive_ptr<c10d::Work>()>& start) {
  c10::intrusive_ptr<c10d::Work> work;
  try {
    work = start();
  } catch (const std::exception& e) {
    throw RankLost(describe() + ": " + what + " could not start (" + messageOf(e) + ")");
  }
  wait(work, what);
}

void ProcessGroup::allReduceSum(std::vector<torch::Tensor>& tensors, const std::string& what) {
  complete(what, [&] { return allReduceAsync(tensors); });
}

void ProcessGroup::broadcast(std::vector<torch::Tensor>& tensors, const std::string& what) {
  for (auto& t : tensors) {
    std::vector<torch::Tensor> one{t};
    complete(what, [&] { return m_impl->backendFor(one).broadcast(one, c10d::BroadcastOptions{}); });
  }
}

torch::Tensor ProcessGroup::allGather(const torch::Tensor& tensor, const std::string& what) {
  std::vector<torch::Tensor> input{tensor.contiguous()};
  std::vector<std::vector<torch::Tensor>> output(1);
  for (int r = 0; r < m_env.world; ++r) output[0].push_back(torch::empty_like(input[0]));
  complete(what, [&] { return m_impl->backendFor(input).allgather(output, input, c10d::AllgatherOptions{}); });
  return torch::stack(output[0]);
}

std::string ProcessGroup::shareText(const std::string& key, const std::string& textOnRank0) {
  try {
    if (leader()) {
      m_impl->store->set(key, std::vector<uint8_t>(textOnRank0.begin(), textOnRank0.end()));
      return textOnRank0;
    }
    const std::vector<uint8_t> v = m_impl->store->get(key);  // waits up to the timeout
    return std::string(v.begin(), v.end());
  } catch (const std::exception& e) {
    throw RankLost(describe() + ": waiting for rank 0's " + key + " failed (" + messageOf(e) +
                   "): rank 0 has stopped (see its output) or did not answer within distributed.timeout_s");
  }
}

namespace {
std::mutex groupMutex;
std::unique_ptr<ProcessGroup> group;
bool groupRead = false;
}  // namespace

ProcessGroup* joinProcessGroup(std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(groupMutex);
  if (groupRead) return group.get();
  const auto e = RankEnvironment::read();
  if (e && e->world > 1) group = std::make_unique<ProcessGroup>(*e, timeout);
  groupRead = true;
  return group.get();
}

ProcessGroup* currentProcessGroup() {
  std::lock_guard<std::mutex> lock(groupMutex);
  return group.get();
}

}  // namespace studio
