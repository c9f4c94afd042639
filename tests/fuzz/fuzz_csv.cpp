// CSV tables: quoting, delimiters, headers, ragged rows, numbers; the label
// column chosen by name, by index and as the last one.
#include "fuzz_input.h"
#include "studio/csv_table.h"
#include "studio/errors.h"

using namespace studio;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputFile file(data, size);
  try {
    const CsvTable t = readCsvTable(file.path());
    for (const std::string& label : {std::string(), std::string("0"), std::string("label"), std::string("7")}) {
      try {
        const TableColumns cols = selectColumns(t, label, {"1"});
        const NumericTable n = numericTable(t, cols);
        if (static_cast<int64_t>(n.x.size()) != n.rows * n.features) std::abort();
        (void)classNamesOf(n.labelText);
      } catch (const DataError&) {
      }
    }
  } catch (const DataError&) {
  }
  return 0;
}
