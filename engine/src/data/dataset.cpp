#include "data/dataset.h"

namespace studio {
namespace {

torch::Tensor int64s(const std::vector<int64_t>& v) {
  return torch::from_blob(const_cast<int64_t*>(v.data()), {static_cast<int64_t>(v.size())}, torch::kInt64).clone();
}

}  // namespace

ExampleSet::ExampleSet(torch::Tensor pool, std::vector<int64_t> rows, std::vector<int64_t> labels)
    : m_pool(std::move(pool)), m_rows(int64s(rows)), m_labels(int64s(labels)) {}

ExampleSet::ExampleSet(torch::Tensor pool, std::vector<int64_t> rows, torch::Tensor targets)
    : m_pool(std::move(pool)), m_rows(int64s(rows)), m_labels(std::move(targets)) {}

Examples ExampleSet::gather(const torch::Tensor& idx) const {
  return {m_pool.index_select(0, m_rows.index_select(0, idx)), m_labels.index_select(0, idx)};
}

Examples ExampleSet::slice(int64_t start, int64_t end) const {
  return {m_pool.index_select(0, m_rows.slice(0, start, end)), m_labels.slice(0, start, end)};
}

int64_t ExampleSet::bytes() const {
  int64_t per = m_pool.element_size();
  for (int64_t d = 1; d < m_pool.dim(); ++d) per *= m_pool.size(d);
  return per * size();
}

std::shared_ptr<Dataset> onDevice(std::shared_ptr<Dataset> set, const torch::Device& device) {
  if (set->device() == device) return set;
  Examples e = set->all();
  return std::make_shared<TensorSet>(Examples{e.x.to(device), e.y.to(device)});
}

}  // namespace studio
