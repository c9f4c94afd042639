// The settings reference (docs/settings.md), written from the schema
// (settings_schema.cpp) so that it cannot drift from it:
//   settings_reference            prints it
//   settings_reference --check F  exits 1, naming the first differing line,
//                                 when F is not what it would print
// `make docs` rewrites docs/settings.md; the test docs_settings_reference
// runs the check.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "studio/settings_schema.h"
#include "studio/train_config.h"

namespace {

using studio::FieldType;

std::string typeName(FieldType t) {
  switch (t) {
    case FieldType::Text:
      return "text";
    case FieldType::Folder:
      return "folder";
    case FieldType::File:
      return "file";
    case FieldType::DataPath:
      return "folder or file";
    case FieldType::Int:
      return "whole number";
    case FieldType::Real:
      return "number";
    case FieldType::Bool:
      return "true/false";
    case FieldType::Choice:
      return "choice";
    case FieldType::Size:
      return "[height, width]";
    case FieldType::TextList:
      return "list of names";
  }
  return "";
}

// A table cell: no line breaks, and a | that does not end the cell.
std::string cell(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\n')
      out += ' ';
    else if (ch == '|')
      out += "\\|";
    else
      out += ch;
  }
  return out;
}

std::string code(const std::string& s) { return s.empty() ? "" : "`" + s + "`"; }

std::string reference() {
  const nlohmann::json defaults = studio::toJson(studio::TrainConfig{});
  std::ostringstream md;
  md << "# Settings reference\n\n"
        "Written by `tools/settings_reference.cpp` from the schema "
        "(`engine/core/config/settings_schema.cpp`): do not edit it by hand; `make docs` writes it again, "
        "and the test `docs_settings_reference` fails when it is out of date. How settings files, presets and "
        "`--set` work: [the user guide](user-guide.md#settings).\n\n"
        "\"Applies\" says when a setting is read; set elsewhere, the window notes under the field, the fork "
        "dialog and the CLI's `--set` say that it has no effect (an image augmentation set on a table is an "
        "error instead). \"Fork\" says whether a fork may change it (what the weights are bound to, it may "
        "not), \"search\" whether a search may sample it (`--space`, the window's Search dialog).\n";
  for (const std::string& group : studio::settingsGroups()) {
    md << "\n## " << group << "\n\n"
       << "| setting | type | default | values | applies | fork, search | what it does |\n"
       << "| --- | --- | --- | --- | --- | --- | --- |\n";
    for (const auto& f : studio::settingsSchema()) {
      if (f.group != group) continue;
      std::string values;
      if (!f.choices.empty()) {
        for (size_t i = 0; i < f.choices.size(); ++i) values += (i ? ", " : "") + code(f.choices[i]);
      } else if (f.range) {
        values = f.range->rule();
        if (values.rfind("must be ", 0) == 0) values = values.substr(8);
      }
      const auto at = nlohmann::json::json_pointer(studio::jsonPointer(f.path));
      const std::string def = defaults.contains(at) ? defaults.at(at).dump() : "";
      md << "| `" << f.path << "` | " << typeName(f.type) << " | " << cell(code(def)) << " | " << cell(values) << " | "
         << cell((f.appliesWhen.empty() ? "always" : f.appliesWhen) +
                 (f.imagesOnly.empty() ? "" : "; set on a table: an error"))
         << " | " << (f.forks ? "fork" : "") << (f.forks && studio::settingSearchable(f) ? ", " : "")
         << (studio::settingSearchable(f) ? "search" : "") << " | " << cell("**" + f.label + "**: " + f.tip) << " |\n";
    }
  }
  return md.str();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string text = reference();
  if (argc == 1) {
    std::cout << text;
    return 0;
  }
  if (argc != 3 || std::string(argv[1]) != "--check") {
    std::cerr << "usage: settings_reference [--check FILE]\n";
    return 2;
  }
  std::ifstream in(argv[2]);
  if (!in) {
    std::cerr << argv[2] << ": cannot be read\n";
    return 2;
  }
  std::stringstream have;
  have << in.rdbuf();
  if (have.str() == text) return 0;
  std::istringstream a(have.str()), b(text);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = static_cast<bool>(std::getline(a, la)), gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb) break;
    if (!ga || !gb || la != lb) {
      std::cerr << argv[2] << " is out of date with the schema at line " << line
                << ":\n  file:   " << (ga ? la : "(ends)") << "\n  schema: " << (gb ? lb : "(ends)")
                << "\nRun `make docs` to write it again.\n";
      break;
    }
  }
  return 1;
}
