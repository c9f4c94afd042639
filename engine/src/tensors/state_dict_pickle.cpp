// readTorchSaveStateDict: torch.save's zip archive, its data.pkl read by a
// pickle machine of the few opcodes and globals a state dict uses
// (tensors/weights_file.h says why LibTorch's unpickler is not used).
#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>

#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "studio/errors.h"
#include "tensors/bytes_reader.h"
#include "tensors/weights_file.h"

namespace studio {
namespace {

// A value on the machine's stack. Owned by the machine's arena, so that a
// list appended to itself is no leak.
struct Value {
  enum class Kind { None, Bool, Int, Float, Str, Tuple, List, Dict, Global, Tensor, Mark };
  Kind kind = Kind::None;
  int64_t i = 0;
  double f = 0;
  std::string s;                                // Str, Global ("module.name")
  std::vector<Value*> items;                    // Tuple, List
  std::vector<std::pair<Value*, Value*>> dict;  // Dict, in insertion order
  torch::Tensor tensor;
};

const std::map<std::string, torch::ScalarType>& storageTypes() {
  static const std::map<std::string, torch::ScalarType> types = {
      {"torch.FloatStorage", torch::kFloat32}, {"torch.DoubleStorage", torch::kFloat64},
      {"torch.HalfStorage", torch::kFloat16},  {"torch.BFloat16Storage", torch::kBFloat16},
      {"torch.LongStorage", torch::kInt64},    {"torch.IntStorage", torch::kInt32},
      {"torch.ShortStorage", torch::kInt16},   {"torch.CharStorage", torch::kInt8},
      {"torch.ByteStorage", torch::kUInt8},    {"torch.BoolStorage", torch::kBool}};
  return types;
}

class Machine {
 public:
  Machine(const std::string& pickle, caffe2::serialize::PyTorchStreamReader& reader, std::string path)
      : m_p(pickle), m_reader(reader), m_path(std::move(path)) {}

