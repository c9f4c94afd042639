#pragma once
// A choice setting's value: one enumerator of its enum, with the names that
// settings.json, the form and the messages use generated from the same
// list (STUDIO_CHOICE below). Code compares with the enum
// (`c.optimizer.kind == OptimizerKind::sgd`); comparing with a string does
// not compile, so a misspelt choice cannot. A name that is none of the
// choices (a settings file's typo) is kept as written, for validate() to
// name with the list; no code acts on it. Torch-free.
// Thread: plain data.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace studio {

namespace choice_detail {
constexpr std::size_t count(std::string_view list) {
  std::size_t n = 1;
  for (char ch : list) n += ch == ',';
  return n;
}
// "auto_, on, off" -> {"auto", "on", "off"}: a trailing underscore lets a
// C++ keyword be a choice.
template <std::size_t N>
constexpr std::array<std::string_view, N> split(std::string_view list) {
  std::array<std::string_view, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    while (!list.empty() && (list.front() == ' ' || list.front() == '\n')) list.remove_prefix(1);
    const std::size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\n')) name.remove_suffix(1);
    if (!name.empty() && name.back() == '_') name.remove_suffix(1);
    out[i] = name;
    list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
  }
  return out;
}
}  // namespace choice_detail

// `enum class Name { ... }` and its names, in the order the form lists them.
#define STUDIO_CHOICE(Name, ...)                                                                  \
  enum class Name { __VA_ARGS__ };                                                                \
  inline constexpr auto k##Name##Names =                                                          \
      ::studio::choice_detail::split<::studio::choice_detail::count(#__VA_ARGS__)>(#__VA_ARGS__); \
  constexpr const auto& choiceNames(Name) { return k##Name##Names; }

// The same where a name is no C++ identifier ("early-stopped"): the names
// as one string, in the enumerators' order, one for each.
#define STUDIO_CHOICE_NAMED(Name, names, ...)                                                                          \
  enum class Name { __VA_ARGS__ };                                                                                     \
  static_assert(::studio::choice_detail::count(names) == ::studio::choice_detail::count(#__VA_ARGS__),                 \
                #Name ": one name for each enumerator");                                                               \
  inline constexpr auto k##Name##Names = ::studio::choice_detail::split<::studio::choice_detail::count(names)>(names); \
  constexpr const auto& choiceNames(Name) { return k##Name##Names; }

// What every choice member shares, whatever its enum: the schema's reader,
// writer and checks go through this.
class ChoiceValue {
 public:
  // The value's name, or the unknown name as it was given.
  std::string name() const { return known() ? std::string(m_names[m_index]) : m_unknown; }
  bool known() const { return m_index >= 0; }
  // By name; a name that is none of the choices is kept as given.
  void setName(std::string_view name) {
    for (std::size_t i = 0; i < m_count; ++i)
      if (m_names[i] == name) {
        m_index = static_cast<int>(i);
        m_unknown.clear();
        return;
      }
    m_index = -1;
    m_unknown = std::string(name);
  }
  std::vector<std::string> names() const { return {m_names, m_names + m_count}; }
  bool operator==(const ChoiceValue& other) const {
    return m_names == other.m_names && m_index == other.m_index && m_unknown == other.m_unknown;
  }

 protected:
  ChoiceValue(const std::string_view* names, std::size_t count, int index)
      : m_names(names), m_count(count), m_index(index) {}
  const std::string_view* m_names;
  std::size_t m_count;
  int m_index;
  std::string m_unknown;
};

template <class E>
class Choice : public ChoiceValue {
 public:
  Choice(E value = E{})  // NOLINT: a choice is its enumerator
      : ChoiceValue(choiceNames(E{}).data(), choiceNames(E{}).size(), static_cast<int>(value)) {}
  Choice& operator=(E value) {
    m_index = static_cast<int>(value);
    m_unknown.clear();
    return *this;
  }
  // Only for a known value (every validated setting's).
  E value() const { return static_cast<E>(m_index); }
  friend bool operator==(const Choice& a, E b) { return a.m_index == static_cast<int>(b); }
  bool operator==(const Choice& other) const { return ChoiceValue::operator==(other); }
  // Compare with the enum: a string could be misspelt.
  bool operator==(const char*) const = delete;
  bool operator==(const std::string&) const = delete;
};

// "a, b or c", for messages.
inline std::string listText(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s;
}
// The names a choice may take, so.
inline std::string namesText(const ChoiceValue& choice) { return listText(choice.names()); }

// In messages a choice reads as its name ("task.kind " + c.task.kind).
inline std::string operator+(std::string text, const ChoiceValue& choice) { return text += choice.name(); }
inline std::string operator+(const ChoiceValue& choice, const std::string& text) { return choice.name() + text; }

// In JSON (nlohmann's to_json, found by argument-dependent lookup) a
// choice is its name, as settings.json has it.
template <class Json>
void to_json(Json& j, const ChoiceValue& choice) {
  j = choice.name();
}

// The enumerator of this name; none for a name that is none of them (a
// file's word read back).
template <class E>
std::optional<E> choiceNamed(std::string_view name) {
  const auto& names = choiceNames(E{});
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<E>(i);
  return std::nullopt;
}

// The name of an enumerator of a choice.
template <class E>
std::string nameOf(E value) {
  return std::string(choiceNames(E{})[static_cast<std::size_t>(value)]);
}

}  // namespace studio
