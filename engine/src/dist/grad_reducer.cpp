#include "dist/grad_reducer.h"

#include <exception>
#include <mutex>

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "dist/process_group.h"

namespace studio {

struct GradReducer::State {
  ProcessGroup& group;
  std::vector<torch::Tensor> params;
  struct Bucket {
    std::vector<size_t> members;  // indices into params
    torch::Tensor flat;           // the gradients, concatenated, being reduced
    c10::intrusive_ptr<c10d::Work> work;
    size_t ready = 0;
  };
  std::vector<Bucket> buckets;
  std::vector<size_t> bucketOf;
  std::mutex mutex;
  bool armed = false;
  size_t nextLaunch = 0;
  std::exception_ptr error;  // from a hook; finish() throws it

  State(ProcessGroup& g, std::vector<torch::Tensor> p) : group(g), params(std::move(p)) {}

  void launch(Bucket& b) {
    std::vector<torch::Tensor> parts;
    for (size_t m : b.members) {
      const torch::Tensor& g = params[m].grad();
      parts.push_back(g.defined() ? g.detach().reshape(-1) : torch::zeros({params[m].numel()}, params[m].options()));
    }
    b.flat = torch::cat(parts);
    std::vector<torch::Tensor> v{b.flat};
    b.work = group.allReduceAsync(v);
  }

  // Launches the buckets that are ready, in order (caller holds the mutex).
  void launchReady() {
    while (nextLaunch < buckets.size() && buckets[nextLaunch].ready == buckets[nextLaunch].members.size()) {
      launch(buckets[nextLaunch]);
      ++nextLaunch;
    }
  }

  void onAccumulated(size_t index) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!armed || error) return;
    try {
      ++buckets[bucketOf[index]].ready;
      launchReady();
    } catch (...) {
      error = std::current_exception();
    }
  }
};

namespace {

struct AccumulatedHook : torch::autograd::PostAccumulateGradHook {
  std::weak_ptr<GradReducer::State> state;
  size_t index;
  AccumulatedHook(std::weak_ptr<GradReducer::State> s, size_t i) : state(std::move(s)), index(i) {}
  void operator()(const torch::autograd::Variable& /*param*/) override {
    if (auto s = state.lock()) s->onAccumulated(index);
  }
};

}  // namespace

GradReducer::GradReducer(std::vector<torch::Tensor> params, ProcessGroup& group, int64_t bucketBytes)
    : m_state(std::make_shared<State>(group, std::move(params))) {
  State& s = *m_state;
  s.bucketOf.assign(s.params.size(), 0);
  // Reverse order: the backward pass produces the last layers' gradients
  // first. A bucket holds one dtype and at most bucketBytes (or one tensor).
  int64_t bytes = 0;
  for (size_t k = s.params.size(); k-- > 0;) {
    const torch::Tensor& p = s.params[k];
    const int64_t size = p.numel() * static_cast<int64_t>(p.element_size());
    const bool fresh = s.buckets.empty() || bytes + size > bucketBytes ||
                       s.params[s.buckets.back().members.front()].scalar_type() != p.scalar_type() ||
                       s.params[s.buckets.back().members.front()].device() != p.device();
    if (fresh) {
      s.buckets.emplace_back();
      bytes = 0;
    }
    s.buckets.back().members.push_back(k);
    s.bucketOf[k] = s.buckets.size() - 1;
    bytes += size;
  }
  for (size_t k = 0; k < s.params.size(); ++k)
    torch::autograd::impl::set_post_acc_grad_hooks(s.params[k], std::make_unique<AccumulatedHook>(m_state, k));
}

GradReducer::~GradReducer() {
  for (const auto& p : m_state->params) torch::autograd::impl::set_post_acc_grad_hooks(p, nullptr);
}

void GradReducer::arm() {
  std::lock_guard<std::mutex> lock(m_state->mutex);
  State& s = *m_state;
  s.armed = true;
  s.nextLaunch = 0;
  for (auto& b : s.buckets) b.ready = 0;
}

void GradReducer::finish(int64_t step) {
  State& s = *m_state;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.armed = false;
    if (s.error) std::rethrow_exception(std::exchange(s.error, nullptr));
    // What the hooks did not start (all of it on a rank that had no
    // backward pass this step): in bucket order, as on every rank.
    for (auto& b : s.buckets)
      if (!b.work) s.launch(b);
  }
  torch::NoGradGuard noGrad;
  const std::string what = "the gradient all-reduce of step " + std::to_string(step);
  for (auto& b : s.buckets) {
    s.group.wait(b.work, what);
    b.work.reset();
    int64_t at = 0;
    for (size_t m : b.members) {
      torch::Tensor& p = s.params[m];
      const int64_t n = p.numel();
      torch::Tensor reduced = b.flat.slice(0, at, at + n).view(p.sizes());
      at += n;
      if (p.grad().defined())
        p.mutable_grad().copy_(reduced);
      else
        p.mutable_grad() = reduced.clone();
    }
    b.flat.reset();
  }
}

size_t GradReducer::buckets() const { return m_state->buckets.size(); }

}  // namespace studio