  Value* run() {
    constexpr size_t kMaxValues = 50'000'000;
    while (true) {
      if (m_arena.size() > kMaxValues) fail("has more values than any state dict");
      const uint8_t op = byte();
      switch (op) {
        case 0x80:
          byte();
          break;  // PROTO
        case 0x95:
          take(8);
          break;  // FRAME
        case '.':
          return pop();  // STOP
        case '(':
          push(make(Value::Kind::Mark));
          break;  // MARK
        case 'N':
          push(make(Value::Kind::None));
          break;
        case 0x88:
        case 0x89: {  // NEWTRUE, NEWFALSE
          Value* v = make(Value::Kind::Bool);
          v->i = op == 0x88;
          push(v);
          break;
        }
        case 'K':
          pushInt(byte());
          break;  // BININT1
        case 'M':
          pushInt(static_cast<int64_t>(le(2)));
          break;  // BININT2
        case 'J':
          pushInt(static_cast<int32_t>(le(4)));
          break;      // BININT
        case 0x8a: {  // LONG1
          const size_t n = byte();
          if (n > 8) fail("holds an integer wider than 64 bits");
          uint64_t u = n ? le(n) : 0;
          if (n && n < 8 && (u >> (8 * n - 1)) & 1) u |= ~uint64_t{0} << (8 * n);  // sign-extend
          pushInt(static_cast<int64_t>(u));
          break;
        }
        case 'G': {  // BINFLOAT, big-endian
          uint64_t u = 0;
          for (int k = 0; k < 8; ++k) u = (u << 8) | byte();
          Value* v = make(Value::Kind::Float);
          std::memcpy(&v->f, &u, 8);
          push(v);
          break;
        }
        case 'X':
          pushStr(take(le(4)));
          break;  // BINUNICODE
        case 0x8c:
          pushStr(take(byte()));
          break;     // SHORT_BINUNICODE
        case 'c': {  // GLOBAL
          Value* v = make(Value::Kind::Global);
          std::string module = line(), name = line();
          v->s = module + "." + name;
          push(v);
          break;
        }
        case '}':
          push(make(Value::Kind::Dict));
          break;
        case ']':
          push(make(Value::Kind::List));
          break;
        case ')':
          push(make(Value::Kind::Tuple));
          break;
        case 't': {
          Value* v = make(Value::Kind::Tuple);
          v->items = popToMark();
          push(v);
          break;
        }
        case 0x85:
        case 0x86:
        case 0x87: {  // TUPLE1-3
          Value* v = make(Value::Kind::Tuple);
          v->items.resize(op - 0x84);
          for (size_t k = v->items.size(); k-- > 0;) v->items[k] = pop();
          push(v);
          break;
        }
        case 'q':
          memo(byte());
          break;  // BINPUT
        case 'r':
          memo(le(4));
          break;  // LONG_BINPUT
        case 0x94:
          memo(m_memo.size());
          break;  // MEMOIZE
        case 'h':
          push(memoGet(byte()));
          break;  // BINGET
        case 'j':
          push(memoGet(le(4)));
          break;     // LONG_BINGET
        case 'a': {  // APPEND
          Value* item = pop();
          expect(top(), Value::Kind::List, "APPEND")->items.push_back(item);
          break;
        }
        case 'e': {  // APPENDS
          std::vector<Value*> items = popToMark();
          Value* list = expect(top(), Value::Kind::List, "APPENDS");
          list->items.insert(list->items.end(), items.begin(), items.end());
          break;
        }
        case 's': {  // SETITEM
          Value* value = pop();
          Value* key = pop();
          expect(top(), Value::Kind::Dict, "SETITEM")->dict.emplace_back(key, value);
          break;
        }
        case 'u': {  // SETITEMS
          std::vector<Value*> items = popToMark();
          if (items.size() % 2) fail("is damaged (a SETITEMS of an odd count)");
          Value* d = expect(top(), Value::Kind::Dict, "SETITEMS");
          for (size_t k = 0; k < items.size(); k += 2) d->dict.emplace_back(items[k], items[k + 1]);
          break;
        }
        case 'b': {  // BUILD
          pop();     // the state: a state dict's _metadata, a tensor's Python attributes; not needed
          const Value* obj = top();
          if (obj->kind != Value::Kind::Dict && obj->kind != Value::Kind::Tensor)
            fail("sets the state of something other than a dict or a tensor");
          break;
        }
        case 'Q':
          push(persistent(pop()));
          break;     // BINPERSID
        case 'R': {  // REDUCE
          Value* args = expect(pop(), Value::Kind::Tuple, "REDUCE");
          Value* callable = expect(pop(), Value::Kind::Global, "REDUCE");
          push(reduce(callable->s, args->items));
          break;
        }
        default: {
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02x", op);
          fail(std::string("uses the pickle opcode ") + hex + ", which a state dict never does; it is not read");
        }
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw ModelError("model.weights " + m_path + " " + what); }
  uint8_t byte() {
    if (m_pos >= m_p.size()) fail("is truncated (its pickle ends early)");
    return static_cast<uint8_t>(m_p[m_pos++]);
  }
  uint64_t le(size_t n) {
    uint64_t u = 0;
    for (size_t k = 0; k < n; ++k) u |= static_cast<uint64_t>(byte()) << (8 * k);
    return u;
  }
  std::string take(uint64_t n) {
    if (n > m_p.size() - m_pos) fail("is truncated (a string runs past the end of its pickle)");
    std::string s = m_p.substr(m_pos, n);
    m_pos += n;
    return s;
  }
  std::string line() {
    const size_t end = m_p.find('\n', m_pos);
    if (end == std::string::npos || end - m_pos > 256) fail("is damaged (a global's name is not terminated)");
    std::string s = m_p.substr(m_pos, end - m_pos);
    m_pos = end + 1;
    return s;
  }
  Value* make(Value::Kind kind) {
    m_arena.push_back(std::make_unique<Value>());
    m_arena.back()->kind = kind;
    return m_arena.back().get();
  }
  void push(Value* v) {
    if (m_stack.size() > 1'000'000) fail("nests deeper than any state dict");
    m_stack.push_back(v);
  }
  void pushInt(int64_t i) {
    Value* v = make(Value::Kind::Int);
    v->i = i;
    push(v);
  }
  void pushStr(std::string s) {
    Value* v = make(Value::Kind::Str);
    v->s = std::move(s);
    push(v);
  }
  Value* top() {
    if (m_stack.empty() || m_stack.back()->kind == Value::Kind::Mark) fail("is damaged (its pickle's stack runs out)");
    return m_stack.back();
  }
  Value* pop() {
    Value* v = top();
    m_stack.pop_back();
    return v;
  }
  std::vector<Value*> popToMark() {
    size_t k = m_stack.size();
    while (k > 0 && m_stack[k - 1]->kind != Value::Kind::Mark) --k;
    if (k == 0) fail("is damaged (a MARK is missing in its pickle)");
    std::vector<Value*> items(m_stack.begin() + static_cast<std::ptrdiff_t>(k), m_stack.end());
    m_stack.resize(k - 1);
    return items;
  }
  Value* expect(Value* v, Value::Kind kind, const char* op) {
    if (v->kind != kind) fail(std::string("is damaged (its pickle's ") + op + " finds the wrong kind of value)");
    return v;
  }
  void memo(uint64_t id) {
    if (id > 10'000'000) fail("is damaged (a memo index out of range)");
    m_memo[id] = top();
  }
  Value* memoGet(uint64_t id) {
    auto it = m_memo.find(id);
    if (it == m_memo.end()) fail("is damaged (it refers to a memo entry it never stored)");
    return it->second;
  }
  int64_t integer(const Value* v, const char* what) {
    if (v->kind != Value::Kind::Int) fail(std::string("is damaged (") + what + " is not an integer)");
    return v->i;
  }

  // ('storage', torch.<Type>Storage, key, location, numel): the record data/<key>.
  Value* persistent(Value* pid) {
    expect(pid, Value::Kind::Tuple, "BINPERSID");
    const auto& a = pid->items;
    if (a.size() != 5 || a[0]->kind != Value::Kind::Str || a[0]->s != "storage" || a[1]->kind != Value::Kind::Global ||
        a[2]->kind != Value::Kind::Str)
      fail("refers to something other than a tensor's storage");
    auto type = storageTypes().find(a[1]->s);
    if (type == storageTypes().end()) fail("holds a storage of type " + a[1]->s + ", which is not read");
    const int64_t numel = integer(a[4], "a storage's size");
    Value* v = make(Value::Kind::Tensor);
    auto cached = m_storages.find(a[2]->s);
    if (cached != m_storages.end()) {
      v->tensor = cached->second;
      return v;
    }
    const std::string record = "data/" + a[2]->s;
    if (a[2]->s.empty() || a[2]->s.find('/') != std::string::npos || !m_reader.hasRecord(record))
      fail("lacks its record " + record + " (it is truncated or damaged)");
    // The entry's size as the archive declares it, compared with the pickle's
    // before anything is inflated; then inflated into the tensor itself, never
    // past it (a zip bomb is refused before it takes any memory).
    const size_t size = m_reader.getRecordSize(record);
    const size_t element = c10::elementSize(type->second);
    if (numel < 0 || static_cast<uint64_t>(numel) > (uint64_t{1} << 40) ||
        static_cast<uint64_t>(numel) * element != size)
      fail("is damaged: record " + record + " holds " + std::to_string(size) + " bytes, not the " +
           std::to_string(numel) + " elements its pickle says");
    torch::Tensor t = torch::empty({numel}, torch::TensorOptions().dtype(type->second));
    if (size && m_reader.getRecord(record, t.data_ptr(), size) != size)
      fail("is damaged: record " + record + " inflates to other than its " + std::to_string(size) + " bytes");
    m_storages[a[2]->s] = t;
    v->tensor = t;
    return v;
  }

  std::vector<int64_t> ints(const Value* v, const char* what) {
    if (v->kind != Value::Kind::Tuple) fail(std::string("is damaged (") + what + " is not a tuple)");
    std::vector<int64_t> out;
    for (const Value* x : v->items) out.push_back(integer(x, what));
    return out;
  }

  Value* reduce(const std::string& callable, const std::vector<Value*>& args) {
    if (callable == "collections.OrderedDict") return make(Value::Kind::Dict);
    if (callable == "torch._utils._rebuild_parameter") {
      if (args.empty() || args[0]->kind != Value::Kind::Tensor) fail("is damaged (a parameter without its tensor)");
      return args[0];
    }
    if (callable == "torch._utils._rebuild_tensor_v2") {
      if (args.size() < 4 || args[0]->kind != Value::Kind::Tensor) fail("is damaged (a tensor without its storage)");
      const torch::Tensor& storage = args[0]->tensor;
      const int64_t offset = integer(args[1], "a tensor's offset");
      const std::vector<int64_t> size = ints(args[2], "a tensor's size"), stride = ints(args[3], "a tensor's stride");
      if (size.size() != stride.size() || size.size() > 16) fail("is damaged (a tensor's size and stride differ)");
      // The last element it reaches must lie in the storage.
      int64_t last = offset, numel = 1;
      bool bad = offset < 0;
      for (size_t k = 0; k < size.size() && !bad; ++k) {
        if (size[k] < 0 || stride[k] < 0 || size[k] > (int64_t{1} << 40) || stride[k] > (int64_t{1} << 40)) {
          bad = true;
          break;
        }
        // Checked before multiplying: two sizes of 2^40 would overflow.
        if (size[k] != 0 && numel > (int64_t{1} << 40) / size[k]) {
          bad = true;
          break;
        }
        numel *= size[k];
        if (size[k] > 0) last += (size[k] - 1) * stride[k];
      }
      if (bad || (numel > 0 && last >= storage.numel()))
        fail("is damaged: a tensor reaches past its storage of " + std::to_string(storage.numel()) + " elements");
      Value* v = make(Value::Kind::Tensor);
      v->tensor = numel == 0 ? torch::empty(size, storage.options()) : storage.as_strided(size, stride, offset);
      return v;
    }
    fail("holds a " + callable +
         ", which a state dict of tensors never does; it is not read (weights are read as data only)");
  }

  const std::string& m_p;
  size_t m_pos = 0;
  caffe2::serialize::PyTorchStreamReader& m_reader;
  std::string m_path;
  std::vector<std::unique_ptr<Value>> m_arena;
  std::vector<Value*> m_stack;
  std::map<uint64_t, Value*> m_memo;
  std::map<std::string, torch::Tensor> m_storages;
};

// The state dict in `root`: itself, or the dict under a checkpoint's usual keys.
const Value* stateDictIn(const Value* root) {
  if (root->kind != Value::Kind::Dict) return nullptr;
  bool tensors = false;
  for (const auto& [k, v] : root->dict) tensors = tensors || v->kind == Value::Kind::Tensor;
  if (tensors) return root;
  for (const char* key : {"state_dict", "model_state_dict", "model"})
    for (const auto& [k, v] : root->dict)
      if (k->kind == Value::Kind::Str && k->s == key && v->kind == Value::Kind::Dict) return stateDictIn(v);
  return nullptr;
}

}  // namespace

NamedTensors readTorchSaveStateDict(const std::string& bytes, const std::string& path) {
  BytesReader adapter(bytes);
  const std::string name = "model.weights " + path;
  try {
    caffe2::serialize::PyTorchStreamReader reader(
        std::shared_ptr<caffe2::serialize::ReadAdapterInterface>(&adapter, [](auto*) {}));
    if (!reader.hasRecord("data.pkl"))
      throw ModelError(name + " is a zip archive but not one torch.save wrote (it has no data.pkl)");
    // Two entries of one name: LibTorch would read the first, Python's zipfile the last. Never guess which.
    std::set<std::string> seen;
    for (const auto& record : reader.getAllRecords())
      if (!seen.insert(record).second)
        throw ModelError(name + " holds two entries named " + record +
                         "; torch.save never writes that, and readers disagree on which is meant: it is refused");
    if (reader.hasRecord("byteorder")) {
      auto [ptr, size] = reader.getRecord("byteorder");
      if (std::string(static_cast<const char*>(ptr.get()), size) != "little")
        throw ModelError(name + " was saved on a big-endian machine, which is not read");
    }
    for (const char* code : {"constants.pkl", "bytecode.pkl"})
      if (reader.hasRecord(code))
        throw ModelError(name +
                         " is a TorchScript module (torch.jit.save), not a state dict: use it as "
                         "model.kind torchscript, or save model.state_dict() with torch.save");
    auto [ptr, size] = reader.getRecord("data.pkl");
    const std::string pickle(static_cast<const char*>(ptr.get()), size);
    Machine machine(pickle, reader, path);
    const Value* dict = stateDictIn(machine.run());
    if (!dict)
      throw ModelError(name +
                       " holds no state dict (a dict of named tensors, as torch.save(model.state_dict(), "
                       "path) writes)");
    NamedTensors out;
    for (const auto& [k, v] : dict->dict) {
      if (v->kind != Value::Kind::Tensor) continue;
      if (k->kind != Value::Kind::Str) throw ModelError(name + " names a tensor by something other than a string");
      out.emplace_back(k->s, v->tensor);
    }
    return out;
  } catch (const c10::Error& e) {
    // LibTorch's zip reader's words, without its plea for a better message.
    std::string why = e.what_without_backtrace();
    if (const size_t plea = why.find("Could this error message be improved?"); plea != std::string::npos)
      why = why.substr(0, plea);
    while (!why.empty() && (why.back() == ' ' || why.back() == '\n' || why.back() == '.')) why.pop_back();
    throw ModelError(name + " is truncated or damaged: its zip archive cannot be read (" + why +
                     "); save the weights again, or download the file again");
  }
}

}  // namespace studio
