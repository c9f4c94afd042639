#pragma once
// What every labels file the studio edits shares (studio/label_store.h's
// classes, studio/box_label_store.h's boxes; issue 62, item 2):
//  - one editor at a time: a flock on <labels>.lock, released however the
//    holder ends; a second is refused naming the process that holds it;
//  - a journal beside it (<labels>.journal): each change a JSON object on a
//    line, appended and fsynced before append() returns, read back on open
//    (a line a kill cut short is left out: the change in flight);
//  - the file's bytes as last read or written, to see another program's edits.
// Torch-free. Thread: one thread at a time.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studio/file_io.h"

namespace studio {

// An image's name in a labels file (a CSV row, a COCO file_name, a journal
// line): relative to the labelled folder and inside it, no absolute path
// and no ".." part, so that opening, training on and exporting the labels
// never reach a file outside the folder or write outside the export's (a
// labels file from elsewhere is data, not a command). requireNameInFolder
// throws InputError: `where`, then what is wrong; a journal line naming
// such an image is left out as a torn line is.
bool nameInFolder(const std::string& file);
void requireNameInFolder(const std::string& file, const std::string& where);

// Who made a label (the files' made_by): person, accepted (a proposal taken)
// or corrected (a proposal changed). Throws InputError: `where` (when
// given), then the value that is none of them.
void requireKnownMaker(const std::string& madeBy, const std::string& where = {});

class LabelJournal {
 public:
  // Locks labelsFile and reads its journal; throws InputError when another
  // window or program holds it (`what`: "labels file", "boxes file").
  LabelJournal(const std::string& labelsFile, const std::string& what);
  ~LabelJournal();
  LabelJournal(const LabelJournal&) = delete;
  LabelJournal& operator=(const LabelJournal&) = delete;

  // The journal's changes as it was opened, oldest first.
  const std::vector<nlohmann::json>& replayed() const { return m_replayed; }
  void append(const nlohmann::json& change);
  int64_t pending() const { return m_pending; }
  // The labels file written whole (atomically) with every change; the
  // journal emptied.
  void writeFile(const std::string& bytes);
  // The labels file's bytes ("" when missing), and whether they differ from
  // those last read or written.
  std::string fileBytes() const;
  const std::string& bytesRead() const { return m_read; }
  bool changedOnDisk() const { return fileBytes() != m_read; }
  std::string journalPath() const { return m_path + ".journal"; }

 private:
  std::string m_path;
  int m_lock = -1;
  AppendFile m_journal;
  std::vector<nlohmann::json> m_replayed;
  std::string m_read;
  int64_t m_pending = 0;
};

}  // namespace studio
